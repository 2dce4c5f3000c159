"""Variable-length batches on NumPy arrays (the runtime's host path):
attn_forward_varlen through the ctypes binding (VarlenHostTest), and the
package's attn_jit.attention_varlen (the other classes).

Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -v
VarlenHostTest: a small ragged batch (a sequence without queries, one without keys, Nq_b <
Nk_b and > Nk_b) with GQA, packed as (total, H, D); each sequence against
test_variants_host.reference run on it alone (float64), O and LSE (H,
total_q) poisoned with NaN. It checks the struct layout end to end: a field
at a wrong offset gives an error or wrong numbers.
"""
import ctypes
import unittest
from unittest import mock

import numpy as np

import attn_jit
from attn_jit import _capi, _core, _numpy
from test_numpy_host import SEED, TOL, misaligned
from test_variants_host import Case, alibi, reference

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


# --- attn_jit.attention_varlen --------------------------------------------------
# Each sequence against test_variants_host.reference run on it alone
# (float64; causal is bottom-right per sequence, FlashAttention's), outputs
# poisoned with NaN (Case). Lengths 0, 1 and up to 300 on either side.

RAGGED_Q = [1, 0, 300, 37, 5, 64, 0, 129]
RAGGED_K = [1, 7, 250, 0, 5, 300, 3, 64]


