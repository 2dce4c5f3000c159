#!/usr/bin/env python3
"""attn_jit.attention_varlen (the Python package) on torch tensors: the custom
op attn_jit::attention_varlen, CUDA numerics against float64 and torch SDPA on
the padded equivalent, torch.compile(fullgraph=True), the no-backward error.

On the GPU machine, with the bundle (ninja -C build bundle):
    ATTN_JIT_LIB=BUNDLE/lib/libattn-jit.so PYTHONPATH=BUNDLE/python \
        python3 tests/gpu/test_torch_varlen.py [-v] [-k NAME]
Exit 0 passed, 1 failed, 77 ("SKIP: ...") without torch. Without a GPU the
CUDA tests are skipped with the reason and the CPU ones (torch CPU tensors:
the runtime's host path) still run.

Checks:
  * CPU float32 tensors: ragged batches (lengths 0, 1, up to 300), GQA,
    causal (bottom-right per sequence) and not, a window and ALiBi, against
    a float64 per-sequence reference (1e-5, docs/testing.md); opcheck of
    attn_jit::attention_varlen (schema, fake against real, AOT dispatch);
    eager calls skip the op and give what it gives; meta tensors get the
    fake's shapes; torch.compile(backend="aot_eager", fullgraph=True) equals
    eager; inputs requiring grad raise UnsupportedError (eager and
    compiled), and run under torch.no_grad(); errors (cu_seqlens int64, a
    list, of another length).
  * CUDA, bf16 and f16, D 64 and 128, (H, Hkv) (8, 8) and (16, 4): ragged
    batches of 8 sequences of random lengths 0..2000 with some 0 and 1,
    Nq_b != Nk_b (chunked prefill) and equal lengths; no mask, causal, a
    window, ALiBi. O within 1.25x the relative error of torch SDPA against
    float64, SDPA run on the padded equivalent (B, H, max, D) with the
    per-sequence mask as attn_mask, both measured over the rows that see a
    key (at least 2x the error of rounding the exact O to the dtype); rows
    that see no key O = 0 and LSE = -inf exactly; LSE within
    1e-3 + 3e-5 |ref|. Eager against the op; the call on the current
    stream; torch.compile(fullgraph=True) (inductor) equals eager, a second
    batch of other lengths too, a Python mask_mod reading b under it;
    cu_seqlens on the CPU with CUDA q refused.
"""
import math
import os
import random
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, HERE)
from torch_and_package import NO_CUDA, NO_TORCH, attn_jit, torch  # noqa: E402
if torch is not None:
    import torch.nn.functional as F
    from attn_jit import _torch

SEED = int(os.environ.get("ATTN_TEST_SEED") or random.SystemRandom().randrange(1 << 31))
CPU_TOL = 1e-5


def cu_seqlens(lens, device):
    return torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), dtype=torch.int32, device=device)


def seen_mask(nq, nk, causal, window, device):
    """(nq, nk) bool: what query i of a sequence sees (bottom-right causal,
    the window about the diagonal i + shift)."""
    i = torch.arange(nq, device=device)[:, None]
    j = torch.arange(nk, device=device)[None, :]
    shift = nk - nq if causal else 0
    seen = torch.ones(nq, nk, dtype=torch.bool, device=device)
    if causal:
        seen &= j <= i + shift
    if window is not None:
        left, right = window
        if left is not None and left >= 0:
            seen &= j - (i + shift) >= -left
        if right is not None and right >= 0:
            seen &= j - (i + shift) <= right
    return seen


