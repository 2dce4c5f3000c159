#!/usr/bin/env python3
"""attn_jit (the Python package) on torch tensors: the custom op, CUDA numerics
against torch's SDPA, torch.compile without graph breaks, per-call host cost.

On the GPU machine, with the bundle (ninja -C build bundle):
    PYTHONPATH=BUNDLE/python python3 tests/gpu/test_torch.py [-v] [-k NAME]
Exit 0 passed, 1 failed, 77 ("SKIP: ...") without torch. Without a GPU the
CUDA tests are skipped with the reason and the CPU ones (torch CPU tensors:
the runtime's host path) still run.

Checks:
  * CPU float32 tensors (plain, causal, GQA) against test_attention.py's
    float64 reference, 1e-5 (docs/testing.md); torch.library.opcheck of
    attn_jit::attention (schema, fake tensors' shapes and strides against the
    real op for both output layouts, AOT dispatch with dynamic shapes); eager
    calls skip the op and give what it gives (values, layouts), while inputs
    needing autograd, meta and fake tensors and dispatch modes go through it;
    errors alike both ways; autograd: dQ, dK, dV of loss = sum(O * W)
    against float64 autograd (1e-4; GQA, causal, a window), gradients through
    a returned LSE carrying none, opcheck of attn_jit::attention_backward;
    torch._dynamo.explain of examples/python/transformer_block.py on the CPU:
    no graph break, the op in the graph; torch.compile (aot_eager) equals eager.
  * CUDA, bf16 and f16, plain, causal, Nq != Nk, (B, N, H, D) inputs (no copy),
    GQA and MQA decode: O within 1.25x the relative error of torch's SDPA on
    the same inputs against float64 (docs/testing.md's GPU rule; at least 2x
    that of rounding the exact result to the dtype), LSE within
    1e-3 + 3e-5 |ref|; eager calls give what the op gives; the call runs on
    the current stream; the transformer block under
    torch.compile(fullgraph=True) equals eager; host time of a cached small
    call (eager, through the op, the general path) against SDPA's (printed;
    fails above 1 ms); autograd's gradients (bf16, causal, GQA) within
    1.25x the error of SDPA's backward on the same inputs.
"""
import math
import os
import subprocess
import sys
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)                                       # test_attention (reference)
sys.path.insert(0, os.path.join(REPO, "examples", "python"))   # transformer_block

from torch_and_package import NO_CUDA, NO_TORCH, attn_jit, torch  # noqa: E402
if torch is not None:
    import torch.nn.functional as F
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from test_attention import reference, rel_err
    from transformer_block import alibi_softcap, make
    from attn_jit import _core, _mods, _torch

def rel(x, y):
    return float((x.double() - y.double()).norm() / y.double().norm())