def cu_seqlens(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


class Varlen(Case):
    def packed(self, lens_q, lens_k, H, Hkv, D, dtype=np.float32):
        """q (total_q, H, D), k, v (total_k, Hkv, D), cu_seqlens_q, cu_seqlens_k."""
        return (self.randn(sum(lens_q), H, D, dtype=dtype), self.randn(sum(lens_k), Hkv, D, dtype=dtype),
                self.randn(sum(lens_k), Hkv, D, dtype=dtype), cu_seqlens(lens_q), cu_seqlens(lens_k))

    def assertSequences(self, q, k, v, cu_q, cu_k, causal=False, enable_gqa=None, what="", **kw):
        """attention_varlen with the keywords kw against the reference per
        sequence (kw's variants as the reference takes them, for sequence b:
        kw_of(b)); returns (O, LSE)."""
        ref_kw = {n: kw[n] for n in ("window", "prefix_len", "softcap", "alibi_slopes", "scale") if n in kw}
        mods = kw.pop("reference_mods", None)
        if enable_gqa is None:
            enable_gqa = q.shape[1] != k.shape[1]
        lens_q, lens_k = np.diff(cu_q), np.diff(cu_k)
        o, lse = attn_jit.attention_varlen(q, k, v, cu_q, cu_k, int(lens_q.max()), int(lens_k.max()),
                                           causal=causal, enable_gqa=enable_gqa, return_lse=True, **kw)
        H, D = q.shape[1], q.shape[2]
        self.assertEqual((o.shape, o.dtype, lse.shape, lse.dtype), ((q.shape[0], H, D), q.dtype,
                                                                      (H, q.shape[0]), np.float32))
        self.assertTrue(o.flags.c_contiguous and lse.flags.c_contiguous)
        for b in range(len(lens_q)):
            rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
            qs, ks, vs = (x[r].transpose(1, 0, 2)[None] for x, r in ((q, rows), (k, keys), (v, keys)))
            if mods is not None:
                ref_o, ref_lse = mods(b, qs, ks, vs)
            else:
                ref_o, ref_lse = reference(qs, ks, vs, "bottom_right" if causal else "none", **ref_kw)
            self.assertMatches(o[rows].transpose(1, 0, 2)[None], lse[:, rows][None], ref_o, ref_lse, q.dtype,
                               f"{what} sequence {b} (Nq {lens_q[b]}, Nk {lens_k[b]}) causal={causal}")
        return o, lse

    def assertError(self, cls, pattern, q, k, v, cu_q, cu_k, max_q, max_k, **kw):
        with self.assertRaisesRegex(cls, pattern) as ctx:
            attn_jit.attention_varlen(q, k, v, cu_q, cu_k, max_q, max_k, **kw)
        self.assertIsInstance(ctx.exception, attn_jit.AttnJitError)
        return ctx.exception


class VarlenNumerics(Varlen):
    def test_ragged_gqa_causal_and_not(self):
        for H, Hkv in ((4, 4), (4, 2), (6, 1)):
            q, k, v, cu_q, cu_k = self.packed(RAGGED_Q, RAGGED_K, H, Hkv, 32)
            for causal in (False, True):
                self.assertSequences(q, k, v, cu_q, cu_k, causal=causal, what=f"H={H} Hkv={Hkv}")

    def test_scale_and_float16(self):
        q, k, v, cu_q, cu_k = self.packed([17, 0, 40], [33, 5, 40], 2, 2, 64)
        self.assertSequences(q, k, v, cu_q, cu_k, causal=True, scale=-0.3)
        q, k, v = (x.astype(np.float16) for x in (q, k, v))
        self.assertSequences(q, k, v, cu_q, cu_k, causal=True, what="float16")

    def test_one_sequence_is_attention(self):
        # B = 1 with Nq = Nk: attention() on the same rows, top-left causal
        # being bottom-right then.
        q, k, v, cu_q, cu_k = self.packed([70], [70], 2, 2, 16)
        o, lse = attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 70, 70, causal=True, return_lse=True)
        o4, lse4 = attn_jit.attention(*(x.transpose(1, 0, 2)[None] for x in (q, k, v)), causal=True,
                                      return_lse=True)
        np.testing.assert_allclose(o, o4[0].transpose(1, 0, 2), atol=TOL[np.float32], rtol=0)
        np.testing.assert_allclose(lse, lse4[0], atol=TOL[np.float32], rtol=0)

    def test_variants(self):
        q, k, v, cu_q, cu_k = self.packed(RAGGED_Q, RAGGED_K, 4, 2, 32)
        for causal, kw in ((True, dict(window=(16, 0))), (False, dict(window=(8, 4))),
                           (True, dict(window=(None, 3))), (True, dict(prefix_len=5)),
                           (False, dict(softcap=2.0)), (True, dict(alibi_slopes=alibi(4))),
                           (True, dict(window=(32, 0), softcap=5.0, alibi_slopes=alibi(4)))):
            self.assertSequences(q, k, v, cu_q, cu_k, causal=causal, what=str(sorted(kw)), **kw)

    def test_python_mods_see_the_sequence(self):
        # b is the sequence: a per-sequence score offset changes each row's
        # LSE by exactly that offset; q_idx and kv_idx are positions in it.
        offsets = np.array([0.5, -1.0, 2.0, 0.25, 3.0], np.float32)

        def score_mod(score, b, h, q_idx, kv_idx):
            return score + offsets[b]

        def mask_mod(b, h, q_idx, kv_idx):
            return q_idx - kv_idx < 4

        def mods(b, qs, ks, vs):
            o, lse = reference(qs, ks, vs, "none", window=(3, None))
            return o, lse + offsets[b]
        q, k, v, cu_q, cu_k = self.packed([9, 0, 30, 1, 12], [9, 4, 30, 6, 0], 2, 2, 16)
        self.assertSequences(q, k, v, cu_q, cu_k, score_mod=score_mod, mask_mod=mask_mod, reference_mods=mods)

    def test_lengths_are_data(self):
        # New lengths and maxima (the same totals and B) reuse the plan and the kernel.
        q, k, v, cu_q, cu_k = self.packed([10, 20, 30], [30, 20, 10], 2, 2, 16)
        self.assertSequences(q, k, v, cu_q, cu_k, causal=True)
        before = attn_jit.stats()
        with mock.patch.object(_core, "prepare_varlen", wraps=_core.prepare_varlen) as prepare:
            self.assertSequences(q, k, v, cu_seqlens([30, 0, 30]), cu_seqlens([1, 58, 1]), causal=True)
        self.assertEqual(prepare.call_count, 0)
        self.assertEqual(attn_jit.stats()["compiles"], before["compiles"])

    def test_rows_of_no_sequence_are_not_written(self):
        # cu_seqlens_q ends before the packed rows: the last rows stay as allocated (NaN here).
        q, k, v, cu_q, cu_k = self.packed([5, 6], [5, 6], 2, 2, 16)
        q = np.concatenate([q, self.randn(3, 2, 16)])
        o, lse = attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 6, 6, return_lse=True)
        self.assertTrue(np.isnan(o[11:]).all() and np.isnan(lse[:, 11:]).all())
        self.assertTrue(np.isfinite(o[:11]).all() and np.isfinite(lse[:, :11]).all())