def reference(q, k, v, cu_q, cu_k, causal=False, window=None, alibi=None, extra_seen=None):
    """float64 O (total_q, H, D) and LSE (H, total_q) per sequence;
    extra_seen(b, nq, nk) -> (nq, nk) bool and-ed with the mask."""
    H, D = q.shape[1], q.shape[2]
    g = H // k.shape[1]
    o = torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    lse = torch.full((H, q.shape[0]), -math.inf, dtype=torch.float64, device=q.device)
    cq, ck = cu_q.tolist(), cu_k.tolist()
    for b in range(len(cq) - 1):
        nq, nk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        if nq == 0 or nk == 0:
            continue
        qs = q[cq[b]:cq[b + 1]].double().transpose(0, 1)
        ks, vs = (x[ck[b]:ck[b + 1]].double().transpose(0, 1).repeat_interleave(g, 0) for x in (k, v))
        s = qs @ ks.transpose(-1, -2) / math.sqrt(D)
        if alibi is not None:
            i = torch.arange(nq, device=q.device)[:, None]
            j = torch.arange(nk, device=q.device)[None, :]
            s = s + alibi.double()[:, None, None] * (j - i)
        seen = seen_mask(nq, nk, causal, window, q.device)
        if extra_seen is not None:
            seen &= extra_seen(b, nq, nk)
        s = s.masked_fill(~seen, -math.inf)
        m = torch.logsumexp(s, -1)   # -inf for a row that sees nothing
        p = torch.exp(s - m[..., None]).nan_to_num(0.0)
        o[cq[b]:cq[b + 1]] = (p @ vs).transpose(0, 1)
        lse[:, cq[b]:cq[b + 1]] = m
    return o, lse


def rel(x, ref, rows):
    """||x - ref|| / ||ref|| over the packed rows `rows` (bool, total_q)."""
    d = (x.double() - ref)[rows]
    return float(d.norm() / ref[rows].norm().clamp_min(1e-30))


def sdpa_padded(q, k, v, cu_q, cu_k, causal, window, alibi):
    """torch SDPA on the padded equivalent: (B, H, max, D) with each
    sequence's mask (and ALiBi) as attn_mask; its O unpadded to (total_q, H, D)."""
    cq, ck = cu_q.tolist(), cu_k.tolist()
    B, H, Hkv, D = len(cq) - 1, q.shape[1], k.shape[1], q.shape[2]
    mq = max(cq[b + 1] - cq[b] for b in range(B))
    mk = max(ck[b + 1] - ck[b] for b in range(B))
    dev = q.device
    qp = torch.zeros(B, H, mq, D, dtype=q.dtype, device=dev)
    kp = torch.zeros(B, Hkv, mk, D, dtype=q.dtype, device=dev)
    vp = torch.zeros_like(kp)
    mask = torch.full((B, H, mq, mk), -math.inf, dtype=torch.float32, device=dev)
    for b in range(B):
        nq, nk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        qp[b, :, :nq] = q[cq[b]:cq[b + 1]].transpose(0, 1)
        kp[b, :, :nk] = k[ck[b]:ck[b + 1]].transpose(0, 1)
        vp[b, :, :nk] = v[ck[b]:ck[b + 1]].transpose(0, 1)
        add = torch.zeros(H, nq, nk, dtype=torch.float32, device=dev)
        if alibi is not None:
            i = torch.arange(nq, device=dev)[:, None]
            j = torch.arange(nk, device=dev)[None, :]
            add = add + alibi[:, None, None] * (j - i)
        mask[b, :, :nq, :nk] = add.masked_fill(~seen_mask(nq, nk, causal, window, dev), -math.inf)
    with torch.inference_mode():
        o = F.scaled_dot_product_attention(qp, kp, vp, attn_mask=mask.to(q.dtype), enable_gqa=H != Hkv)
    return torch.cat([o[b, :, :cq[b + 1] - cq[b]].transpose(0, 1) for b in range(B)])


