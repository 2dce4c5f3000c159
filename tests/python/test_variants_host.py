"""Attention variants of attn_jit (window, prefix_len, document_ids,
alibi_slopes, bias, softcap) on NumPy arrays: the runtime's host path.

Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -v
(ctest's `python` runs it with test_numpy_host.py, whose seed, tolerances and
library lookup it shares: ATTN_TEST_SEED=S replays, ATTN_JIT_LIB picks the
library). Needs NumPy, not torch.

The reference is float64 NumPy written from the header's semantics alone:
the full score matrix scale * q.k, plus alibi_slopes[h] * (j - i), plus
bias[i, j], soft-capped; masks: j <= i + shift (or j < prefix_len) for a
causal mask, -left <= j - (i + shift) <= right for a window (negative or None
bound: unbounded), q_ids[i] == kv_ids[j]; softmax over what is left; a row
that sees no key gives O = 0 and LSE = -inf. Outputs are poisoned with NaN
before every call. The public API has top-left causal only; bottom-right
cases call attn_forward directly (through ctypes) with the variant the
package builds.
"""
import sys
import unittest
from unittest import mock

import numpy as np

import attn_jit
from attn_jit import _capi, _core, _numpy
from test_numpy_host import SEED, TOL, misaligned, softmax_times

SHAPES = [(2, 3, 3, 70, 70, 32), (1, 2, 2, 77, 133, 64), (1, 2, 2, 133, 77, 64)]   # B, H, Hkv, Nq, Nk, D


def setUpModule():
    print(f"\n# test_variants_host: seed {SEED} (ATTN_TEST_SEED={SEED} replays); "
          f"{attn_jit.library_path()} version {attn_jit.version()}", file=sys.stderr)


def reference(q, k, v, mask="none", scale=None, window=None, prefix_len=None, softcap=None,
              alibi_slopes=None, q_doc_ids=None, kv_doc_ids=None, bias=None):
    """float64 O (B, H, Nq, D) and LSE (B, H, Nq). mask: "none", "causal"
    (top-left) or "bottom_right"; K/V head h // (H // Hkv)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    B, H, Nq, D = q.shape
    Nk = k.shape[2]
    g = H // max(k.shape[1], 1)
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ k.swapaxes(-1, -2) * (1 / np.sqrt(D) if scale is None else scale)
    i = np.arange(Nq)[:, None]
    j = np.arange(Nk)[None, :]
    if alibi_slopes is not None:
        s = s + np.asarray(alibi_slopes, np.float64)[None, :, None, None] * (j - i)
    if bias is not None:
        s = s + np.asarray(bias, np.float64)
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    shift = Nk - Nq if mask == "bottom_right" else 0
    seen = np.ones((Nq, Nk), bool)
    if mask != "none":
        causal = j <= i + shift
        if prefix_len is not None:
            causal = causal | (j < prefix_len)
        seen &= causal
    if window is not None:
        left, right = window
        d = j - (i + shift)
        if left is not None and left >= 0:
            seen &= d >= -left
        if right is not None and right >= 0:
            seen &= d <= right
    if q_doc_ids is not None:
        seen &= np.asarray(q_doc_ids)[:, None] == np.asarray(kv_doc_ids)[None, :]
    return softmax_times(np.where(seen, s, -np.inf), v)


def alibi(H):
    """The ALiBi paper's slopes 2^(-8 (h + 1) / H), float32."""
    return (2.0 ** (-8.0 * np.arange(1, H + 1) / H)).astype(np.float32)


def _poisoned(real):
    def allocator(shape, order, like, lse):
        new = real(shape, order, like, lse)

        def alloc():
            x = new()
            x.fill(np.nan)
            return x
        return alloc
    return allocator


