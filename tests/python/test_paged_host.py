"""attn_forward_paged through the ctypes binding (python/attn_jit/_capi.py's
AttnPagedArgs) on NumPy arrays: the runtime's host path.

Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -v
A small ragged batch (decode, a few queries, more queries than keys) with
GQA over K/V caches of 16-row pages in a shuffled order, rows of a block
table 3 entries apart; each sequence against test_variants_host.reference
run on its keys gathered back (float64), O and LSE (H, total_q) poisoned
with NaN. It checks the struct layout end to end: a field at a wrong offset
gives an error or wrong numbers.
"""
import ctypes
import unittest

import numpy as np

from attn_jit import _capi, errors
from test_numpy_host import SEED, TOL
from test_variants_host import reference

LENS_Q = [1, 4, 30, 2]
LENS_K = [37, 16, 9, 1]
H, HKV, D, PAGE = 4, 2, 16, 16


class PagedHostTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(SEED)
        self.cu_q = np.concatenate([[0], np.cumsum(LENS_Q)]).astype(np.int32)
        pages = [(n + PAGE - 1) // PAGE for n in LENS_K]
        self.max_pages = max(pages)
        self.num_pages = sum(pages) + 2
        order = rng.permutation(self.num_pages).astype(np.int32)
        self.table = np.full((len(LENS_K), self.max_pages + 3), -1, np.int32)
        self.k = np.full((self.num_pages, PAGE, HKV, D), np.nan, np.float32)
        self.v = np.full_like(self.k, np.nan)
        self.keys, self.values = [], []
        at = 0
        for b, n in enumerate(LENS_K):
            kb = rng.standard_normal((n, HKV, D)).astype(np.float32)
            vb = rng.standard_normal((n, HKV, D)).astype(np.float32)
            self.keys.append(kb)
            self.values.append(vb)
            for j in range(pages[b]):
                page = order[at]
                at += 1
                self.table[b, j] = page
                rows = min(PAGE, n - j * PAGE)
                self.k[page, :rows] = kb[j * PAGE:j * PAGE + rows]
                self.v[page, :rows] = vb[j * PAGE:j * PAGE + rows]
        self.used = np.array(LENS_K, np.int32)
        self.q = rng.standard_normal((self.cu_q[-1], H, D)).astype(np.float32)

    def run_paged(self, mask, page_size=PAGE):
        total_q = self.q.shape[0]
        o = np.full_like(self.q, np.nan)
        lse = np.full((H, total_q), np.nan, np.float32)
        a = _capi.AttnPagedArgs()
        f = a.fwd
        f.q, f.k, f.v, f.o, f.lse = (x.ctypes.data for x in (self.q, self.k, self.v, o, lse))
        f.batch, f.heads, f.kv_heads, f.head_dim = len(LENS_Q), H, HKV, D
        f.seqlen_q = total_q
        f.dtype, f.device, f.mask = _capi.DTYPE_F32, _capi.DEVICE_HOST, mask
        a.cu_seqlens_q, a.max_seqlen_q = self.cu_q.ctypes.data, max(LENS_Q)
        a.block_table, a.max_pages = self.table.ctypes.data, self.max_pages
        a.block_table_stride = self.table.shape[1]
        a.seqused_k = self.used.ctypes.data
        a.num_pages, a.page_size = self.num_pages, page_size
        lib = _capi.library()
        lib.lib.attn_set_paged_strides.argtypes = [ctypes.POINTER(_capi.AttnPagedArgs)]
        lib.lib.attn_set_paged_strides(ctypes.byref(a))
        lib.forward_paged(a)
        return o, lse

    def test_ragged_batch_per_sequence(self):
        for mask, name in ((_capi.MASK_NONE, "none"), (_capi.MASK_CAUSAL, "causal"),
                           (_capi.MASK_CAUSAL_BOTTOM_RIGHT, "bottom_right")):
            o, lse = self.run_paged(mask)
            cu_q = self.cu_q
            for b in range(len(LENS_Q)):
                qs = self.q[cu_q[b]:cu_q[b + 1]].transpose(1, 0, 2)[None]
                ks = self.keys[b].transpose(1, 0, 2)[None]
                vs = self.values[b].transpose(1, 0, 2)[None]
                ref_o, ref_lse = reference(qs, ks, vs, mask=name)
                got_o = o[cu_q[b]:cu_q[b + 1]].transpose(1, 0, 2)[None]
                got_lse = lse[:, cu_q[b]:cu_q[b + 1]][None]
                with self.subTest(mask=name, sequence=b):
                    np.testing.assert_allclose(got_o, ref_o, atol=TOL[np.float32], rtol=0)
                    np.testing.assert_allclose(got_lse, ref_lse, atol=TOL[np.float32], rtol=0)

    def test_unsupported_page_size(self):
        with self.assertRaises(errors.UnsupportedError) as caught:
            self.run_paged(_capi.MASK_NONE, page_size=24)
        self.assertIn("page_size = 24", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