def ragged(rng, B, top):
    """(lens_q, lens_k): random in 0..top with a 0 and a 1 on either side,
    chunked prefill (Nq_b < Nk_b) and Nq_b > Nk_b."""
    lq = [rng.randint(1, top) for _ in range(B)]
    lk = [rng.randint(1, top) for _ in range(B)]
    lq[0], lk[1], lq[2], lk[3] = 0, 0, 1, 1
    lq[4] = max(1, lk[4] // 8)   # a few queries over many keys
    return lq, lk


@unittest.skipIf(NO_TORCH, NO_TORCH)
class Base(unittest.TestCase):
    rng = random.Random(SEED)

    def packed(self, lens_q, lens_k, H, Hkv, D, dtype, device):
        g = torch.Generator(device="cpu").manual_seed(self.rng.randrange(1 << 30))

        def one(n, h):
            return torch.randn(n, h, D, generator=g).to(dtype=dtype, device=device)
        return (one(sum(lens_q), H), one(sum(lens_k), Hkv), one(sum(lens_k), Hkv),
                cu_seqlens(lens_q, device), cu_seqlens(lens_k, device))

    def call(self, q, k, v, cu_q, cu_k, **kw):
        mq, mk = int((cu_q[1:] - cu_q[:-1]).max()), int((cu_k[1:] - cu_k[:-1]).max())
        return attn_jit.attention_varlen(q, k, v, cu_q, cu_k, mq, mk, enable_gqa=q.shape[1] != k.shape[1],
                                         **kw)

    def check_dead_rows(self, o, lse, ref_lse):
        dead = torch.isinf(ref_lse).all(0)   # rows (total_q) that see no key
        self.assertTrue(bool((o[dead] == 0).all()), "rows that see no key must give O = 0")
        self.assertTrue(bool((lse[:, dead] == -math.inf).all()), "... and LSE = -inf")
        return ~dead

    def check_lse(self, lse, ref_lse):
        live = torch.isfinite(ref_lse)
        d = (lse.double() - ref_lse).abs()[live]
        self.assertTrue(bool((d <= 1e-3 + 3e-5 * ref_lse[live].abs()).all()),
                        f"LSE error {float(d.max()) if d.numel() else 0:.2e}")

    def check_grad_refused(self, D, dtype, device, which):
        """With q, k or v (which) requiring grad: UnsupportedError, eager and
        compiled; under torch.no_grad() the call runs (no graph)."""
        q, k, v, cu_q, cu_k = tensors = self.packed([5, 7], [9, 4], 2, 2, D, dtype, device)
        tensors[which].requires_grad_()
        with self.assertRaisesRegex(attn_jit.UnsupportedError, "no backward pass"):
            self.call(q, k, v, cu_q, cu_k)
        with torch.no_grad():
            self.assertFalse(self.call(q, k, v, cu_q, cu_k).requires_grad)

        def fn(q, k, v, cu_q, cu_k):
            return attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 9, 9)
        torch._dynamo.reset()
        # Without fullgraph dynamo runs the frame eagerly, which raises ours;
        # with it dynamo reports the exception it observed.
        with self.assertRaisesRegex(attn_jit.UnsupportedError, "no backward pass"):
            torch.compile(fn, backend="aot_eager")(q, k, v, cu_q, cu_k)
        torch._dynamo.reset()
        with self.assertRaises(Exception) as ctx:
            torch.compile(fn, backend="aot_eager", fullgraph=True)(q, k, v, cu_q, cu_k)
        chain, e = [], ctx.exception
        while e is not None:
            chain.append(f"{type(e).__name__}: {e}")
            e = e.__cause__ or e.__context__
        self.assertTrue(any("no backward pass" in t or "UnsupportedError" in t for t in chain), chain)