class Base(unittest.TestCase):
    def qkv(self, B, H, Hkv, Nq, Nk, D, dtype, device, bnhd=False):
        def one(h, n):
            if bnhd:   # (B, N, H, D) memory seen as (B, H, N, D)
                return torch.randn(B, n, h, D, dtype=dtype, device=device).transpose(1, 2)
            return torch.randn(B, h, n, D, dtype=dtype, device=device)
        return one(H, Nq), one(Hkv, Nk), one(Hkv, Nk)

    def check_lse(self, lse, ref_lse):
        live = torch.isfinite(ref_lse)
        d = (lse.double() - ref_lse).abs()[live]
        self.assertTrue(bool((d <= 1e-3 + 3e-5 * ref_lse[live].abs()).all()),
                        f"LSE error {float(d.max()):.2e}")

    def grads_against_float64(self, B, H, Hkv, Nq, Nk, D, dtype, device, causal, window=None):
        """attn_jit's dQ, dK, dV (autograd through the op) and float64
        autograd's, for loss = sum(O * W) with a random W."""
        q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D, dtype, device)
        w = torch.randn(B, H, Nq, D, dtype=dtype, device=device)
        leaves = [x.detach().clone().requires_grad_() for x in (q, k, v)]
        o = attn_jit.attention(*leaves, causal=causal, enable_gqa=H != Hkv, window=window)
        (o * w).sum().backward()
        ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
        group = H // Hkv
        ke, ve = (x.repeat_interleave(group, 1) for x in ref[1:])
        s = ref[0] @ ke.transpose(-1, -2) / math.sqrt(D)
        i = torch.arange(Nq, device=device)[:, None]
        j = torch.arange(Nk, device=device)[None, :]
        seen = torch.ones(Nq, Nk, dtype=torch.bool, device=device)
        if causal:
            seen &= j <= i
        if window is not None:
            seen &= (j - i >= -window[0]) & ((j - i <= window[1]) if window[1] >= 0 else True)
        p = torch.softmax(s.masked_fill(~seen, -math.inf), -1).nan_to_num(0.0)
        ((p @ ve) * w.double()).sum().backward()
        return [x.grad for x in leaves], [x.grad for x in ref], (q, k, v, w)

    def traced_mods_against_float64(self, B, H, N, D, dtype, device, reach):
        """O, dQ, dK, dV of a Python score_mod (soft-capped ALiBi reading a
        captured tensor) and mask_mod (causal window of `reach`), traced,
        with float64 autograd's: [(name, ours, float64)]."""
        q, k, v = self.qkv(B, H, H, N, N, D, dtype, device)
        slopes = torch.tensor([2.0 ** (-(h + 1)) for h in range(H)], device=device)

        def score_mod(s, b, h, q_idx, kv_idx):
            return 8.0 * attn_jit.tanh((s + slopes[h] * (kv_idx - q_idx)) / 8.0)

        def mask_mod(b, h, q_idx, kv_idx):
            return q_idx - kv_idx <= reach
        leaves = [x.detach().clone().requires_grad_() for x in (q, k, v)]
        o = attn_jit.attention(*leaves, causal=True, score_mod=score_mod, mask_mod=mask_mod)
        w = torch.randn_like(o)
        (o * w).sum().backward()
        ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
        i = torch.arange(N, device=device)[:, None]
        j = torch.arange(N, device=device)[None, :]
        s = ref[0] @ ref[1].transpose(-1, -2) / math.sqrt(D)
        s = 8.0 * torch.tanh((s + slopes.double()[:, None, None] * (j - i)) / 8.0)
        s = s.masked_fill(~((j <= i) & (i - j <= reach)), -math.inf)
        ref_o = torch.softmax(s, -1) @ ref[2]
        (ref_o * w.double()).sum().backward()
        return [("o", o, ref_o)] + [(n, x.grad, r.grad) for n, x, r in zip(("dq", "dk", "dv"), leaves, ref)]

    def check_eager_skips_the_op(self, dtype, device):
        """Eager calls on plain tensors run their plan without the op, and
        give what the op gives: the same values, the same layouts."""
        for bnhd in (False, True):
            q, k, v = self.qkv(2, 4, 2, 64, 80, 64, dtype, device, bnhd=bnhd)
            with mock.patch.object(_torch, "_through_op", wraps=_torch._through_op) as via_op:
                for _ in range(2):   # the call that builds the plan, and one that finds it
                    o, lse = attn_jit.attention(q, k, v, causal=True, enable_gqa=True, return_lse=True)
                    o_op, lse_op = torch.ops.attn_jit.attention.default(q, k, v, True, None, True, True)
                    self.assertTrue(torch.equal(o, o_op) and torch.equal(lse, lse_op))
                    self.assertEqual((o.stride(), lse.stride()), (o_op.stride(), lse_op.stride()))
                    self.assertEqual(type(attn_jit.attention(q, k, v, enable_gqa=True)), torch.Tensor)
            self.assertEqual(via_op.call_count, 0)
            self.assertEqual(o.transpose(1, 2).is_contiguous(), bnhd)   # O in Q's memory order


