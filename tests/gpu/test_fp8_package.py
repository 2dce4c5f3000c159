#!/usr/bin/env python3
"""attn_jit.attention_fp8 (the Python package's FP8 forward) on the GPU.

    PYTHONPATH=<bundle>/python ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so python3 test_fp8_package.py [--seed S]

Exit 0 all passed, 1 a check failed, 77 "SKIP: ..." without torch, a GPU or
torch.float8_e4m3fn.

The kernels are test_fp8.py's (attn_forward_fp8); this checks the package's
call around them, on fresh random inputs (the seed is printed):
  * O and the LSE bitwise equal to a direct attn_forward_fp8 call (the
    ctypes helper) on the same bytes, for V with its keys contiguous (read
    in place) and V contiguous (copied by the package), Q in (B, H, N, D) and
    transposed (B, N, H, D) memory, GQA, causal and not, D 64 and 128; O
    bfloat16 in Q's memory order; O within test_fp8's FP8_TOL of float64 of
    the dequantised inputs;
  * the same call under torch.compile(fullgraph=True) (the custom op
    attn_jit::attention_fp8 in the graph): bitwise equal to eager;
  * CPU tensors (the runtime's host path, its own tiles): within FP8_TOL of
    float64, as the GPU's;
  * refused calls raise the package's errors, never crash: bfloat16 inputs,
    mismatched shapes, a NumPy array, a negative descale, D = 48.
"""
import argparse
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attn_jit_ctypes as aj  # noqa: E402
import test_attention as ta  # noqa: E402
import test_fp8  # noqa: E402

# (B, H, Hkv, Nq, Nk, D, causal, q layout, v layout)
CASES = [
    (2, 4, 4, 300, 300, 64, False, "bhnd", "keys"),
    (1, 8, 2, 513, 777, 128, True, "bnhd", "contiguous"),
    (2, 4, 2, 128, 1000, 128, False, "bhnd", "contiguous"),
    (1, 2, 2, 1, 4099, 64, False, "bnhd", "keys"),
]


def quantise(torch, x):
    descale = float(x.abs().amax()) / test_fp8.E4M3_MAX
    return (x / descale).to(torch.float8_e4m3fn), descale


def make_case(torch, gen, B, H, Hkv, Nq, Nk, D, q_layout, v_layout):
    def randn(*shape):
        return torch.randn(*shape, device="cuda", generator=gen)
    q8, dq = quantise(torch, randn(B, Nq, H, D).transpose(1, 2) if q_layout == "bnhd" else randn(B, H, Nq, D))
    k8, dk = quantise(torch, randn(B, Hkv, Nk, D))
    v8, dv = quantise(torch, randn(B, Hkv, Nk, D))
    if v_layout == "keys":  # read in place: keys contiguous, rows of keys padded to 16 bytes
        rows = torch.empty(B, Hkv, D, Nk + (-Nk) % 16, dtype=v8.dtype, device="cuda")[..., :Nk]
        rows.copy_(v8.transpose(2, 3))
        v8 = rows.transpose(2, 3)
    return q8, k8, v8, (dq, dk, dv)


def direct(torch, lib, q8, k8, v8, descale, causal):
    """attn_forward_fp8 through the ctypes helper, V copied keys-contiguous
    (rows of keys padded to 16 bytes)."""
    B, H, Nq, D = q8.shape
    Bk, Hkv, Nk, _ = v8.shape
    vt = torch.empty(Bk, Hkv, D, Nk + (-Nk) % 16, dtype=v8.dtype, device=v8.device)[..., :Nk]
    vt.copy_(v8.transpose(2, 3))
    vt = vt.transpose(2, 3)
    o = torch.full((B, H, Nq, D), float("nan"), dtype=torch.bfloat16, device=q8.device)
    lse = torch.full((B, H, Nq), float("nan"), device=q8.device)
    st, msg = lib.forward_fp8(q8, k8, vt, o, lse, descale, "causal" if causal else "none")
    if st != aj.ATTN_OK:
        raise RuntimeError(f"attn_forward_fp8: {msg}")
    return o, lse