class TorchCPU(Base):
    def test_against_float64(self):
        lq, lk = [1, 0, 300, 37, 5, 64, 0, 129], [1, 7, 250, 0, 5, 300, 3, 64]
        slopes = torch.tensor([2.0 ** (-(h + 1)) for h in range(4)])
        for H, Hkv in ((4, 4), (4, 2)):
            q, k, v, cu_q, cu_k = self.packed(lq, lk, H, Hkv, 32, torch.float32, "cpu")
            for causal, kw in ((False, {}), (True, {}), (True, dict(window=(16, 0))),
                               (True, dict(alibi_slopes=slopes[:H]))):
                o, lse = self.call(q, k, v, cu_q, cu_k, causal=causal, return_lse=True, **kw)
                ref_o, ref_lse = reference(q, k, v, cu_q, cu_k, causal, kw.get("window"),
                                           kw.get("alibi_slopes"))
                live = self.check_dead_rows(o, lse, ref_lse)
                err = rel(o, ref_o, live)
                self.assertLessEqual(err, CPU_TOL, f"H={H} Hkv={Hkv} causal={causal} {sorted(kw)}")
                self.check_lse(lse, ref_lse)
                self.assertEqual((o.shape, lse.shape, lse.dtype), (q.shape, (H, q.shape[0]), torch.float32))

    def test_opcheck(self):
        q, k, v, cu_q, cu_k = self.packed([5, 0, 17], [9, 4, 17], 4, 2, 16, torch.float32, "cpu")
        op = torch.ops.attn_jit.attention_varlen.default
        for return_lse in (False, True):
            torch.library.opcheck(op, (q, k, v, cu_q, cu_k, 17, 17, True, None, True, return_lse))
        torch.library.opcheck(op, (q, k, v, cu_q, cu_k, 17, 17, True, None, True, True, 8, 0))   # a window

    def test_eager_skips_the_op(self):
        q, k, v, cu_q, cu_k = self.packed([5, 0, 17], [9, 4, 17], 4, 2, 16, torch.float32, "cpu")
        with mock.patch.object(_torch, "_varlen_through_op", wraps=_torch._varlen_through_op) as via_op:
            for _ in range(2):
                o, lse = self.call(q, k, v, cu_q, cu_k, causal=True, return_lse=True)
        self.assertEqual(via_op.call_count, 0)
        o_op, lse_op = torch.ops.attn_jit.attention_varlen.default(q, k, v, cu_q, cu_k, 17, 17, True, None,
                                                                   True, True)
        self.assertTrue(torch.equal(o, o_op) and torch.equal(lse, lse_op))

    def test_meta_tensors(self):
        q, k, v, cu_q, cu_k = (x.to("meta") for x in self.packed([5, 7], [9, 4], 4, 2, 16, torch.float32,
                                                                  "cpu"))
        o, lse = attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 7, 9, enable_gqa=True, return_lse=True)
        self.assertEqual((o.shape, o.device.type, lse.shape, lse.dtype), ((12, 4, 16), "meta", (4, 12),
                                                                           torch.float32))

    def test_compile_equals_eager(self):
        q, k, v, cu_q, cu_k = self.packed([5, 0, 40], [9, 4, 40], 4, 2, 16, torch.float32, "cpu")

        def fn(q, k, v, cu_q, cu_k):
            return attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 40, 40, causal=True, enable_gqa=True,
                                             return_lse=True)
        torch._dynamo.reset()
        o, lse = torch.compile(fn, backend="aot_eager", fullgraph=True)(q, k, v, cu_q, cu_k)
        o_e, lse_e = fn(q, k, v, cu_q, cu_k)
        self.assertTrue(torch.equal(o, o_e) and torch.equal(lse, lse_e))

    def test_grad_is_refused(self):
        self.check_grad_refused(16, torch.float32, "cpu", 0)

    def test_errors(self):
        q, k, v, cu_q, cu_k = self.packed([5, 7], [9, 4], 2, 2, 16, torch.float32, "cpu")
        for bad_q, bad_k, pattern in ((cu_q.long(), cu_k, r"cu_seqlens_q must be int32"),
                                      (cu_q, cu_k.tolist(), r"cu_seqlens_k must be a torch tensor"),
                                      (cu_q, cu_k[:2], r"cu_seqlens_q has 3 offsets and cu_seqlens_k 2"),
                                      (cu_q.flip(0), cu_k, r"must start at 0")):
            with self.assertRaisesRegex(attn_jit.InvalidArgumentError, pattern):
                attn_jit.attention_varlen(q, k, v, bad_q, bad_k, 7, 9)
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, r"max_seqlen_k = 99: must be in \[0, 13"):
            attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 7, 99)
        with self.assertRaisesRegex(attn_jit.UnsupportedError, "bias is not supported"):
            attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 7, 9, bias=torch.zeros(12, 13))