class VarlenLayouts(Varlen):
    def test_packed_qkv_slices_are_read_in_place(self):
        # FlashAttention's packed qkv (total, 3, H, D): q, k, v are strided views.
        lens = [7, 0, 50, 1]
        qkv = self.randn(sum(lens), 3, 4, 32)
        cu = cu_seqlens(lens)
        with mock.patch.object(_numpy, "contiguous", wraps=_numpy.contiguous) as copy:
            self.assertSequences(qkv[:, 0], qkv[:, 1], qkv[:, 2], cu, cu, causal=True)
        self.assertEqual(copy.call_count, 0)

    def test_unreadable_layouts_are_copied(self):
        lens_q, lens_k = [7, 0, 50], [9, 3, 20]
        q, k, v, cu_q, cu_k = self.packed(lens_q, lens_k, 2, 2, 16)
        cases = {"non-unit innermost stride": (self.randn(sum(lens_q), 2, 32)[:, :, ::2], k, v),
                 "negative strides": (q, k[::-1], v[:, ::-1]),
                 "misaligned": (misaligned(q), k, v),
                 "byte-swapped": (q, k.astype(k.dtype.newbyteorder()), v)}
        for what, (qq, kk, vv) in cases.items():
            with mock.patch.object(_numpy, "contiguous", wraps=_numpy.contiguous) as copy:
                self.assertSequences(qq, kk, vv, cu_q, cu_k, what=what)
                self.assertSequences(qq, kk, vv, cu_q, cu_k, what=what + " (cached)")
            self.assertGreater(copy.call_count, 0, what)

    def test_offsets_as_lists_and_views(self):
        q, k, v, cu_q, cu_k = self.packed([4, 9], [6, 2], 2, 2, 16)
        self.assertSequences(q, k, v, cu_q.tolist(), list(cu_k))
        self.assertSequences(q, k, v, np.repeat(cu_q, 2)[::2], misaligned(cu_k))


