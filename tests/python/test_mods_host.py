"""Variants written in Python (score_mod / mask_mod traced by attn_jit._mods)
on NumPy arrays: the traced MLIR text, results against float64 NumPy written
from the functions' meaning, captured arrays whose values change without a
recompile, and what the tracer cannot express as TraceError naming it.

Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -v
(ctest's `python`). Needs NumPy, not torch.
"""
import math
import unittest

import numpy as np

import attn_jit
from attn_jit import _mods
from test_numpy_host import SEED, TOL, softmax_times

B, H, N, D = 2, 3, 70, 32


def data(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((B, H, N, D)).astype(np.float32) for _ in range(3)]


def reference(q, k, v, score, seen):
    """float64 O with score(s, h, i, j) on the scaled scores and seen(h, i, j)."""
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k.astype(np.float64)) / math.sqrt(D)
    i = np.arange(N)[:, None]
    j = np.arange(N)[None, :]
    hs = np.arange(H)[:, None, None]
    s = score(s, hs, i, j)
    s = np.where(seen(hs, i, j), s, -np.inf)
    o, _ = softmax_times(s, v.astype(np.float64))
    return o


def err(o, ref):
    return float(np.abs(o - ref).max() / np.abs(ref).max())


# Module globals a mod reads are captures too (as closure variables are).
SLOPES = np.array([2.0 ** (-8 * (h + 1) / H) for h in range(H)], np.float32)


def alibi_softcapped(s, b, h, q_idx, kv_idx):
    x = s + SLOPES[h] * (kv_idx - q_idx)
    return 20.0 * attn_jit.tanh(x / 20.0)