class Case(unittest.TestCase):
    """Every output the package allocates here starts as NaN (plans built
    under the patch keep the poisoning allocator; plans are cleared before
    and after each test)."""

    rng = np.random.default_rng(SEED + 1)

    def setUp(self):
        _core.local.plans.clear()
        patch = mock.patch.object(_numpy, "allocator", _poisoned(_numpy.allocator))
        patch.start()
        self.addCleanup(patch.stop)
        self.addCleanup(_core.local.plans.clear)

    def randn(self, *shape, dtype=np.float32):
        return self.rng.standard_normal(shape).astype(dtype)

    def qkv(self, B, H, Hkv, Nq, Nk, D, dtype=np.float32, bnhd=False):
        def one(h, n):
            if bnhd:   # (B, N, H, D) memory seen as (B, H, N, D)
                return self.randn(B, n, h, D, dtype=dtype).transpose(0, 2, 1, 3)
            return self.randn(B, h, n, D, dtype=dtype)
        return one(H, Nq), one(Hkv, Nk), one(Hkv, Nk)

    def doc_ids(self, n, ndocs):
        """Packed sequences: ids never decrease (what attn_jit.h requires)."""
        return np.sort(self.rng.integers(0, ndocs, n)).astype(np.int32)

    def assertMatches(self, o, lse, ref_o, ref_lse, dtype, what):
        self.assertEqual(o.shape, ref_o.shape, what)
        self.assertEqual((lse.shape, lse.dtype), (ref_lse.shape, np.float32), what)
        self.assertTrue(np.isfinite(o).all(), f"{what}: O has NaN/inf (an element not written)")
        dead = np.isinf(ref_lse)
        if dead.any():
            np.testing.assert_array_equal(o[dead], 0, f"{what}: rows that see no key must give O = 0")
            np.testing.assert_array_equal(lse[dead], -np.inf, f"{what}: ... and LSE = -inf")
        den = np.linalg.norm(ref_o)
        err = np.linalg.norm(o.astype(np.float64) - ref_o) / (den if den > 0 else 1)
        self.assertLessEqual(err, TOL[np.dtype(dtype).type], f"{what}: rel err {err:.2e} seed {SEED}")
        d = np.abs(lse[~dead] - ref_lse[~dead])
        self.assertTrue((d <= 1e-3 + 3e-5 * np.abs(ref_lse[~dead])).all(),
                        f"{what}: LSE error {d.max() if d.size else 0:.2e} seed {SEED}")

    def assertVariant(self, q, k, v, causal=False, enable_gqa=None, what="", **kw):
        """attn_jit.attention with the variant keywords kw, against the
        reference; returns (O, LSE)."""
        if enable_gqa is None:
            enable_gqa = q.shape[1] != k.shape[1]
        o, lse = attn_jit.attention(q, k, v, causal=causal, enable_gqa=enable_gqa, return_lse=True, **kw)
        ref_o, ref_lse = reference(q, k, v, "causal" if causal else "none", **_ref_kw(kw))
        self.assertMatches(o, lse, ref_o, ref_lse, q.dtype, f"{what} causal={causal} {_show(kw)}")
        return o, lse

    def assertError(self, cls, pattern, q, k, v, **kw):
        with self.assertRaisesRegex(cls, pattern) as ctx:
            attn_jit.attention(q, k, v, **kw)
        self.assertIsInstance(ctx.exception, attn_jit.AttnJitError)
        return ctx.exception


def _ref_kw(kw):
    """The reference's keywords of attention()'s variant keywords."""
    r = {n: kw[n] for n in ("window", "prefix_len", "softcap", "alibi_slopes", "bias") if n in kw}
    docs = kw.get("document_ids")
    if docs is not None:
        r["q_doc_ids"], r["kv_doc_ids"] = docs if type(docs) is tuple else (docs, docs)
    return r


def _show(kw):
    return " ".join(f"{n}={v!r}" if np.isscalar(v) or v is None or type(v) is tuple and np.isscalar(v[0])
                    else f"{n}=<{np.shape(v[0] if type(v) is tuple else v)}>" for n, v in kw.items())


# --- calls of attn_forward itself (bottom-right mask, C-side checks) ----------