@unittest.skipIf(NO_TORCH, NO_TORCH)
class TorchCPU(Base):
    def test_float32_against_float64(self):
        for (B, H, Hkv, Nq, Nk, D), causal in [((2, 4, 4, 33, 50, 64), False), ((1, 8, 2, 40, 40, 32), True),
                                              ((2, 6, 1, 1, 70, 128), False)]:
            q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D, torch.float32, "cpu")
            o, lse = attn_jit.attention(q, k, v, causal=causal, enable_gqa=H != Hkv, return_lse=True)
            ref_o, ref_lse = reference(torch, q, k, v, "causal" if causal else "none", 1 / math.sqrt(D))
            self.assertLessEqual(rel_err(torch, o, ref_o), 1e-5)
            self.check_lse(lse, ref_lse)

    def test_opcheck(self):
        op = torch.ops.attn_jit.attention.default
        for bnhd in (False, True):
            q, k, v = self.qkv(2, 4, 2, 16, 24, 32, torch.float32, "cpu", bnhd=bnhd)
            for return_lse in (True, False):
                torch.library.opcheck(op, (q, k, v, True, None, True, return_lse))
            o = attn_jit.attention(q, k, v, enable_gqa=True)
            self.assertEqual(o.transpose(1, 2).is_contiguous(), bnhd)   # O in Q's memory order

    def test_eager_skips_the_op(self):
        self.check_eager_skips_the_op(torch.float32, "cpu")

    def test_the_op_serves_the_rest(self):
        # Inputs needing autograd, meta and fake tensors, and dispatch modes
        # go through the op (whose fake implementation gives the layouts).
        q, k, v = self.qkv(1, 2, 2, 8, 8, 32, torch.float32, "cpu", bnhd=True)
        ref = attn_jit.attention(q, k, v)

        class OpLog(TorchDispatchMode):   # records the ops dispatched while it is on
            ops = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.ops.append(func)
                return func(*args, **(kwargs or {}))

        log = OpLog()
        with mock.patch.object(_torch, "_through_op", wraps=_torch._through_op) as via_op:
            o = attn_jit.attention(q.detach().requires_grad_(), k, v)
            self.assertIsNotNone(o.grad_fn)
            for _ in range(2):
                o = attn_jit.attention(*(x.to("meta") for x in (q, k, v)))
                self.assertEqual((o.device.type, o.shape, o.stride()), ("meta", ref.shape, ref.stride()))
            with FakeTensorMode() as mode:
                o = attn_jit.attention(*(mode.from_tensor(x) for x in (q, k, v)))
            self.assertIsInstance(o, FakeTensor)
            self.assertEqual((o.shape, o.stride()), (ref.shape, ref.stride()))
            with log:
                o = attn_jit.attention(q, k, v)
            self.assertTrue(torch.equal(o, ref))
        self.assertEqual(via_op.call_count, 5)
        self.assertIn(torch.ops.attn_jit.attention.default, log.ops)

    def test_errors_with_and_without_the_op(self):
        op = torch.ops.attn_jit.attention.default

        def through_op(q, k, v, enable_gqa=False):
            return op(q, k, v, False, None, enable_gqa, False)

        q, k, v = self.qkv(1, 8, 2, 4, 4, 32, torch.float32, "cpu")
        q6 = torch.randn(1, 6, 4, 32)
        k4 = torch.randn(1, 4, 4, 32)
        for call in (attn_jit.attention, through_op):
            for _ in range(2):   # a new signature, then a known one
                with self.assertRaisesRegex(ValueError, "pass enable_gqa=True"):
                    call(q, k, v)
                with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "kv_heads = 4 with heads = 6"):
                    call(q6, k4, k4, enable_gqa=True)
                with self.assertRaisesRegex(attn_jit.UnsupportedError, "dtype float64"):
                    call(q.double(), k.double(), v.double(), enable_gqa=True)

    def test_backward_against_float64(self):
        for shape, causal, window in [((2, 4, 4, 33, 50, 32), False, None),
                                      ((1, 8, 2, 40, 40, 64), True, None),
                                      ((2, 4, 2, 45, 45, 32), True, (7, -1))]:
            ours, ref, _ = self.grads_against_float64(*shape, torch.float32, "cpu", causal, window)
            for name, x, r in zip(("dq", "dk", "dv"), ours, ref):
                self.assertLessEqual(rel(x, r), 1e-4, f"{name} {shape} causal={causal}")

    def test_traced_mods_with_autograd(self):
        # A Python score_mod reading a captured tensor and a mask_mod, traced;
        # O and dQ, dK, dV against float64 autograd of the same functions.
        for name, x, r in self.traced_mods_against_float64(2, 4, 40, 32, torch.float32, "cpu", 11):
            self.assertLessEqual(rel(x, r), 1e-5 if name == "o" else 1e-4, name)

    def test_lse_carries_no_gradient(self):
        q, k, v = self.qkv(1, 2, 2, 8, 8, 32, torch.float32, "cpu")
        o, lse = attn_jit.attention(q.requires_grad_(), k, v, return_lse=True)
        self.assertTrue(o.requires_grad)
        self.assertFalse(lse.requires_grad)
        (o.sum() + lse.sum()).backward()   # the output's gradient only
        self.assertIsNotNone(q.grad)
        with self.assertRaisesRegex(RuntimeError, "does not require grad"):
            lse.sum().backward()

    def test_backward_opcheck(self):
        q, k, v = self.qkv(1, 4, 2, 16, 24, 32, torch.float32, "cpu")
        o, lse = attn_jit.attention(q, k, v, causal=True, enable_gqa=True, return_lse=True)
        torch.library.opcheck(torch.ops.attn_jit.attention_backward.default,
                              (q, k, v, o, lse, torch.randn_like(o), True, None, True))

    def test_explain_without_graph_breaks(self):
        block, _, x = make("cpu", torch.float32, seqlen=64)
        with torch.inference_mode():
            explain(self, block, x)

    def test_compiled_block_with_a_score_mod(self):
        # A Python score_mod (ALiBi, soft-capped, reading a tensor of slopes)
        # under torch.compile(fullgraph=True): traced once while compiling,
        # its slopes a graph input, so new values change the compiled result
        # without a recompile.
        block, ref_block, x = make("cpu", torch.float32, seqlen=64, with_score_mod=True)
        slopes, = _mods.captured_arrays([block.score_mod])
        with torch.inference_mode():
            explain(self, block, x)
            torch._dynamo.reset()
            compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
            graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
            for scale in (1.0, 4.0):
                slopes.mul_(scale)
                y, yc, ref = block(x), compiled(x), ref_block(x)
                self.assertLessEqual(rel(y, ref), 1e-5)
                self.assertTrue(torch.equal(yc, y), f"slopes x{scale}: {rel(yc, y):.2e}")
        self.assertEqual(torch._dynamo.utils.counters["stats"]["unique_graphs"], graphs + 1)

    def test_compiled_mods_with_autograd(self):
        # Gradients of a compiled call with traced mods equal eager ones.
        q, k, v = self.qkv(1, 4, 4, 40, 40, 32, torch.float32, "cpu")
        score_mod = alibi_softcap(torch.tensor([0.5, 0.25, 0.125, 0.0625]))

        def f(q, k, v):
            return attn_jit.attention(q, k, v, score_mod=score_mod, mask_mod=WINDOW_MOD).sum()

        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
        grads = []
        for fn in (f, compiled):
            leaves = [x.detach().clone().requires_grad_() for x in (q, k, v)]
            fn(*leaves).backward()
            grads.append([x.grad for x in leaves])
        for a, b in zip(*grads):
            self.assertTrue(torch.equal(a, b))

    def test_compiled_equals_eager(self):
        # The compiled code calls the op (its real implementation); eager calls skip it.
        q, k, v = self.qkv(2, 4, 2, 16, 24, 32, torch.float32, "cpu", bnhd=True)

        def f(q, k, v):
            return attn_jit.attention(q, k, v, causal=True, enable_gqa=True) * 2

        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
        with torch.inference_mode():
            for _ in range(2):
                self.assertTrue(torch.equal(compiled(q, k, v), f(q, k, v)))

    def test_torch_imported_after_attn_jit(self):
        code = ("import attn_jit, torch\nq = torch.randn(1, 2, 8, 16)\n"
                "print(attn_jit.attention(q, q, q).shape)")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "torch.Size([1, 2, 8, 16])"), r.stderr)