class TracedModsTest(unittest.TestCase):
    def test_traced_text(self):
        def mask(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (q_idx - kv_idx < 16)
        text, arrays = _mods.trace(alibi_softcapped, mask)
        self.assertEqual(len(arrays), 1)
        self.assertIs(arrays[0], SLOPES)
        for line in ["func.func @score_mod(%score: f32, %b: index, %h: index, %q_idx: index, "
                     "%kv_idx: index, %c0: memref<?xf32, strided<[?], offset: ?>>) -> f32 {",
                     "memref.load %c0[%h] : memref<?xf32, strided<[?], offset: ?>>",
                     "arith.subi %kv_idx, %q_idx : index", "arith.sitofp", "math.tanh",
                     "func.func @mask_mod(%b: index, %h: index, %q_idx: index, %kv_idx: index, "
                     "%c0: memref<?xf32, strided<[?], offset: ?>>) -> i1 {",
                     "arith.cmpi sle, %kv_idx, %q_idx : index", "arith.andi", "return"]:
            self.assertIn(line, text)

    def test_score_and_mask_against_float64(self):
        q, k, v = data(SEED)
        window = 9

        def local(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (q_idx - kv_idx <= window)
        o = attn_jit.attention(q, k, v, score_mod=alibi_softcapped, mask_mod=local)
        ref = reference(
            q, k, v,
            lambda s, h, i, j: 20.0 * np.tanh((s + SLOPES[h].astype(np.float64) * (j - i)) / 20.0),
            lambda h, i, j: (j <= i) & (i - j <= window))
        self.assertLess(err(o, ref), TOL[np.float32] * 10)

    def test_captured_table_changes_without_recompile(self):
        q, k, v = data(SEED + 1)
        table = np.random.default_rng(SEED).standard_normal((H, 2 * N)).astype(np.float32)

        def relative(s, b, h, q_idx, kv_idx):
            return s + table[h, kv_idx - q_idx + N]
        o = attn_jit.attention(q, k, v, score_mod=relative, causal=True)
        ref = reference(q, k, v, lambda s, h, i, j: s + table.astype(np.float64)[h, j - i + N],
                        lambda h, i, j: j <= i)
        self.assertLess(err(o, ref), TOL[np.float32] * 10)
        compiles = attn_jit.stats()["compiles"]
        table[...] *= 2
        o2 = attn_jit.attention(q, k, v, score_mod=relative, causal=True)
        ref2 = reference(q, k, v, lambda s, h, i, j: s + table.astype(np.float64)[h, j - i + N],
                         lambda h, i, j: j <= i)
        self.assertLess(err(o2, ref2), TOL[np.float32] * 10)
        self.assertEqual(attn_jit.stats()["compiles"], compiles)

    def test_new_closure_numbers_trace_again(self):
        # Python numbers are constants of the traced text: a new value is a
        # new text (and kernel), never the old one's result.
        q, k, v = data(SEED + 5)
        cap = 20.0

        def capped(s, b, h, q_idx, kv_idx):
            return cap * attn_jit.tanh(s / cap)
        for value in (20.0, 0.5):
            cap = value
            o = attn_jit.attention(q, k, v, score_mod=capped)
            ref = reference(q, k, v, lambda s, h, i, j: value * np.tanh(s / value),
                            lambda h, i, j: np.ones_like(i >= j))
            self.assertLess(err(o, ref), TOL[np.float32] * 10, f"cap = {value}")

    def test_document_ids_as_int32_capture(self):
        q, k, v = data(SEED + 2)
        ids = (np.arange(N) // 13).astype(np.int32)

        def same_doc(b, h, q_idx, kv_idx):
            return ids[q_idx] == ids[kv_idx]
        o = attn_jit.attention(q, k, v, mask_mod=same_doc)
        ref = reference(q, k, v, lambda s, h, i, j: s, lambda h, i, j: ids[i] == ids[j])
        self.assertLess(err(o, ref), TOL[np.float32] * 10)

    def test_where_minimum_maximum(self):
        q, k, v = data(SEED + 3)

        def clipped(s, b, h, q_idx, kv_idx):
            return attn_jit.where(q_idx >= kv_idx, attn_jit.minimum(s, 1.5), attn_jit.maximum(s, -0.5))
        o = attn_jit.attention(q, k, v, score_mod=clipped)
        ref = reference(q, k, v, lambda s, h, i, j: np.where(i >= j, np.minimum(s, 1.5), np.maximum(s, -0.5)),
                        lambda h, i, j: np.ones_like(i >= j))
        self.assertLess(err(o, ref), TOL[np.float32] * 10)

    def test_mods_compute_on_arrays(self):
        # Called with arrays, as FlexAttention calls them, a mod computes with
        # the arrays' library: one function serves both.
        s = np.random.default_rng(SEED).standard_normal((H, N, N))
        h, i, j = np.arange(H)[:, None, None], np.arange(N)[:, None], np.arange(N)[None, :]
        ref = 20.0 * np.tanh((s + SLOPES[h] * (j - i)) / 20.0)
        np.testing.assert_allclose(alibi_softcapped(s, 0, h, i, j), ref, rtol=1e-12)

        def clipped(s, b, h, q_idx, kv_idx):
            return attn_jit.where(q_idx >= kv_idx, attn_jit.minimum(s, 1.5), attn_jit.maximum(s, -0.5))
        np.testing.assert_array_equal(clipped(s, 0, h, i, j),
                                      np.where(i >= j, np.minimum(s, 1.5), np.maximum(s, -0.5)))
        self.assertEqual(attn_jit.exp(0.0), 1.0)   # plain numbers stay plain

    def test_capture_paths(self):
        # Where each captured array is read from, in captured_arrays' order
        # (what torch.compile's path fetches the arrays by).
        table = np.zeros((H, 2 * N), np.float32)

        def relative(s, b, h, q_idx, kv_idx):
            return s + table[h, kv_idx - q_idx + N] + SLOPES[h]

        def alibi_mask(b, h, q_idx, kv_idx):
            return SLOPES[h] * (q_idx - kv_idx) < 4.0
        self.assertEqual(_mods.capture_paths(relative, alibi_mask), ((0, "cell", 0), (0, "global", "SLOPES")))
        self.assertEqual(_mods.capture_paths(None, alibi_mask), ((1, "global", "SLOPES"),))
        arrays = _mods.captured_arrays([relative, alibi_mask])
        self.assertEqual([id(a) for a in arrays], [id(table), id(SLOPES)])

    def test_what_cannot_be_traced_is_named(self):
        q, k, v = data(SEED + 4)
        doubles = np.ones(N, np.float64)
        cases = [
            (lambda s, b, h, q_idx, kv_idx: np.sin(s), "NumPy's sin"),
            (lambda s, b, h, q_idx, kv_idx: s + np.ones(N, np.float32)[q_idx], "only captured arrays"),
            (lambda s, b, h, q_idx, kv_idx: s if q_idx > kv_idx else 0.0, "Python control flow"),
            (lambda s, b, h, q_idx, kv_idx: s.real, "cannot be traced"),
            (lambda s, b, h, q_idx, kv_idx: s + doubles[q_idx], "float32 or int32"),
        ]
        for fn, message in cases:
            with self.assertRaisesRegex(attn_jit.TraceError, message):
                attn_jit.attention(q, k, v, score_mod=fn)
        with self.assertRaisesRegex(attn_jit.TraceError, "must return a condition"):
            attn_jit.attention(q, k, v, mask_mod=lambda b, h, q_idx, kv_idx: q_idx - kv_idx)
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "cannot be combined with softcap"):
            attn_jit.attention(q, k, v, score_mod=alibi_softcapped, softcap=3.0)


if __name__ == "__main__":
    unittest.main()