def recent_keys(b, h, q_idx, kv_idx):
    """A Python mask_mod (module level: torch.compile traces it): sequence b
    sees its last 8 * (b + 1) keys up to the query."""
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 8 * (b + 1))


@unittest.skipIf(NO_CUDA, NO_CUDA)
class TorchCUDA(Base):
    def against_sdpa(self, lens_q, lens_k, H, Hkv, D, dtype, causal=False, window=None, alibi=False):
        q, k, v, cu_q, cu_k = self.packed(lens_q, lens_k, H, Hkv, D, dtype, "cuda")
        slopes = torch.tensor([2.0 ** (-8 * (h + 1) / H) for h in range(H)], device="cuda") if alibi else None
        o, lse = self.call(q, k, v, cu_q, cu_k, causal=causal, window=window, alibi_slopes=slopes,
                           return_lse=True)
        ref_o, ref_lse = reference(q, k, v, cu_q, cu_k, causal, window, slopes)
        live = self.check_dead_rows(o, lse, ref_lse)
        sdpa = sdpa_padded(q, k, v, cu_q, cu_k, causal, window, slopes)
        err, err_sdpa = rel(o, ref_o, live), rel(sdpa, ref_o, live)
        tol = max(1.25 * err_sdpa, 2 * rel(ref_o.to(dtype), ref_o, live))
        name = (f"B={len(lens_q)} H={H} Hkv={Hkv} D={D} {dtype} causal={causal} window={window} "
                f"alibi={alibi} total_q={q.shape[0]} total_k={k.shape[0]}")
        print(f"  {name}: err {err:.2e}, sdpa (padded) {err_sdpa:.2e}", file=sys.stderr)
        self.assertLessEqual(err, tol, f"{name} (seed {SEED})")
        self.check_lse(lse, ref_lse)
        return q, k, v, cu_q, cu_k, o

    def test_against_sdpa(self):
        for dtype in (torch.bfloat16, torch.float16):
            for D in (64, 128):
                for H, Hkv in ((8, 8), (16, 4)):
                    lq, lk = ragged(self.rng, 8, 2000)
                    for causal in (False, True):
                        self.against_sdpa(lq, lk, H, Hkv, D, dtype, causal)
        lens = ragged(self.rng, 8, 2000)[1]
        self.against_sdpa(lens, lens, 16, 4, 128, torch.bfloat16, True)   # Nq_b == Nk_b (prefill)

    def test_variants_against_sdpa(self):
        lq, lk = ragged(self.rng, 8, 1500)
        self.against_sdpa(lq, lk, 8, 2, 128, torch.bfloat16, True, window=(255, 0))
        self.against_sdpa(lq, lk, 8, 2, 128, torch.float16, False, window=(64, 64))
        self.against_sdpa(lq, lk, 8, 2, 64, torch.bfloat16, True, alibi=True)

    def test_eager_against_op_and_stream(self):
        lq, lk = ragged(self.rng, 8, 500)
        q, k, v, cu_q, cu_k = self.packed(lq, lk, 8, 2, 128, torch.bfloat16, "cuda")
        mq, mk = max(lq), max(lk)
        with mock.patch.object(_torch, "_varlen_through_op", wraps=_torch._varlen_through_op) as via_op:
            o, lse = attn_jit.attention_varlen(q, k, v, cu_q, cu_k, mq, mk, causal=True, enable_gqa=True,
                                               return_lse=True)
        self.assertEqual(via_op.call_count, 0)
        o_op, lse_op = torch.ops.attn_jit.attention_varlen.default(q, k, v, cu_q, cu_k, mq, mk, True, None,
                                                                   True, True)
        self.assertTrue(torch.equal(o, o_op) and torch.equal(lse, lse_op))
        # Q written on a side stream after a long sleep there: a call on any
        # other stream would read it before it is written.
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)
            q2 = q * 1
            o2 = attn_jit.attention_varlen(q2, k, v, cu_q, cu_k, mq, mk, causal=True, enable_gqa=True)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(o2, o))

    def test_compile_fullgraph(self):
        def fn(q, k, v, cu_q, cu_k, mq, mk):
            return attn_jit.attention_varlen(q, k, v, cu_q, cu_k, mq, mk, causal=True, enable_gqa=True,
                                             return_lse=True)
        torch._dynamo.reset()
        compiled = torch.compile(fn, fullgraph=True)
        for _ in range(2):   # two batches of other lengths
            lq, lk = ragged(self.rng, 8, 1000)
            q, k, v, cu_q, cu_k = self.packed(lq, lk, 16, 4, 128, torch.bfloat16, "cuda")
            o, lse = compiled(q, k, v, cu_q, cu_k, max(lq), max(lk))
            o_e, lse_e = fn(q, k, v, cu_q, cu_k, max(lq), max(lk))
            self.assertTrue(torch.equal(o, o_e) and torch.equal(lse, lse_e))
        explanation = torch._dynamo.explain(fn)(q, k, v, cu_q, cu_k, max(lq), max(lk))
        self.assertEqual(explanation.graph_break_count, 0, explanation.break_reasons)

    def test_compile_python_mask_mod(self):
        lens = [0, 1, 40, 300, 77]
        q, k, v, cu_q, cu_k = self.packed(lens, lens, 8, 8, 64, torch.float16, "cuda")

        def fn(q, k, v, cu_q, cu_k):
            return attn_jit.attention_varlen(q, k, v, cu_q, cu_k, 300, 300, mask_mod=recent_keys,
                                             return_lse=True)
        torch._dynamo.reset()
        o, lse = torch.compile(fn, fullgraph=True)(q, k, v, cu_q, cu_k)

        def extra(b, nq, nk):
            i = torch.arange(nq, device="cuda")[:, None]
            j = torch.arange(nk, device="cuda")[None, :]
            return (j <= i) & (i - j < 8 * (b + 1))
        ref_o, ref_lse = reference(q, k, v, cu_q, cu_k, extra_seen=extra)
        live = self.check_dead_rows(o, lse, ref_lse)
        self.assertLess(rel(o, ref_o, live), 2e-3)
        self.check_lse(lse, ref_lse)

    def test_grad_is_refused(self):
        self.check_grad_refused(64, torch.bfloat16, "cuda", 1)

    def test_offsets_on_another_device(self):
        q, k, v, cu_q, cu_k = self.packed([5, 7], [9, 4], 2, 2, 64, torch.bfloat16, "cuda")
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, r"cu_seqlens_q is on cpu and q on cuda"):
            attn_jit.attention_varlen(q, k, v, cu_q.cpu(), cu_k, 7, 9)


def main():
    if NO_TORCH:
        print(f"SKIP: {NO_TORCH}")
        return 77
    print(f"# test_torch_varlen: seed {SEED} (ATTN_TEST_SEED={SEED} replays), torch {torch.__version__}, "
          f"attn_jit from {os.path.dirname(attn_jit.__file__)}, library {attn_jit.library_path()} "
          f"({attn_jit.version()}), {torch.cuda.get_device_name() if not NO_CUDA else NO_CUDA}", flush=True)
    prog = unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[1:], exit=False)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print(f"{r.testsRun - failed - len(r.skipped)} passed, {failed} failed, {len(r.skipped)} skipped")
    return 0 if r.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