def window_mod(b, h, q_idx, kv_idx):
    return q_idx - kv_idx <= 9


WINDOW_MOD = window_mod   # a module-level mask_mod (no captures)


def mods_reference(q, k, v, score_mod, mask_mod):
    """float64 O of FlexAttention's score_mod / mask_mod (functions of
    broadcast position tensors), the score matrix formed."""
    B, H, N, D = q.shape
    dev = q.device
    b, h = torch.arange(B, device=dev)[:, None, None, None], torch.arange(H, device=dev)[:, None, None]
    i, j = torch.arange(N, device=dev)[:, None], torch.arange(k.shape[2], device=dev)[None, :]
    s = q.double() @ k.double().transpose(-1, -2) / math.sqrt(D)
    if score_mod is not None:
        s = score_mod(s, b, h, i, j).double()
    if mask_mod is not None:
        s = s.masked_fill(~mask_mod(b, h, i, j), -math.inf)
    return torch.softmax(s, -1).nan_to_num(0.0) @ v.double()


def explain(test, fn, *args):
    """torch._dynamo.explain: no graph break, and attn_jit's op in the graph."""
    torch._dynamo.reset()
    e = torch._dynamo.explain(fn)(*args)
    test.assertEqual(e.graph_break_count, 0, e.break_reasons)
    test.assertEqual(e.graph_count, 1)
    test.assertIn("attn_jit.attention", str(e.graphs[0].graph))
    return e