def c_forward(q, k, v, mask, var=None, setup=None, scale=0.0):
    """attn_forward on (B, H, N, D) host arrays with attn_mask `mask`, the
    variant filled by the package from `var` (a _core.Variant), then
    setup(args) if given; O and LSE poisoned. Returns (O, LSE), raising the
    errors class of a failed status."""
    q, k, v = (np.ascontiguousarray(x) for x in (q, k, v))
    B, H, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    o = np.full(q.shape, np.nan, q.dtype)
    lse = np.full((B, H, Nq), np.nan, np.float32)
    a = _capi.AttnFwdArgs()
    a.q, a.k, a.v, a.o, a.lse = (x.ctypes.data for x in (q, k, v, o, lse))
    a.batch, a.heads, a.kv_heads = B, H, Hkv
    a.seqlen_q, a.seqlen_k, a.head_dim = Nq, Nk, D
    a.q_strides[:] = a.o_strides[:] = [H * Nq * D, Nq * D, D, 1]
    a.k_strides[:] = a.v_strides[:] = [Hkv * Nk * D, Nk * D, D, 1]
    a.lse_strides[:] = [H * Nq, Nq, 1]
    a.dtype = {np.dtype(np.float32): _capi.DTYPE_F32, np.dtype(np.float16): _capi.DTYPE_F16}[q.dtype]
    a.mask, a.scale, a.device = mask, scale, _capi.DEVICE_HOST
    keep = _core.fill_variant(_numpy, a.variant, var, q, H, Nq, Nk) if var is not None else []
    if setup is not None:
        setup(a)
    _capi.library().forward(a)
    del keep
    return o, lse


# --- numerics -----------------------------------------------------------------