def expect_error(what, error, fn):
    try:
        fn()
    except error as ex:
        return True, f"{what}: {type(ex).__name__} ({str(ex).splitlines()[0][:90]})"
    except Exception as ex:  # noqa: BLE001 - any other exception is the failure reported
        return False, f"{what}: expected {error.__name__}, got {type(ex).__name__}: {ex}"
    return False, f"{what}: expected {error.__name__}, the call returned"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    torch = test_fp8.torch_with_fp8()
    if torch is None:
        return 77
    import attn_jit
    lib = aj.AttnJit(attn_jit.library_path())
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}")
    gen = torch.Generator(device="cuda").manual_seed(seed)
    compiled = torch.compile(attn_jit.attention_fp8, fullgraph=True)
    failed = 0

    def report(ok, note):
        nonlocal failed
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {note}", flush=True)

    for B, H, Hkv, Nq, Nk, D, causal, q_layout, v_layout in CASES:
        name = f"B={B} H={H} Hkv={Hkv} Nq={Nq} Nk={Nk} D={D} {'causal' if causal else 'none'} q {q_layout} v {v_layout}"
        q8, k8, v8, descale = make_case(torch, gen, B, H, Hkv, Nq, Nk, D, q_layout, v_layout)
        kw = dict(q_descale=descale[0], k_descale=descale[1], v_descale=descale[2], causal=causal,
                  enable_gqa=Hkv != H, return_lse=True)
        o, lse = attn_jit.attention_fp8(q8, k8, v8, **kw)
        torch.cuda.synchronize()
        ref_o, ref_lse = direct(torch, lib, q8, k8, v8, descale, causal)
        # Q's memory order (one layout, the plain one, with H = 1 or Nq = 1).
        order_ok = (o.stride(1) < o.stride(2)) == (q_layout == "bnhd" and H > 1 and Nq > 1)
        same = torch.equal(o, ref_o) and torch.equal(lse, ref_lse)
        want, _ = ta.reference(torch, q8.double() * descale[0], k8.double() * descale[1],
                               v8.double() * descale[2], "causal" if causal else "none", 1 / math.sqrt(D))
        err = ta.rel_err(torch, o, want)
        report(same and order_ok and o.dtype == torch.bfloat16 and err <= test_fp8.FP8_TOL,
               f"{name}: bitwise = direct call {same}, O bf16 in Q's order {order_ok}, rel err {err:.2e}")
        oc, lc = compiled(q8, k8, v8, **kw)
        report(torch.equal(oc, o) and torch.equal(lc, lse), f"{name}: torch.compile(fullgraph) bitwise = eager")
        o_only = attn_jit.attention_fp8(q8, k8, v8, **dict(kw, return_lse=False))
        report(torch.equal(o_only, o), f"{name}: return_lse=False gives the same O")
    # The host path on CPU tensors (the same roundings and tiles), the first case.
    B, H, Hkv, Nq, Nk, D, causal, q_layout, v_layout = CASES[0]
    q8, k8, v8, descale = make_case(torch, gen, B, H, Hkv, Nq, Nk, D, q_layout, v_layout)
    kw = dict(q_descale=descale[0], k_descale=descale[1], v_descale=descale[2], causal=causal)
    o_gpu = attn_jit.attention_fp8(q8, k8, v8, **kw)
    o_cpu = attn_jit.attention_fp8(q8.cpu(), k8.cpu(), v8.cpu(), **kw)
    want, _ = ta.reference(torch, q8.double() * descale[0], k8.double() * descale[1],
                           v8.double() * descale[2], "causal" if causal else "none", 1 / math.sqrt(D))
    err, err_gpu = ta.rel_err(torch, o_cpu.cuda(), want), ta.rel_err(torch, o_gpu, want)
    report(o_cpu.device.type == "cpu" and o_cpu.dtype == torch.bfloat16 and err <= test_fp8.FP8_TOL,
           f"CPU tensors (host path): rel err {err:.2e} (the GPU's {err_gpu:.2e})")
    # Refused calls.
    bf = q8.to(torch.bfloat16)
    for what, error, fn in (
            ("bfloat16 inputs", attn_jit.UnsupportedError,
             lambda: attn_jit.attention_fp8(bf, bf, bf)),
            ("k with another head dim", attn_jit.InvalidArgumentError,
             lambda: attn_jit.attention_fp8(q8, q8[..., :32].contiguous(), v8)),
            ("a NumPy q", TypeError,
             lambda: attn_jit.attention_fp8(q8.cpu().float().numpy(), k8, v8)),
            ("descale -1", attn_jit.InvalidArgumentError,
             lambda: attn_jit.attention_fp8(q8, k8, v8, q_descale=-1.0)),
            ("D = 48 on CUDA", attn_jit.AttnJitError,
             lambda: attn_jit.attention_fp8(*(x[..., :48].contiguous() for x in (q8, k8, v8))))):
        report(*expect_error(what, error, fn))
    print(f"{'all passed' if not failed else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