@unittest.skipIf(NO_CUDA, NO_CUDA)
class TorchCUDA(Base):
    def against_sdpa(self, B, H, Hkv, Nq, Nk, D, dtype, causal=False, bnhd=False):
        q, k, v = self.qkv(B, H, Hkv, Nq, Nk, D, dtype, "cuda", bnhd=bnhd)
        gqa = H != Hkv
        o, lse = attn_jit.attention(q, k, v, causal=causal, enable_gqa=gqa, return_lse=True)
        ref_o, ref_lse = reference(torch, q, k, v, "causal" if causal else "none", 1 / math.sqrt(D))
        with torch.inference_mode():
            sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        err, err_sdpa = rel_err(torch, o, ref_o), rel_err(torch, sdpa, ref_o)
        # The floor, twice the error of rounding the exact O to the dtype, is
        # for shapes where SDPA falls back to its float32 math backend.
        tol = max(1.25 * err_sdpa, 2 * rel_err(torch, ref_o.to(dtype), ref_o))
        name = f"B={B} H={H} Hkv={Hkv} Nq={Nq} Nk={Nk} D={D} {dtype} causal={causal} bnhd={bnhd}"
        print(f"  {name}: err {err:.2e}, sdpa {err_sdpa:.2e}", file=sys.stderr)
        self.assertLessEqual(err, tol, name)
        self.check_lse(lse, ref_lse)
        return q, o

    def test_plain_against_sdpa(self):
        self.against_sdpa(2, 8, 8, 256, 256, 128, torch.bfloat16)
        self.against_sdpa(2, 8, 8, 300, 300, 128, torch.bfloat16, causal=True)
        self.against_sdpa(1, 4, 4, 1000, 1000, 64, torch.float16, causal=True)
        self.against_sdpa(2, 4, 4, 77, 200, 96, torch.float16)
        self.against_sdpa(2, 4, 4, 200, 77, 64, torch.bfloat16, causal=True)

    def test_gqa_against_sdpa(self):
        self.against_sdpa(2, 16, 4, 300, 300, 64, torch.bfloat16, causal=True)
        self.against_sdpa(2, 8, 2, 512, 512, 128, torch.float16)
        self.against_sdpa(4, 32, 1, 1, 2048, 128, torch.bfloat16)      # MQA decode
        self.against_sdpa(2, 32, 8, 4, 1000, 128, torch.float16)      # GQA, 4 queries

    def test_eager_skips_the_op(self):
        self.check_eager_skips_the_op(torch.bfloat16, "cuda")

    def test_bnhd_inputs_are_not_copied(self):
        with mock.patch.object(_torch, "contiguous", wraps=_torch.contiguous) as copy:
            q, o = self.against_sdpa(2, 8, 2, 256, 256, 64, torch.bfloat16, causal=True, bnhd=True)
        self.assertEqual(copy.call_count, 0)
        self.assertTrue(o.transpose(1, 2).is_contiguous())

    def test_unaligned_inputs_are_copied(self):
        # A view starting 2 elements into its storage is not 16-byte aligned.
        q, k, v = self.qkv(1, 2, 2, 64, 64, 64, torch.bfloat16, "cuda")
        qv = torch.randn(2 + q.numel(), dtype=q.dtype, device="cuda")[2:].view(q.shape)
        with mock.patch.object(_torch, "contiguous", wraps=_torch.contiguous) as copy:
            o = attn_jit.attention(qv, k, v)
        self.assertEqual(copy.call_count, 1)
        ref_o, _ = reference(torch, qv, k, v, "none", 1 / 8)
        self.assertLess(rel_err(torch, o, ref_o), 1e-2)

    def test_current_stream(self):
        # Q is written on a side stream after a long sleep there: a call on any
        # other stream would read it before it is written.
        q0, k, v = self.qkv(1, 4, 4, 128, 128, 64, torch.bfloat16, "cuda")
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)
            q = q0 * 2
            o = attn_jit.attention(q, k, v)
        torch.cuda.synchronize()
        ref_o, _ = reference(torch, q0 * 2, k, v, "none", 1 / 8)
        self.assertLess(rel_err(torch, o, ref_o), 1e-2)

    def test_backward_against_sdpa(self):
        for shape in [(2, 8, 2, 300, 300, 128), (2, 4, 4, 256, 256, 64)]:
            B, H, Hkv, Nq, Nk, D = shape
            ours, ref, (q, k, v, w) = self.grads_against_float64(*shape, torch.bfloat16, "cuda", True)
            leaves = [x.detach().clone().requires_grad_() for x in (q, k, v)]
            o = F.scaled_dot_product_attention(*leaves, is_causal=True, enable_gqa=H != Hkv)
            (o * w).sum().backward()
            for name, x, s, r in zip(("dq", "dk", "dv"), ours, (y.grad for y in leaves), ref):
                err, err_sdpa = rel(x, r), rel(s, r)
                print(f"  backward {shape} {name}: err {err:.2e}, sdpa {err_sdpa:.2e}", file=sys.stderr)
                self.assertLessEqual(err, 1.25 * err_sdpa, f"{name} {shape}")

    def test_traced_mods_on_cuda(self):
        # The same traced mods on CUDA, bf16: O and the gradients within 2.5x
        # the rounding error of the float64 results (no torch kernel has them).
        for name, x, r in self.traced_mods_against_float64(2, 4, 300, 64, torch.bfloat16, "cuda", 77):
            err, floor = rel(x, r), rel(r.to(torch.bfloat16), r)
            print(f"  traced mods {name}: err {err:.2e}, rounding {floor:.2e}", file=sys.stderr)
            self.assertLessEqual(err, 2.5 * floor, name)

    def test_variants_against_flex(self):
        # Each named variant, and Python mods, through the package's own call,
        # against torch's FlexAttention (compiled) on the same inputs: both
        # against float64, ours within 1.25x Flex's error (or 2x the error of
        # rounding the exact O to bf16). Flex gets the Python functions; the
        # traced case hands attn_jit the very same ones.
        from torch.nn.attention.flex_attention import create_block_mask
        from test_variants import flex_with_fallbacks
        B, H, N, D = 2, 4, 1000, 64
        q, k, v = self.qkv(B, H, H, N, N, D, torch.bfloat16, "cuda")
        g = torch.Generator(device="cuda").manual_seed(7)
        slopes = torch.tensor([2.0 ** (-(h + 1)) for h in range(H)], device="cuda")
        bias = torch.randn(N, N, device="cuda", generator=g)
        docs = torch.sort(torch.randint(0, 5, (N,), device="cuda", generator=g, dtype=torch.int32)).values
        traced_score = alibi_softcap(slopes, cap=20.0)
        cases = [  # name, attn_jit keywords, Flex's score_mod, Flex's mask_mod
            ("window", dict(causal=True, window=(63, 0)), None,
             lambda b, h, i, j: (j <= i) & (i - j <= 63)),
            ("softcap", dict(softcap=20.0), lambda s, b, h, i, j: 20.0 * torch.tanh(s / 20.0), None),
            ("alibi", dict(causal=True, alibi_slopes=slopes), lambda s, b, h, i, j: s + slopes[h] * (j - i),
             lambda b, h, i, j: j <= i),
            ("document", dict(document_ids=docs), None, lambda b, h, i, j: docs[i] == docs[j]),
            ("bias", dict(bias=bias), lambda s, b, h, i, j: s + bias[i, j], None),
            ("traced mods", dict(score_mod=traced_score, mask_mod=WINDOW_MOD), traced_score, WINDOW_MOD),
        ]
        for name, kw, score_mod, mask_mod in cases:
            o = attn_jit.attention(q, k, v, **kw)
            block = create_block_mask(mask_mod, B, H, N, N, device="cuda") if mask_mod else None
            o_flex, opts = flex_with_fallbacks(q, k, v, score_mod=score_mod, block_mask=block)
            ref = mods_reference(q, k, v, score_mod, mask_mod)
            err, err_flex, floor = rel(o, ref), rel(o_flex, ref), rel(ref.to(torch.bfloat16), ref)
            print(f"  {name}: err {err:.2e}, flex {err_flex:.2e} (kernel_options {opts}), "
                  f"rounding {floor:.2e}", file=sys.stderr)
            self.assertLessEqual(err, max(1.25 * err_flex, 2 * floor), name)

    def test_float32_is_refused_on_cuda(self):
        q = torch.randn(1, 1, 8, 64, device="cuda")
        with self.assertRaisesRegex(attn_jit.UnsupportedError, "f32 is supported on the host device only"):
            attn_jit.attention(q, q, q)

    def test_tensors_on_two_devices_are_refused(self):
        q = torch.randn(1, 1, 8, 64, device="cuda", dtype=torch.bfloat16)
        with self.assertRaisesRegex(Exception, "device"):   # ours, or the dispatcher's
            attn_jit.attention(q, q.cpu(), q.cpu())

    def test_compiled_block(self):
        for with_score_mod in (False, True):
            block, ref_block, x = make("cuda", torch.bfloat16, with_score_mod=with_score_mod)
            with torch.inference_mode():
                explain(self, block, x)
                torch._dynamo.reset()
                compiled = torch.compile(block, fullgraph=True)
                y, yc, ref = block(x), compiled(x), ref_block(x)
            print(f"  block (score_mod: {with_score_mod}): |compiled - eager| {rel(yc, y):.2e}, "
                  f"|attn_jit - plain torch| {rel(y, ref):.2e}", file=sys.stderr)
            self.assertLess(rel(yc, y), 2e-2)
            self.assertLess(rel(y, ref), 2e-2)

    def test_host_overhead(self):
        q, k, v = self.qkv(1, 8, 8, 128, 128, 64, torch.bfloat16, "cuda")
        op = torch.ops.attn_jit.attention.default
        with torch.inference_mode():
            eager = per_call_us(lambda: attn_jit.attention(q, k, v, causal=True))
            via_op = per_call_us(lambda: op(q, k, v, True, None, False, False))
            general = per_call_us(lambda: _core.forward(_torch, q, k, v, True, None, False, False))
            sdpa = per_call_us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
        print(f"  host time per cached call (1x8x128x64 bf16 causal): attn_jit.attention {eager:.1f} us "
              f"(through the custom op: {via_op:.1f} us, the general path: {general:.1f} us), "
              f"torch SDPA {sdpa:.1f} us, ratio {eager / sdpa:.2f}", file=sys.stderr)
        self.assertLess(eager, 1000)


def per_call_us(fn, n=500):
    """Host microseconds per call: the GPU runs behind, a small kernel takes
    less than the launch, so the loop measures the host's side."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def main():
    if NO_TORCH:
        print(f"SKIP: {NO_TORCH}")
        return 77
    print(f"# test_torch: torch {torch.__version__}, attn_jit from {os.path.dirname(attn_jit.__file__)}, "
          f"library {attn_jit.library_path()} ({attn_jit.version()}), "
          f"{torch.cuda.get_device_name() if not NO_CUDA else NO_CUDA}", flush=True)
    prog = unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[1:], exit=False)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print(f"{r.testsRun - failed - len(r.skipped)} passed, {failed} failed, {len(r.skipped)} skipped")
    return 0 if r.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
