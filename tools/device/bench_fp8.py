#!/usr/bin/env python3
"""FP8 (e4m3) forward: attn-jit's attn_forward_fp8 against its own bf16
forward and torch SDPA's cuDNN and FlashAttention-2 (bf16) backends, one GPU run.

    ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so python3 tools/device/bench_fp8.py
        [--reps 20] [--warmup 5] [--shapes D:N,...] [--tiles M,N] [--json FILE]
        [--other-lib OTHER/libattn-jit.so] [--other-env VAR=VALUE,...] [--other-tiles M,N]

Shapes (FlashAttention convention): B * N = 16k tokens, H = 2048 / D heads,
(B, H, N, D) contiguous; V of the FP8 call stored with its keys contiguous
(attn_forward_fp8's rule). Default D = 128 and 256 at N = 8k (issue 16's FP8
rows), causal and not. Timing: CUDA events around each call, median of --reps
after --warmup (tools/device/sdpa_anchors.time_events); TFLOP/s = 4 B H N^2 D
(half of it causal) over the median. The FP8 result is checked first against
float64 of the dequantised inputs on the first batch row and head (rel error
printed; > 6e-2 marks the row WRONG).
--other-lib times a second build's FP8 call in the same process (an A/B of
two versions: column "other ms", and this build's time over it);
--other-env sets variables while the other library's engine starts, so that a
copy of this library at another path compares one setting with another
(e.g. --other-env ATTN_JIT_EXP2_FMA=4); --other-tiles gives the other
library's calls tiles of their own (default: --tiles), to A/B a tile choice.
Exit 0 done, 1 a call failed or WRONG, 77 no torch / GPU.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)
import attn_jit_ctypes as aj  # noqa: E402
import sdpa_anchors  # noqa: E402
import test_attention as ta  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=aj.default_lib_path())
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--shapes", default="128:8192,256:8192")
    ap.add_argument("--tiles", default="0,0", help="block_m,block_n of the FP8 calls (0: default)")
    ap.add_argument("--json", default="")
    ap.add_argument("--other-lib", default="", help="a second libattn-jit.so whose FP8 call is timed too")
    ap.add_argument("--other-env", default="", help="VAR=VALUE,... while --other-lib's engine starts")
    ap.add_argument("--other-tiles", default="", help="block_m,block_n of --other-lib's calls (default: --tiles)")
    args = ap.parse_args()
    torch = aj.torch_on_cuda()
    if torch is None:
        return 77
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    lib = aj.start_library(args.lib, {})
    other = aj.start_library(args.other_lib, aj.parse_env(args.other_env)) if args.other_lib else None
    tiles = tuple(int(x) for x in args.tiles.split(","))
    other_tiles = tuple(int(x) for x in args.other_tiles.split(",")) if args.other_tiles else tiles
    bad = 0
    print(f"{'shape':28} {'fp8 ms':>8} {'TF/s':>6} {'bf16 ms':>8} {'TF/s':>6} {'cuDNN TF/s':>10} "
          f"{'FA2 TF/s':>9} {'fp8/bf16':>8} {'fp8/cuDNN':>9} {'err fp8':>8}"
          + (f" {'other ms':>9} {'other/this':>10}" if other else ""))
    for spec in args.shapes.split(","):
        D, N = (int(x) for x in spec.split(":"))
        B, H = max(1, 16384 // N), 2048 // D
        for causal in (False, True):
            mask = "causal" if causal else "none"
            gen = torch.Generator(device="cuda").manual_seed(N + D)
            q, k, v = (torch.randn(B, H, N, D, device="cuda", generator=gen) for _ in range(3))
            q8, dq = (q / (q.abs().amax() / 448)).to(torch.float8_e4m3fn), float(q.abs().amax()) / 448
            k8, dk = (k / (k.abs().amax() / 448)).to(torch.float8_e4m3fn), float(k.abs().amax()) / 448
            v8, dv = (v / (v.abs().amax() / 448)).to(torch.float8_e4m3fn), float(v.abs().amax()) / 448
            vt = v8.transpose(-1, -2).contiguous().transpose(-1, -2)   # keys contiguous
            qb, kb, vb = (x.to(torch.bfloat16) for x in (q, k, v))
            o8 = torch.full((B, H, N, D), float("nan"), dtype=torch.bfloat16, device="cuda")
            ob = torch.empty_like(qb)
            lse = torch.empty(B, H, N, device="cuda")
            st, msg = lib.forward_fp8(q8, k8, vt, o8, lse, (dq, dk, dv), mask, tiles=tiles)
            if st != aj.ATTN_OK:
                print(f"D={D} N={N} {mask}: attn_forward_fp8 failed: {msg}")
                bad += 1
                continue
            torch.cuda.synchronize()
            sl = (slice(0, 1), slice(0, 1))
            ref, _ = ta.reference(torch, q8[sl].double() * dq, k8[sl].double() * dk, v8[sl].double() * dv,
                                  mask, 1 / math.sqrt(D))
            err = ta.rel_err(torch, o8[sl], ref)
            wrong = not (err <= 6e-2)
            bad += wrong
            flops = 4 * B * H * N * N * D / (2 if causal else 1)
            fp8 = sdpa_anchors.time_events(
                torch, lambda i: lib.forward_fp8(q8, k8, vt, o8, lse, (dq, dk, dv), mask, tiles=tiles)[0],
                args.warmup, args.reps)[0]
            bf16 = sdpa_anchors.time_events(
                torch, lambda i: lib.forward(qb, kb, vb, ob, lse, "bf16", mask)[0], args.warmup, args.reps)[0]
            sdpa = {}
            for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
                def call(i, backend=backend):
                    with sdpa_kernel(backend):
                        F.scaled_dot_product_attention(qb, kb, vb, is_causal=causal)
                try:
                    sdpa[name] = sdpa_anchors.time_events(torch, call, args.warmup, args.reps)[0]
                except RuntimeError:
                    sdpa[name] = float("nan")
            other_ms = float("nan")
            if other:
                other_ms = sdpa_anchors.time_events(
                    torch, lambda i: other.forward_fp8(q8, k8, vt, o8, lse, (dq, dk, dv), mask, tiles=other_tiles)[0],
                    args.warmup, args.reps)[0]
            tf = lambda ms: flops / ms / 1e9  # noqa: E731
            print(f"{f'D={D} N={N} B={B} H={H} {mask}':28} {fp8:8.3f} {tf(fp8):6.0f} {bf16:8.3f} "
                  f"{tf(bf16):6.0f} {tf(sdpa['cudnn']):10.0f} {tf(sdpa['fa2']):9.0f} {bf16 / fp8:8.2f} "
                  f"{sdpa['cudnn'] / fp8:9.2f} {err:8.1e}"
                  + (f" {other_ms:9.3f} {other_ms / fp8:10.3f}" if other else "")
                  + (" WRONG" if wrong else ""), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(dict(D=D, N=N, B=B, H=H, mask=mask, fp8_ms=fp8, bf16_ms=bf16,
                                            cudnn_ms=sdpa["cudnn"], fa2_ms=sdpa["fa2"], other_ms=other_ms,
                                            err=err)) + "\n")
            del q, k, v, q8, k8, v8, vt, qb, kb, vb, o8, ob, lse
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
