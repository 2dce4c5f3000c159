"""attn_forward_varlen through the ctypes binding (python/attn_jit/_capi.py's
AttnVarlenArgs) on NumPy arrays: the runtime's host path.

Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -v
A small ragged batch (a sequence without queries, one without keys, Nq_b <
Nk_b and > Nk_b) with GQA, packed as (total, H, D); each sequence against
test_variants_host.reference run on it alone (float64), O and LSE (H,
total_q) poisoned with NaN. It checks the struct layout end to end: a field
at a wrong offset gives an error or wrong numbers.
"""
import ctypes
import unittest

import numpy as np

from attn_jit import _capi
from test_numpy_host import SEED, TOL
from test_variants_host import reference

LENS_Q = [3, 0, 40, 17, 1]
LENS_K = [5, 9, 12, 0, 30]
H, HKV, D = 4, 2, 16


def run(mask, q, k, v, cu_q, cu_k):
    total_q, total_k = q.shape[0], k.shape[0]
    o = np.full_like(q, np.nan)
    lse = np.full((H, total_q), np.nan, np.float32)
    a = _capi.AttnVarlenArgs()
    f = a.fwd
    f.q, f.k, f.v, f.o, f.lse = (x.ctypes.data for x in (q, k, v, o, lse))
    f.batch, f.heads, f.kv_heads, f.head_dim = len(LENS_Q), H, HKV, D
    f.seqlen_q, f.seqlen_k = total_q, total_k
    f.dtype, f.device, f.mask = _capi.DTYPE_F32, _capi.DEVICE_HOST, mask
    a.cu_seqlens_q = cu_q.ctypes.data
    a.cu_seqlens_k = cu_k.ctypes.data
    a.max_seqlen_q, a.max_seqlen_k = max(LENS_Q), max(LENS_K)
    lib = _capi.library()
    lib.lib.attn_set_varlen_strides.argtypes = [ctypes.POINTER(_capi.AttnVarlenArgs)]
    lib.lib.attn_set_varlen_strides(ctypes.byref(a))
    lib.forward_varlen(a)
    return o, lse


class VarlenHostTest(unittest.TestCase):
    def test_ragged_batch_per_sequence(self):
        rng = np.random.default_rng(SEED)
        cu_q = np.concatenate([[0], np.cumsum(LENS_Q)]).astype(np.int32)
        cu_k = np.concatenate([[0], np.cumsum(LENS_K)]).astype(np.int32)
        q = rng.standard_normal((cu_q[-1], H, D)).astype(np.float32)
        k = rng.standard_normal((cu_k[-1], HKV, D)).astype(np.float32)
        v = rng.standard_normal((cu_k[-1], HKV, D)).astype(np.float32)
        for mask, name in ((_capi.MASK_NONE, "none"), (_capi.MASK_CAUSAL, "causal"),
                           (_capi.MASK_CAUSAL_BOTTOM_RIGHT, "bottom_right")):
            o, lse = run(mask, q, k, v, cu_q, cu_k)
            for b in range(len(LENS_Q)):
                qs = q[cu_q[b]:cu_q[b + 1]].transpose(1, 0, 2)[None]
                ks = k[cu_k[b]:cu_k[b + 1]].transpose(1, 0, 2)[None]
                vs = v[cu_k[b]:cu_k[b + 1]].transpose(1, 0, 2)[None]
                ref_o, ref_lse = reference(qs, ks, vs, mask=name)
                got_o = o[cu_q[b]:cu_q[b + 1]].transpose(1, 0, 2)[None]
                got_lse = lse[:, cu_q[b]:cu_q[b + 1]][None]
                with self.subTest(mask=name, sequence=b):
                    np.testing.assert_allclose(got_o, ref_o, atol=TOL[np.float32], rtol=0)
                    np.testing.assert_allclose(got_lse, ref_lse, atol=TOL[np.float32], rtol=0)


if __name__ == "__main__":
    unittest.main()