class EachAlone(Case):
    def test_window(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            for window in [(8, 4), (16, 0), (None, 3), (5, None), (0, 0), (-1, 2), (200, 200)]:
                self.assertVariant(q, k, v, window=window, what=f"{Nq}x{Nk}")

    def test_prefix_lm(self):
        # Needs the causal mask (alone it is an error: Errors below).
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            for prefix in (0, 1, 10, Nk // 2, Nk, Nk + 7):
                self.assertVariant(q, k, v, causal=True, prefix_len=prefix, what=f"{Nq}x{Nk}")

    def test_document(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            for ndocs in (1, 4, 7):
                if Nq == Nk:
                    self.assertVariant(q, k, v, document_ids=self.doc_ids(Nq, ndocs), what="one array")
                ids = (self.doc_ids(Nq, ndocs), self.doc_ids(Nk, ndocs))
                self.assertVariant(q, k, v, document_ids=ids, what=f"{Nq}x{Nk} pair")

    def test_document_rows_that_see_nothing(self):
        q, k, v = self.qkv(1, 2, 2, 40, 50, 32)
        # Queries 30.. are in document 9, which no key has (ids stay sorted).
        q_ids = np.concatenate([self.doc_ids(30, 3), np.full(10, 9, np.int32)])
        o, lse = self.assertVariant(q, k, v, document_ids=(q_ids, self.doc_ids(50, 3)))
        self.assertTrue(np.isinf(lse[:, :, 30:]).all())

    def test_alibi(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            self.assertVariant(q, k, v, alibi_slopes=alibi(H), what=f"{Nq}x{Nk}")
            # Any slopes, of either sign (j - i is positive above the diagonal).
            self.assertVariant(q, k, v, alibi_slopes=self.randn(H) * 0.3, what=f"{Nq}x{Nk} random")

    def test_bias(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            self.assertVariant(q, k, v, bias=2 * self.randn(Nq, Nk), what=f"{Nq}x{Nk}")

    def test_bias_layouts(self):
        Nq, Nk = 37, 53
        q, k, v = self.qkv(2, 2, 2, Nq, Nk, 32)
        bias = {
            "transposed": self.randn(Nk, Nq).T,
            "row slice": self.randn(Nq, 2 * Nk)[:, 3:3 + Nk],
            "every other row": self.randn(2 * Nq, Nk)[::2],
            "broadcast (1, Nk)": self.randn(1, Nk),
            "broadcast (Nq, 1)": self.randn(Nq, 1),
            "stride 0": np.broadcast_to(self.randn(Nk), (Nq, Nk)),
            "reversed (copied)": self.randn(Nq, Nk)[::-1],
            "byte-swapped (copied)": self.randn(Nq, Nk).astype(">f4"),
            "misaligned (copied)": misaligned(self.randn(Nq, Nk)),
            "list": self.randn(Nq, Nk).tolist(),
        }
        for name, b in bias.items():
            self.assertVariant(q, k, v, bias=b, what=name)

    def test_softcap(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = (3 * x for x in self.qkv(B, H, Hkv, Nq, Nk, D))   # scores of tens: capping shows
            for cap in (1.0, 5.0, 30.0, 1e4):
                self.assertVariant(q, k, v, softcap=cap, what=f"{Nq}x{Nk}")


class Combinations(Case):
    def test_causal_window(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            for window in [(15, 0), (0, 0), (31, None), (None, 0), (4, 4)]:
                self.assertVariant(q, k, v, causal=True, window=window, what=f"{Nq}x{Nk}")

    def test_window_softcap(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = (3 * x for x in self.qkv(B, H, Hkv, Nq, Nk, D))
            self.assertVariant(q, k, v, window=(20, 5), softcap=10.0, what=f"{Nq}x{Nk}")
            self.assertVariant(q, k, v, causal=True, window=(20, 0), softcap=10.0, what=f"{Nq}x{Nk}")

    def test_document_causal(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            ids = (self.doc_ids(Nq, 5), self.doc_ids(Nk, 5))
            # With Nq != Nk some rows see nothing (their document starts later).
            self.assertVariant(q, k, v, causal=True, document_ids=ids, what=f"{Nq}x{Nk}")

    def test_prefix_lm_causal(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            self.assertVariant(q, k, v, causal=True, prefix_len=Nk // 3, what=f"{Nq}x{Nk}")
            # with a window: the prefix is seen, the window still bounds it
            self.assertVariant(q, k, v, causal=True, prefix_len=Nk // 3, window=(10, 0), what=f"{Nq}x{Nk}")

    def test_alibi_causal(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            self.assertVariant(q, k, v, causal=True, alibi_slopes=alibi(H), what=f"{Nq}x{Nk}")

    def test_bias_softcap(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = (2 * x for x in self.qkv(B, H, Hkv, Nq, Nk, D))
            self.assertVariant(q, k, v, bias=4 * self.randn(Nq, Nk), softcap=8.0, what=f"{Nq}x{Nk}")

    def test_all_at_once(self):
        for B, H, Hkv, Nq, Nk, D in SHAPES:
            q, k, v = (2 * x for x in self.qkv(B, H, Hkv, Nq, Nk, D))
            self.assertVariant(q, k, v, causal=True, window=(25, 0), prefix_len=6, softcap=12.0,
                               alibi_slopes=alibi(H), bias=self.randn(Nq, Nk),
                               document_ids=(self.doc_ids(Nq, 2), self.doc_ids(Nk, 2)), what=f"{Nq}x{Nk}")


class GQA(Case):
    # (B, H, Hkv, Nq, Nk, D): prefill, Nq != Nk, decode-shaped (Nq = 1, 4), MQA
    SHAPES = [(2, 8, 2, 50, 50, 64), (1, 8, 4, 77, 133, 32), (2, 8, 2, 1, 90, 64), (1, 6, 1, 4, 70, 32)]

    def test_alibi(self):
        # The slope is the query head's: each group of H / Hkv heads sharing a
        # K/V head still has distinct slopes.
        for B, H, Hkv, Nq, Nk, D in self.SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            self.assertVariant(q, k, v, alibi_slopes=alibi(H), what=f"H={H} Hkv={Hkv} {Nq}x{Nk}")
            if Nq > 4:
                self.assertVariant(q, k, v, causal=True, alibi_slopes=alibi(H),
                                   what=f"H={H} Hkv={Hkv} {Nq}x{Nk}")

    def test_window(self):
        for B, H, Hkv, Nq, Nk, D in self.SHAPES:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
            self.assertVariant(q, k, v, window=(12, 3), what=f"H={H} Hkv={Hkv} {Nq}x{Nk}")
            if Nq > 4:
                self.assertVariant(q, k, v, causal=True, window=(16, 0), what=f"H={H} Hkv={Hkv} {Nq}x{Nk}")

    def test_others(self):
        B, H, Hkv, Nq, Nk, D = 2, 8, 2, 61, 61, 64
        q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D)
        self.assertVariant(q, k, v, causal=True, document_ids=self.doc_ids(Nq, 3))
        self.assertVariant(q, k, v, causal=True, prefix_len=9)
        self.assertVariant(q, k, v, bias=self.randn(Nq, Nk), softcap=5.0)


class OddShapes(Case):
    def test_lengths_and_dims(self):
        # Lengths that are no multiple of any tile; D odd or small.
        for B, H, Nq, Nk, D in [(1, 2, 77, 133, 24), (2, 1, 133, 77, 40), (1, 3, 1, 65, 16), (1, 2, 129, 1, 8),
                                (1, 1, 200, 257, 5)]:
            q, k, v = self.qkv(B, H, H, Nq, Nk, D)
            self.assertVariant(q, k, v, causal=True, window=(33, 0), alibi_slopes=alibi(H), what=f"{Nq}x{Nk}")
            self.assertVariant(q, k, v, window=(9, 9), bias=self.randn(Nq, Nk), softcap=3.0, what=f"{Nq}x{Nk}")
            self.assertVariant(q, k, v, document_ids=(self.doc_ids(Nq, 3), self.doc_ids(Nk, 3)), what=f"{Nq}x{Nk}")

    def test_window_rows_that_see_nothing(self):
        # Top-left window (0, 0) with Nq > Nk: queries i >= Nk see no key.
        q, k, v = self.qkv(1, 2, 2, 60, 40, 32)
        o, lse = self.assertVariant(q, k, v, window=(0, 0))
        self.assertTrue(np.isinf(lse[:, :, 40:]).all())

    def test_bnhd_layout(self):
        q, k, v = self.qkv(2, 4, 2, 77, 133, 32, bnhd=True)
        with mock.patch.object(_numpy, "contiguous", wraps=_numpy.contiguous) as copy:
            o, _ = self.assertVariant(q, k, v, causal=True, window=(20, 0), alibi_slopes=alibi(4))
        self.assertEqual(copy.call_count, 0)
        self.assertTrue(o.transpose(0, 2, 1, 3).flags["C_CONTIGUOUS"])

    def test_scales(self):
        q, k, v = self.qkv(1, 2, 2, 45, 60, 32)
        # scale multiplies q.k only; 0 (torch's meaning: all q.k terms 0) too.
        for scale in (0.3, -0.7, 0.0):
            o, lse = attn_jit.attention(q, k, v, scale=scale, alibi_slopes=alibi(2), softcap=4.0,
                                        return_lse=True)
            ref = reference(q, k, v, scale=scale, alibi_slopes=alibi(2), softcap=4.0)
            self.assertMatches(o, lse, *ref, np.float32, f"scale={scale}")


class Float16(Case):
    def test_combinations(self):
        for B, H, Hkv, Nq, Nk, D in [(1, 4, 2, 77, 133, 64), (2, 2, 2, 70, 70, 32)]:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D, dtype=np.float16)
            what = f"f16 {Nq}x{Nk}"
            self.assertVariant(q, k, v, causal=True, window=(24, 0), what=what)
            self.assertVariant(q, k, v, window=(10, 10), softcap=5.0, what=what)
            self.assertVariant(q, k, v, causal=True, document_ids=(self.doc_ids(Nq, 4), self.doc_ids(Nk, 4)),
                               what=what)
            self.assertVariant(q, k, v, causal=True, prefix_len=11, what=what)
            self.assertVariant(q, k, v, causal=True, alibi_slopes=alibi(H), what=what)
            self.assertVariant(q, k, v, bias=self.randn(Nq, Nk), softcap=6.0, what=what)


class BottomRight(Case):
    """ATTN_MASK_CAUSAL_BOTTOM_RIGHT (no keyword of the package yet): the
    diagonal of query i is key i + Nk - Nq, the window's too."""

    def check(self, q, k, v, dtype=np.float32, **kw):
        var = _core.variant(**kw)
        o, lse = c_forward(q, k, v, _capi.MASK_CAUSAL_BOTTOM_RIGHT, var)
        ref_kw = _ref_kw(kw)
        self.assertMatches(o, lse, *reference(q, k, v, "bottom_right", **ref_kw), dtype,
                           f"bottom-right {q.shape[2]}x{k.shape[2]} {_show(kw)}")
        return o, lse

    def test_window(self):
        # Nq < Nk (decode with a cache), Nq = Nk, Nq > Nk (rows that see nothing).
        for Nq, Nk in [(77, 133), (1, 133), (64, 64), (133, 77)]:
            q, k, v = self.qkv(1, 4, 2, Nq, Nk, 32)
            for window in [(15, 0), (40, None), (0, 0)]:
                self.check(q, k, v, window=window)

    def test_with_others(self):
        Nq, Nk, H = 77, 133, 4
        q, k, v = self.qkv(2, H, 2, Nq, Nk, 64)
        self.check(q, k, v, window=(31, 0), alibi_slopes=alibi(H))
        self.check(q, k, v, prefix_len=20)
        self.check(q, k, v, prefix_len=20, window=(10, 0))
        self.check(q, k, v, document_ids=(self.doc_ids(Nq, 3), self.doc_ids(Nk, 3)), softcap=5.0)
        self.check(q, k, v, bias=self.randn(Nq, Nk), window=(50, 0))

    def test_float16(self):
        q, k, v = self.qkv(1, 4, 2, 77, 133, 64, dtype=np.float16)
        self.check(q, k, v, dtype=np.float16, window=(31, 0), alibi_slopes=alibi(4))


# --- signatures: the flags select the plan, the values are per call ----------


class Signatures(Case):
    def test_values_change_without_a_new_plan(self):
        q, k, v = self.qkv(1, 2, 2, 50, 64, 32)
        calls = [dict(window=(w, 0)) for w in (3, 10, 40)] + [dict(softcap=c) for c in (1.0, 20.0)] + \
            [dict(alibi_slopes=alibi(2) * s) for s in (1, 3)] + \
            [dict(bias=self.randn(50, 64)) for _ in range(2)] + \
            [dict(document_ids=(self.doc_ids(50, n), self.doc_ids(64, n))) for n in (2, 5)]
        with mock.patch.object(_core, "prepare", wraps=_core.prepare) as prepare:
            for _ in range(2):
                for kw in calls:
                    self.assertVariant(q, k, v, causal=True, **kw)
        # One plan per flag set: window, softcap, alibi, bias, document.
        self.assertEqual(prepare.call_count, 5)
        self.assertEqual(len(_core.local.plans), 5)

    def test_flags_called_alternately(self):
        q, k, v = self.qkv(1, 2, 2, 40, 40, 32)
        b = self.randn(40, 40)
        variants = [{}, dict(window=(5, 0)), dict(softcap=2.0), dict(window=(5, 0), softcap=2.0),
                    dict(bias=b), dict(bias=b, softcap=2.0), dict(alibi_slopes=alibi(2)),
                    dict(prefix_len=7), dict(document_ids=self.doc_ids(40, 3))]
        outs = {}
        for _ in range(2):
            for i, kw in enumerate(variants):
                o, _ = self.assertVariant(q, k, v, causal=True, **kw)
                outs.setdefault(i, o)
                np.testing.assert_array_equal(o, outs[i])
                # and without LSE: another signature of the same flags
                np.testing.assert_array_equal(attn_jit.attention(q, k, v, causal=True, **kw), o)
        self.assertEqual(len({outs[i].tobytes() for i in outs}), len(variants))

    def test_plain_call_after_variants(self):
        q, k, v = self.qkv(1, 2, 2, 30, 30, 32)
        plain = attn_jit.attention(q, k, v)
        attn_jit.attention(q, k, v, window=(2, 2), bias=self.randn(30, 30))
        np.testing.assert_array_equal(attn_jit.attention(q, k, v), plain)
        # window=(None, None) is no window: the plain kernel, the plain result
        np.testing.assert_array_equal(attn_jit.attention(q, k, v, window=(None, None)), plain)

    def test_general_path(self):
        # Operands that need a copy take _core.forward, with the variant too.
        q, k, v = self.qkv(1, 2, 2, 30, 40, 32)
        strided = np.repeat(q, 2, axis=3)[..., ::2]
        for _ in range(2):
            self.assertVariant(strided, k, v, causal=True, window=(6, 0), alibi_slopes=alibi(2))
            self.assertVariant(misaligned(q), k, v, bias=self.randn(30, 40), softcap=3.0)

    def test_new_flags_compile_once(self):
        q, k, v = self.qkv(1, 2, 2, 20, 20, 16)
        attn_jit.attention(q, k, v, causal=True, window=(3, 0), softcap=7.0)
        before = attn_jit.stats()
        for w in (1, 2, 5):
            attn_jit.attention(q, k, v, causal=True, window=(w, 0), softcap=float(w))
        q2 = self.randn(2, 3, 31, 16)
        attn_jit.attention(q2, q2, q2, causal=True, window=(4, 0), softcap=1.5)
        after = attn_jit.stats()
        self.assertEqual(after["compiles"], before["compiles"], "new values or lengths recompiled")


# --- errors -------------------------------------------------------------------


class Errors(Case):
    """The package's checks, made before any call (every call, also for a
    signature already cached)."""

    def test_scalars(self):
        q, k, v = self.qkv(1, 2, 2, 8, 8, 16)
        attn_jit.attention(q, k, v, causal=True, prefix_len=2)   # a cached signature
        for _ in range(2):
            self.assertError(ValueError, r"prefix_len needs causal=True", q, k, v, prefix_len=2)
            self.assertError(attn_jit.InvalidArgumentError, r"prefix_len = -1: must be >= 0", q, k, v,
                             causal=True, prefix_len=-1)
            self.assertError(attn_jit.InvalidArgumentError, r"prefix_len must be an int", q, k, v,
                             causal=True, prefix_len=2.5)
            for cap in (0.0, -1.0, float("inf"), float("nan")):
                self.assertError(attn_jit.InvalidArgumentError, r"softcap = .*: must be finite and > 0", q, k,
                                 v, softcap=cap)
            self.assertError(attn_jit.InvalidArgumentError, "softcap must be a number", q, k, v, softcap="x")
            self.assertError(attn_jit.InvalidArgumentError, r"window must be a pair", q, k, v, window=4)
            self.assertError(attn_jit.InvalidArgumentError, r"window must be a pair", q, k, v, window=(1, 2, 3))
            self.assertError(attn_jit.InvalidArgumentError, r"window's left bound must be an int", q, k, v,
                             window=(1.5, 0))

    def test_alibi_slopes(self):
        q, k, v = self.qkv(1, 4, 2, 8, 8, 16)
        attn_jit.attention(q, k, v, enable_gqa=True, alibi_slopes=alibi(4))
        for _ in range(2):
            self.assertError(attn_jit.InvalidArgumentError, "alibi_slopes must be float32; got float64", q, k,
                             v, enable_gqa=True, alibi_slopes=alibi(4).astype(np.float64))
            self.assertError(attn_jit.InvalidArgumentError, "alibi_slopes must be float32; got int32", q, k, v,
                             enable_gqa=True, alibi_slopes=np.ones(4, np.int32))
            # one slope per query head, not per K/V head
            self.assertError(attn_jit.InvalidArgumentError, r"alibi_slopes has shape \(2,\); expected \(4,\)",
                             q, k, v, enable_gqa=True, alibi_slopes=alibi(2))
            self.assertError(attn_jit.InvalidArgumentError, r"alibi_slopes has shape \(1, 4\); expected",
                             q, k, v, enable_gqa=True, alibi_slopes=alibi(4)[None])
        # A strided view or a list is fine (copied / converted).
        self.assertVariant(q, k, v, alibi_slopes=np.repeat(alibi(4), 2)[::2])
        self.assertVariant(q, k, v, alibi_slopes=alibi(4).tolist())

    def test_document_ids(self):
        q, k, v = self.qkv(1, 2, 2, 8, 12, 16)
        ids8, ids12 = self.doc_ids(8, 2), self.doc_ids(12, 2)
        self.assertError(attn_jit.InvalidArgumentError, r"one array serves Nq == Nk only", q, k, v,
                         document_ids=ids8)
        self.assertError(attn_jit.InvalidArgumentError, r"q_doc_ids must be int32; got int64", q, k, v,
                         document_ids=(ids8.astype(np.int64), ids12))
        self.assertError(attn_jit.InvalidArgumentError, r"kv_doc_ids must be int32; got float32", q, k, v,
                         document_ids=(ids8, ids12.astype(np.float32)))
        self.assertError(attn_jit.InvalidArgumentError, r"kv_doc_ids has shape \(8,\); expected \(12,\)", q,
                         k, v, document_ids=(ids8, ids8.copy()))
        self.assertError(attn_jit.InvalidArgumentError, r"a tuple of two", q, k, v,
                         document_ids=(ids8, ids12, ids12))
        self.assertError(attn_jit.InvalidArgumentError, r"a tuple of two", q, k, v, document_ids=(ids8, None))
        self.assertVariant(q, k, v, document_ids=(ids8.tolist(), ids12.tolist()))   # lists are converted

    def test_bias(self):
        q, k, v = self.qkv(1, 2, 2, 8, 12, 16)
        self.assertError(attn_jit.InvalidArgumentError, r"bias must be float32; got float64", q, k, v,
                         bias=np.zeros((8, 12)))
        self.assertError(attn_jit.InvalidArgumentError, r"bias has shape \(12, 8\); expected \(8, 12\)", q, k,
                         v, bias=self.randn(12, 8))
        self.assertError(attn_jit.InvalidArgumentError, r"bias has shape \(2, 8, 12\)", q, k, v,
                         bias=self.randn(2, 8, 12))
        self.assertError(attn_jit.InvalidArgumentError, r"bias has shape \(12,\)", q, k, v,
                         bias=self.randn(12))


class RuntimeChecks(Case):
    """The runtime's own checks of attn_variant (runtime/lib/Validate.cpp):
    attn_forward called directly with what the package never passes."""

    def assertRefused(self, pattern, setup, mask=_capi.MASK_CAUSAL, Nk=8):
        q, k, v = self.qkv(1, 2, 2, 8, Nk, 16)
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, pattern) as ctx:
            c_forward(q, k, v, mask, setup=setup)
        self.assertEqual(ctx.exception.status, 1)
        self.assertTrue(ctx.exception.message)

    def test_prefix_lm_without_causal_mask(self):
        def setup(a):
            a.variant.flags, a.variant.prefix_len = _capi.VARIANT_PREFIX_LM, 3
        self.assertRefused("(?i)prefix", setup, mask=_capi.MASK_NONE)

    def test_negative_prefix_len(self):
        def setup(a):
            a.variant.flags, a.variant.prefix_len = _capi.VARIANT_PREFIX_LM, -1
        self.assertRefused("(?i)prefix", setup)

    def test_bad_softcap(self):
        for cap in (0.0, -2.0, float("inf"), float("nan")):
            def setup(a, cap=cap):
                a.variant.flags, a.variant.softcap = _capi.VARIANT_SOFTCAP, cap
            self.assertRefused("(?i)softcap", setup)

    def test_missing_pointers(self):
        # A flag set, its array NULL (the document flag: q_doc_ids, or
        # kv_doc_ids where Nq != Nk).
        ids = self.doc_ids(12, 2)
        for pattern, flag, given, Nk in [("(?i)alibi", _capi.VARIANT_ALIBI, {}, 8),
                                         ("(?i)q_doc", _capi.VARIANT_DOCUMENT, {"kv_doc_ids": ids}, 8),
                                         ("(?i)kv_doc", _capi.VARIANT_DOCUMENT, {"q_doc_ids": ids}, 12),
                                         ("(?i)bias", _capi.VARIANT_BIAS, {}, 8)]:
            def setup(a, flag=flag, given=given):
                a.variant.flags = flag
                for name, x in given.items():
                    setattr(a.variant, name, x.ctypes.data)
                a.variant.bias_strides[:] = (8, 1)
            self.assertRefused(pattern, setup, Nk=Nk)

    def test_negative_bias_strides(self):
        bias = self.randn(8, 8)

        def setup(a):
            a.variant.flags, a.variant.bias = _capi.VARIANT_BIAS, bias[-1].ctypes.data
            a.variant.bias_strides[:] = (-8, 1)
        self.assertRefused("(?i)stride", setup)

    def test_unknown_flag(self):
        def setup(a):
            a.variant.flags = 1 << 6
        self.assertRefused("(?i)flag|variant", setup)

    def test_the_package_call_is_accepted(self):
        # The same call with the variant as the package fills it runs.
        q, k, v = self.qkv(1, 2, 2, 8, 8, 16)
        kw = dict(window=(4, 0), prefix_len=3, softcap=2.0, alibi_slopes=alibi(2),
                  document_ids=self.doc_ids(8, 2), bias=self.randn(8, 8))
        o, lse = c_forward(q, k, v, _capi.MASK_CAUSAL, _core.variant(**kw))
        self.assertMatches(o, lse, *reference(q, k, v, "causal", **_ref_kw(kw)), np.float32,
                           "all flags through attn_forward")


if __name__ == "__main__":
    unittest.main()
