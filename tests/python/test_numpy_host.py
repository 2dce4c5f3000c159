"""attn_jit (the Python package) on NumPy arrays: the runtime's host path.

Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -v
(ctest runs it as `python`). Needs NumPy, not torch. Inputs are fresh random
numbers every run; the seed is printed, ATTN_TEST_SEED=S replays it.
Tolerances are docs/testing.md's: ||O - ref|| / ||ref|| <= 1e-5 for float32,
2e-3 for float16; |LSE - ref| <= 1e-3 + 3e-5 |ref|.
"""
import os
import random
import subprocess
import sys
import threading
import unittest
from unittest import mock

import numpy as np

import attn_jit
from attn_jit import _capi, _core, _numpy

SEED = int(os.environ.get("ATTN_TEST_SEED") or random.SystemRandom().randrange(1 << 31))
TOL = {np.float32: 1e-5, np.float16: 2e-3}
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def setUpModule():
    print(f"\n# seed {SEED} (ATTN_TEST_SEED={SEED} replays); {attn_jit.library_path()} "
          f"version {attn_jit.version()}", file=sys.stderr)


def reference(q, k, v, causal=False, scale=None):
    """float64 O (B, H, Nq, D) and LSE (B, H, Nq) of torch's SDPA semantics:
    K/V head h // (H // Hkv), top-left causal mask; a row that sees no key
    gives O = 0, LSE = -inf."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    g = q.shape[1] // max(k.shape[1], 1)
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ k.swapaxes(-1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        nq, nk = s.shape[-2:]
        s = np.where(np.arange(nk)[None, :] <= np.arange(nq)[:, None], s, -np.inf)
    return softmax_times(s, v)


def softmax_times(s, v):
    """float64 softmax(s) @ v and the log-sum-exp of scores `s` whose hidden
    keys are -inf; a row that sees no key gives O = 0, LSE = -inf."""
    m = s.max(axis=-1, keepdims=True, initial=-np.inf)
    m = np.where(np.isinf(m), 0, m)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    o = (p @ v) / np.where(l > 0, l, 1)
    with np.errstate(divide="ignore"):
        lse = np.where(l > 0, m + np.log(l), -np.inf)[..., 0]
    return o, lse


class Case(unittest.TestCase):
    rng = np.random.default_rng(SEED)

    def randn(self, *shape, dtype=np.float32):
        return self.rng.standard_normal(shape).astype(dtype)

    def qkv(self, B, H, Hkv, Nq, Nk, D, dtype=np.float32):
        return self.randn(B, H, Nq, D, dtype=dtype), self.randn(B, Hkv, Nk, D, dtype=dtype), \
            self.randn(B, Hkv, Nk, D, dtype=dtype)

    def assertClose(self, q, k, v, causal=False, scale=None, enable_gqa=False, what=""):
        """Runs attention with LSE and checks both against the float64 reference."""
        o, lse = attn_jit.attention(q, k, v, causal=causal, scale=scale, enable_gqa=enable_gqa,
                                    return_lse=True)
        ref_o, ref_lse = reference(q, k, v, causal, scale)
        self.assertEqual(o.shape, ref_o.shape)
        self.assertEqual(o.dtype, q.dtype.newbyteorder("="))  # native byte order
        self.assertEqual((lse.shape, lse.dtype), (ref_lse.shape, np.float32))
        self.assertTrue(np.isfinite(o).all(), what)
        den = np.linalg.norm(ref_o)
        err = np.linalg.norm(o.astype(np.float64) - ref_o) / (den if den > 0 else 1)
        self.assertLessEqual(err, TOL[q.dtype.type], f"{what} seed {SEED}")
        live = np.isfinite(ref_lse)
        np.testing.assert_array_equal(lse[~live], -np.inf)
        d = np.abs(lse[live] - ref_lse[live])
        self.assertTrue((d <= 1e-3 + 3e-5 * np.abs(ref_lse[live])).all(),
                        f"{what}: LSE error {d.max() if d.size else 0:.2e} seed {SEED}")
        return o

    def assertError(self, cls, pattern, q, k, v, **kw):
        with self.assertRaisesRegex(cls, pattern) as ctx:
            attn_jit.attention(q, k, v, **kw)
        self.assertIsInstance(ctx.exception, attn_jit.AttnJitError)
        return ctx.exception


class Numerics(Case):
    def test_plain(self):
        for B, H, Nq, Nk, D in [(2, 3, 37, 37, 32), (1, 2, 128, 200, 64), (3, 1, 5, 9, 128)]:
            self.assertClose(*self.qkv(B, H, H, Nq, Nk, D), what=f"{B, H, Nq, Nk, D}")

    def test_causal_top_left(self):
        # Nq < Nk, Nq > Nk and Nq = Nk: query i sees keys j <= i, as torch's is_causal.
        for Nq, Nk in [(17, 40), (40, 17), (33, 33), (1, 9)]:
            self.assertClose(*self.qkv(2, 2, 2, Nq, Nk, 64), causal=True, what=f"Nq={Nq} Nk={Nk}")

    def test_gqa_and_mqa(self):
        # Prefill and decode-shaped calls (Nq = 1: the host packs a group's queries).
        for H, Hkv, Nq, Nk, causal in [(8, 2, 30, 50, False), (8, 2, 50, 50, True), (6, 1, 20, 20, True),
                                       (8, 4, 1, 77, False), (16, 1, 1, 64, False), (8, 2, 4, 40, True)]:
            self.assertClose(*self.qkv(2, H, Hkv, Nq, Nk, 64), causal=causal, enable_gqa=True,
                             what=f"H={H} Hkv={Hkv} Nq={Nq} Nk={Nk} causal={causal}")

    def test_scales(self):
        q, k, v = self.qkv(2, 2, 2, 23, 31, 32)
        for scale in (0.3, 1.0, -0.5, -2.0, 1e-3):
            self.assertClose(q, k, v, scale=scale, causal=scale < 0, what=f"scale={scale}")

    def test_scale_zero_is_uniform(self):
        # torch's scale=0: every score 0, O the mean of V (the C API reads 0
        # as 1/sqrt(D); the package passes the smallest normal float instead).
        q, k, v = self.qkv(1, 2, 2, 5, 12, 16)
        o = self.assertClose(q, k, v, scale=0.0)
        np.testing.assert_allclose(o, np.broadcast_to(v.mean(axis=2, keepdims=True), o.shape), rtol=1e-5,
                                   atol=1e-6)

    def test_odd_shapes(self):
        for Nq, Nk, D in [(1, 17, 3), (17, 1, 40), (1, 1, 1), (129, 65, 24), (7, 300, 5)]:
            self.assertClose(*self.qkv(1, 3, 3, Nq, Nk, D), causal=Nq % 2 == 1, what=f"{Nq, Nk, D}")

    def test_float16(self):
        self.assertClose(*self.qkv(2, 4, 2, 50, 70, 64, dtype=np.float16), enable_gqa=True)
        self.assertClose(*self.qkv(1, 2, 2, 33, 33, 32, dtype=np.float16), causal=True)

    def test_large_scores(self):
        # Scores of tens to hundreds: a peaked softmax, no overflow.
        q, k, v = (2 + 4 * x for x in self.qkv(1, 2, 2, 40, 60, 64))
        self.assertClose(q, k, v, causal=True)

    def test_no_queries_or_no_keys(self):
        q, k, v = self.qkv(2, 2, 2, 0, 10, 32)
        self.assertEqual(attn_jit.attention(q, k, v).shape, (2, 2, 0, 32))
        # No keys: O = 0 and LSE = -inf, as the runtime defines it.
        q, k, v = self.qkv(2, 2, 2, 5, 0, 32)
        o, lse = attn_jit.attention(q, k, v, return_lse=True)
        np.testing.assert_array_equal(o, 0)
        np.testing.assert_array_equal(lse, -np.inf)


class Layouts(Case):
    """Strides the C API takes are passed as they are; others are copied."""

    def run_counting_copies(self, q, k, v, **kw):
        with mock.patch.object(_numpy, "contiguous", wraps=_numpy.contiguous) as copy:
            o = self.assertClose(q, k, v, **kw)
        return o, copy.call_count

    def test_bnhd_transposed_without_copy(self):
        B, N, H, D = 2, 33, 4, 32
        q, k, v = (self.randn(B, N, H, D).transpose(0, 2, 1, 3) for _ in range(3))
        o, copies = self.run_counting_copies(q, k, v, causal=True)
        self.assertEqual(copies, 0)
        # O in Q's memory order: (B, N, H, D) memory, so this reshape is free.
        self.assertTrue(o.transpose(0, 2, 1, 3).flags["C_CONTIGUOUS"])

    def test_views_without_copy(self):
        big = self.randn(2, 4, 80, 64)
        q = big[:, :, 5:40]                                   # a slice along N
        k = np.broadcast_to(self.randn(2, 1, 50, 64), (2, 4, 50, 64))   # stride 0 over heads
        v = self.randn(2, 4, 50, 80)[..., :64]                 # rows padded to 80
        o, copies = self.run_counting_copies(q, k, v)
        self.assertEqual(copies, 0)
        self.assertTrue(o.flags["C_CONTIGUOUS"])

    def test_copied_layouts(self):
        base = self.randn(2, 3, 20, 64)
        cases = {
            "innermost stride 2": base[..., ::2],
            "negative stride": base[:, :, ::-1],
            "Fortran order": np.asfortranarray(base),
            "byte-swapped": base.astype(base.dtype.newbyteorder(">")),
            "misaligned": misaligned(base),
        }
        for name, x in cases.items():
            y = self.randn(*x.shape)
            _, copies = self.run_counting_copies(x, y, y)
            self.assertEqual(copies, 1, name)


class SignatureCache(Case):
    """Calls of one signature (shapes, strides, dtypes, flags) share a plan
    built on the first (_core.prepare); a call of another signature must not
    be served by it."""

    def setUp(self):
        _core.local.plans.clear()

    def test_one_plan_per_signature(self):
        q, k, v = self.qkv(1, 2, 2, 9, 9, 16)
        with mock.patch.object(_core, "prepare", wraps=_core.prepare) as prepare:
            for _ in range(3):
                self.assertClose(q, k, v)
                self.assertClose(q, k, v, causal=True)
        # with return_lse (assertClose's calls) and without: 2 x 2 signatures
        for _ in range(2):
            attn_jit.attention(q, k, v)
            attn_jit.attention(q, k, v, causal=True)
        self.assertEqual(prepare.call_count, 2)
        self.assertEqual(len(_core.local.plans), 4)

    def test_shapes_called_alternately(self):
        a = self.qkv(1, 2, 2, 17, 23, 32)
        b = self.qkv(2, 3, 3, 17, 40, 32)
        c = self.qkv(2, 4, 2, 5, 23, 32)   # GQA
        for _ in range(3):
            self.assertClose(*a, what="a")
            self.assertClose(*b, what="b")
            self.assertClose(*c, enable_gqa=True, what="c")
            self.assertEqual(attn_jit.attention(*a).shape, (1, 2, 17, 32))
            self.assertEqual(attn_jit.attention(*c, enable_gqa=True).shape, (2, 4, 5, 32))

    def test_flags_called_alternately(self):
        q, k, v = self.qkv(1, 2, 2, 20, 20, 32)
        outs = {}
        for _ in range(2):
            for causal in (False, True):
                for scale in (None, 0.25, 0.0, -0.5):
                    o = self.assertClose(q, k, v, causal=causal, scale=scale, what=f"{causal} {scale}")
                    self.assertEqual(type(attn_jit.attention(q, k, v, causal=causal, scale=scale)),
                                     np.ndarray)
                    outs.setdefault((causal, scale), o)
                    np.testing.assert_array_equal(o, outs[causal, scale])
        self.assertFalse(np.array_equal(outs[False, None], outs[True, None]))

    def test_layouts_and_dtypes_called_alternately(self):
        # Each variant differs from the plain call in one operand only.
        B, N, H, D = 2, 24, 3, 32
        q, k, v = plain = self.qkv(B, H, H, N, N, D)

        def bnhd(x):  # the same values in (B, N, H, D) memory
            return np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)

        def padded(x):  # the same values in rows padded to 2 D
            y = np.zeros(x.shape[:3] + (2 * D,), x.dtype)
            y[..., :D] = x
            return y[..., :D]

        variants = {"plain": plain, "q (B, N, H, D)": (bnhd(q), k, v), "k (B, N, H, D)": (q, bnhd(k), v),
                    "v (B, N, H, D)": (q, k, bnhd(v)), "q padded": (padded(q), k, v),
                    "k padded": (q, padded(k), v), "v padded": (q, k, padded(v)),
                    # views: the strides of the plain call, other lengths
                    "q shorter": (q[:, :, :N // 2], k, v), "k, v shorter": (q, k[:, :, 1:], v[:, :, 1:]),
                    # the strides in bytes of the plain call, another dtype
                    "q byte-swapped": (q.astype(">f4"), k, v), "k byte-swapped": (q, k.astype(">f4"), v),
                    "v byte-swapped": (q, k, v.astype(">f4")),
                    "float16": tuple(x.astype(np.float16) for x in plain)}
        for _ in range(2):
            for name, (q_, k_, v_) in variants.items():
                o = self.assertClose(q_, k_, v_, causal=True, what=name)
                if name == "q (B, N, H, D)":   # O in Q's memory order
                    o = o.transpose(0, 2, 1, 3)
                self.assertTrue(o.flags["C_CONTIGUOUS"], name)

    def test_misaligned_call_of_a_cached_signature(self):
        # The plan reads operands in place; a misaligned pointer (checked every
        # call) takes the general path, which copies it.
        q, k, v = self.qkv(1, 2, 2, 16, 16, 32)
        bad = misaligned(q)
        for _ in range(2):
            with mock.patch.object(_numpy, "contiguous", wraps=_numpy.contiguous) as copy:
                self.assertClose(q, k, v)
                self.assertEqual(copy.call_count, 0)
                self.assertClose(bad, k, v)
                self.assertEqual(copy.call_count, 1)

    def test_general_signature_copies_every_call(self):
        q, k, v = self.qkv(1, 2, 2, 16, 16, 32)
        strided = np.repeat(q, 2, axis=3)[..., ::2]   # innermost stride 2
        with mock.patch.object(_numpy, "contiguous", wraps=_numpy.contiguous) as copy:
            for n in (1, 2):
                self.assertClose(strided, k, v)
                self.assertEqual(copy.call_count, n)

    def test_bad_signatures_raise_every_call(self):
        # Views with the strides of a call already made, and bad shapes.
        q, k, v = self.qkv(2, 2, 2, 8, 8, 32)
        attn_jit.attention(q, k, v)
        for _ in range(2):
            self.assertError(ValueError, "q has batch 1, k and v have batch 2", q[:1], k, v)
            self.assertError(ValueError, "q has head dim 16, k has 32", q[..., :16], k, v)
            self.assertError(ValueError, "q has head dim 32, k has 16", q, k[..., :16], v)
            self.assertError(attn_jit.UnsupportedError, "Dv != D", q, k, v[..., :16])
            self.assertError(ValueError, r"must agree in \(B, Hkv, Nk\)", q, k, v[:, :, 1:])
            self.assertError(ValueError, r"must agree in \(B, Hkv, Nk\)", q, k[:, :1], v)
        q, k, v = self.qkv(1, 6, 4, 4, 4, 32)
        for _ in range(2):
            self.assertError(ValueError, "pass enable_gqa=True", q, k, v)
            # Validated by the runtime: a plan is built, each of its calls fails.
            self.assertError(attn_jit.InvalidArgumentError, "kv_heads = 4 with heads = 6", q, k, v,
                             enable_gqa=True)
            self.assertError(attn_jit.InvalidArgumentError, "must be finite", q, q, q, scale=float("inf"))
        self.assertClose(q, q, q)

    def test_oldest_plans_are_dropped(self):
        with mock.patch.object(_core, "MAX_PLANS", 3):
            shapes = [(1, 1, n, 8) for n in range(1, 7)]
            for _ in range(2):
                for shape in shapes:
                    x = self.randn(*shape)
                    self.assertClose(x, x, x, what=str(shape))
                    self.assertLessEqual(len(_core.local.plans), 3)

    def test_plans_are_per_thread(self):
        # A plan's arguments are rewritten every call and attn_forward runs
        # without the GIL: each thread builds and uses its own plans.
        q, k, v = self.qkv(1, 2, 2, 24, 24, 16)
        attn_jit.attention(q, k, v)
        main = dict(_core.local.plans)
        inputs = [tuple(x * (t + 1) for x in (q, k, v)) for t in range(3)]
        expected = [reference(*x)[0] for x in inputs]
        seen, errors = [], []

        def work(t):
            for _ in range(20):
                o = attn_jit.attention(*inputs[t])
                err = np.linalg.norm(o - expected[t]) / np.linalg.norm(expected[t])
                if not err <= 1e-5:
                    errors.append((t, err))
            seen.append(dict(_core.local.plans))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual([plans.keys() for plans in seen], [main.keys()] * 3)   # one signature
        plans = [p for d in [main] + seen for p in d.values()]
        self.assertEqual(len({id(p.args) for p in plans}), 4)


def misaligned(x):
    """A copy of x whose data starts one byte past an element boundary."""
    buf = np.frombuffer(bytearray(x.nbytes + 1), dtype=np.uint8)[1:]
    y = buf.view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


class Errors(Case):
    """Bad calls raise AttnJitError subclasses; the runtime's own checks carry
    its message and status."""

    def test_gqa_needs_enable_gqa(self):
        q, k, v = self.qkv(1, 8, 2, 4, 4, 32)
        e = self.assertError(ValueError, "q has 8 heads, k and v have 2: pass enable_gqa=True", q, k, v)
        self.assertIsInstance(e, attn_jit.InvalidArgumentError)

    def test_kv_heads_not_dividing_heads(self):
        # The runtime's check and message (runtime/lib/Validate.cpp).
        e = self.assertError(attn_jit.InvalidArgumentError,
                             r"kv_heads = 4 with heads = 6: kv_heads must divide heads",
                             *self.qkv(1, 6, 4, 4, 4, 32), enable_gqa=True)
        self.assertEqual(e.status, 1)
        self.assertError(attn_jit.InvalidArgumentError, "kv_heads = 8 with heads = 4",
                         *self.qkv(1, 4, 8, 4, 4, 32), enable_gqa=True)

    def test_bad_shapes(self):
        q, k, v = self.qkv(2, 2, 2, 4, 6, 32)
        self.assertError(ValueError, "takes 4-D", q[0], k, v)
        self.assertError(ValueError, "q has batch 1, k and v have batch 2", q[:1], k, v)
        self.assertError(ValueError, "q has head dim 16, k has 32", q[..., :16], k, v)
        self.assertError(ValueError, r"must agree in \(B, Hkv, Nk\)", q, k, v[:, :, :5])
        self.assertError(attn_jit.UnsupportedError, "Dv != D", q, k, v[..., :16])

    def test_dtypes(self):
        q, k, v = self.qkv(1, 2, 2, 4, 4, 32)
        self.assertError(ValueError, "one dtype; got q float32, k float16, v float32", q,
                         k.astype(np.float16), v)
        self.assertError(attn_jit.UnsupportedError, "dtype float64 is not supported",
                         *(x.astype(np.float64) for x in (q, k, v)))
        with self.assertRaisesRegex(TypeError, "NumPy arrays or torch tensors; q is a list"):
            attn_jit.attention(q.tolist(), k, v)

    def test_fp8_takes_torch_tensors(self):
        # NumPy has no FP8 dtype: attention_fp8 refuses arrays before any
        # check, and the FP8 table refuses other dtypes by name.
        q, k, v = self.qkv(1, 2, 2, 4, 4, 32)
        with self.assertRaisesRegex(TypeError, "torch float8_e4m3fn tensors .* q is a ndarray"):
            attn_jit.attention_fp8(q, k, v)
        with self.assertRaisesRegex(attn_jit.UnsupportedError, "dtype float32 is not supported: float8_e4m3fn"):
            _core.check_fp8(_numpy, q, k, v, False)

    def test_runtime_messages(self):
        q, k, v = self.qkv(1, 2, 2, 4, 4, 32)
        self.assertError(attn_jit.InvalidArgumentError, r"scale = (nan|inf): must be finite", q, k, v,
                         scale=float("nan"))
        e = self.assertError(attn_jit.UnsupportedError, r"head_dim = 600 is not supported on the host",
                             *self.qkv(1, 1, 1, 2, 2, 600))
        self.assertEqual(e.status, 2)


class _Fp8Bytes:
    """_core's adapter for e4m3 codes in uint8 arrays (NumPy has no FP8
    dtype) and a bfloat16 O in uint16: enough to run _core.forward_fp8, the
    path of attn_jit.attention_fp8 under torch's adapter, on the host."""

    @staticmethod
    def dtype_name(x):
        return "float8_e4m3fn" if x.dtype == np.uint8 else str(x.dtype)

    strides = staticmethod(_numpy.strides)
    ptr = staticmethod(_numpy.ptr)
    contiguous = staticmethod(_numpy.contiguous)

    @staticmethod
    def keys_contiguous(x):
        return np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)

    @staticmethod
    def device(q, k, v):
        return _capi.DEVICE_HOST, None