class VarlenErrors(Varlen):
    """Each check, on a call of a signature that is cached and one that is not."""

    def setUp(self):
        super().setUp()
        self.q, self.k, self.v, self.cu_q, self.cu_k = self.packed([3, 5], [4, 6], 4, 2, 16)
        self.args = (self.q, self.k, self.v, self.cu_q, self.cu_k, 5, 6)

    def refused(self, cls, pattern, *args, **kw):
        args = args + self.args[len(args):]
        kw.setdefault("enable_gqa", True)
        attn_jit.attention_varlen(*self.args, enable_gqa=True)   # the signature is cached
        for _ in range(2):
            self.assertError(cls, pattern, *args, **kw)

    def test_shapes(self):
        q, k, v = self.q, self.k, self.v
        self.refused(attn_jit.InvalidArgumentError, r"q has shape \(8, 64\): .*attention_varlen takes 3-D",
                     q.reshape(8, 64))
        self.refused(attn_jit.InvalidArgumentError, r"k has shape \(1, 10, 2, 16\)", q, k[None])
        self.refused(attn_jit.InvalidArgumentError, r"must agree in \(total_k, Hkv\)", q, k, v[:9])
        self.refused(attn_jit.InvalidArgumentError, r"q has head dim 16, k has 8", q, k[..., :8], v[..., :8])
        self.refused(attn_jit.UnsupportedError, r"v has head dim 8, q and k have 16", q, k, v[..., :8])
        self.refused(attn_jit.InvalidArgumentError, r"pass enable_gqa=True", enable_gqa=False)
        # kv heads not dividing heads: the runtime's check
        self.refused(attn_jit.InvalidArgumentError, r"divide", q[:, :3])

    def test_dtypes_and_arrays(self):
        q, k, v = self.q, self.k, self.v
        self.refused(attn_jit.InvalidArgumentError, r"one dtype", q, k.astype(np.float16))
        self.refused(attn_jit.UnsupportedError, r"dtype float64 is not supported",
                     *(x.astype(np.float64) for x in (q, k, v)))
        with self.assertRaisesRegex(TypeError, r"attention_varlen takes NumPy arrays .* k is a list"):
            attn_jit.attention_varlen(q, k.tolist(), v, self.cu_q, self.cu_k, 5, 6, enable_gqa=True)

    def test_offsets(self):
        cu_q, cu_k = self.cu_q, self.cu_k
        self.refused(attn_jit.InvalidArgumentError, r"cu_seqlens_q must be int32 \(as .*\); got int64",
                     *self.args[:3], cu_q.astype(np.int64))
        self.refused(attn_jit.InvalidArgumentError, r"cu_seqlens_k must be int32 .*got float64",
                     *self.args[:4], [0.0, 4.0, 10.0])
        self.refused(attn_jit.InvalidArgumentError, r"cu_seqlens_q has shape \(1,\): must be \(B \+ 1,\)",
                     *self.args[:3], cu_q[:1], cu_k[:1])
        self.refused(attn_jit.InvalidArgumentError, r"cu_seqlens_k has shape \(1, 3\)",
                     *self.args[:4], cu_k[None])
        self.refused(attn_jit.InvalidArgumentError, r"cu_seqlens_q has 3 offsets and cu_seqlens_k 2",
                     *self.args[:4], cu_k[:2])
        self.refused(attn_jit.InvalidArgumentError, r"cu_seqlens_q: not an array",
                     *self.args[:3], [0, [1, 2]])
        # Their values: the runtime's host checks.
        for bad, pattern in (([1, 3, 8], r"cu_seqlens_q\[0\] = 1: the offsets must start at 0"),
                             ([0, 5, 3], r"must not decrease"),
                             ([0, 4, 9], r"past the 8 packed rows"),
                             ([0, 0, 8], r"sequence 1 has 8 rows in cu_seqlens_q, more than max_seqlen_q")):
            self.refused(attn_jit.InvalidArgumentError, pattern, *self.args[:3], np.array(bad, np.int32))

    def test_maxima(self):
        for max_q, max_k, pattern in ((9, 6, r"max_seqlen_q = 9: must be in \[0, 8\] \(q's packed rows\)"),
                                      (5, -1, r"max_seqlen_k = -1: must be in \[0, 10\]"),
                                      (5.0, 6, r"max_seqlen_q must be an int; got float"),
                                      (5, None, r"max_seqlen_k must be an int; got NoneType"),
                                      (4, 6, r"sequence 1 has 5 rows in cu_seqlens_q, more than")):
            self.refused(attn_jit.InvalidArgumentError, pattern, *self.args[:5], max_q, max_k)
        attn_jit.attention_varlen(*self.args[:5], np.int64(5), np.int32(6), enable_gqa=True)  # NumPy ints

    def test_variants(self):
        self.refused(attn_jit.UnsupportedError, r"document_ids is not supported by attention_varlen",
                     document_ids=np.zeros(8, np.int32))
        self.refused(attn_jit.UnsupportedError, r"bias is not supported by attention_varlen",
                     bias=np.zeros((8, 10), np.float32))
        self.refused(attn_jit.InvalidArgumentError, r"prefix_len needs causal=True", prefix_len=2)
        self.refused(attn_jit.InvalidArgumentError, r"alibi_slopes has shape \(2,\); expected \(4,\)",
                     alibi_slopes=alibi(2))
        self.refused(attn_jit.InvalidArgumentError, r"softcap = -1.0", softcap=-1.0)
        self.refused(attn_jit.InvalidArgumentError, r"window must be a pair", window=3)
        self.refused(attn_jit.InvalidArgumentError, r"cannot be combined with softcap",
                     softcap=2.0, score_mod=lambda s, b, h, i, j: s)


if __name__ == "__main__":
    unittest.main()