def e4m3_values(codes):
    """float64 values of e4m3 codes (normal ones only, as drawn below)."""
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent = ((codes >> 3) & 0xF).astype(np.int64) - 7
    return sign * (1 + (codes & 7) / 8.0) * np.exp2(exponent)


class Fp8HostPath(Case):
    def test_forward_fp8_through_core(self):
        # Q, K, V codes of magnitude 2^-3 .. 2^1, V passed contiguous (so
        # copied keys-contiguous), causal, GQA; O against float64.
        rng = np.random.default_rng(SEED)
        B, H, Hkv, Nq, Nk, D = 1, 4, 2, 37, 53, 32
        codes = [(rng.integers(0, 2, shape) << 7 | rng.integers(4, 9, shape) << 3 | rng.integers(0, 8, shape))
                 .astype(np.uint8) for shape in ((B, H, Nq, D), (B, Hkv, Nk, D), (B, Hkv, Nk, D))]
        descale = (0.5, 0.25, 2.0)
        q, k, v = (e4m3_values(c) * d for c, d in zip(codes, descale))
        ref, _ = reference(q, k, v, causal=True)
        dims = _core.check_fp8(_Fp8Bytes, *codes, True)
        o = np.full((B, H, Nq, D), 0x7FC0, dtype=np.uint16)  # bf16 NaN
        lse = np.full((B, H, Nq), np.nan, dtype=np.float32)
        _core.forward_fp8(_Fp8Bytes, *codes, dims, o, lse, descale, True, None)
        got = (o.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        self.assertLess(err, 6e-2)
        self.assertTrue(np.isfinite(lse).all())


class Runtime(unittest.TestCase):
    def test_cached_kernel_serves_new_lengths(self):
        rng = np.random.default_rng(SEED)
        q = rng.standard_normal((1, 2, 9, 48)).astype(np.float32)
        attn_jit.attention(q, q, q)
        before = attn_jit.stats()
        q = rng.standard_normal((3, 5, 31, 48)).astype(np.float32)
        attn_jit.attention(q, q, q)
        after = attn_jit.stats()
        self.assertEqual(after["compiles"], before["compiles"])
        self.assertEqual(after["memory_hits"], before["memory_hits"] + 1)

    def test_wait_for_compiles_returns_on_the_host(self):
        # Host calls are never tiered (ATTN_JIT_TIERED): nothing builds in
        # the background, so it returns at once and nothing compiles.
        before = attn_jit.stats()
        attn_jit.wait_for_compiles()
        self.assertEqual(attn_jit.stats()["compiles"], before["compiles"])

    def run_python(self, code, **env):
        """Runs code in a fresh interpreter with this package on the path."""
        full = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), **env)
        return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True)

    def test_import_needs_neither_numpy_nor_torch(self):
        r = self.run_python("import sys; sys.modules['numpy'] = sys.modules['torch'] = None\n"
                            "import attn_jit; print(attn_jit.version())")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_python("import numpy, sys, attn_jit\n"
                            "q = numpy.ones((1, 1, 2, 8), numpy.float32); attn_jit.attention(q, q, q)\n"
                            "assert 'torch' not in sys.modules")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_library_search_order(self):
        from attn_jit import _capi
        with mock.patch.dict(os.environ, {"ATTN_JIT_LIB": ""}):
            self.assertEqual(_capi.candidate_paths(), [os.path.join(REPO, "lib", "libattn-jit.so"),
                                                       os.path.join(REPO, "build", "lib", "libattn-jit.so")])
        with mock.patch.dict(os.environ, {"ATTN_JIT_LIB": "/x/libattn-jit.so"}):
            self.assertEqual(_capi.candidate_paths(), ["/x/libattn-jit.so"])

    def test_missing_library(self):
        r = self.run_python("import attn_jit\ntry:\n attn_jit.version()\n"
                            "except attn_jit.LibraryNotFoundError as e: print(e)",
                            ATTN_JIT_LIB="/nonexistent/libattn-jit.so")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("libattn-jit.so not found; looked at /nonexistent/libattn-jit.so", r.stdout)


if __name__ == "__main__":
    unittest.main()
