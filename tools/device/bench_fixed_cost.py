#!/usr/bin/env python3
"""A CTA's fixed cost: attn-jit against torch SDPA's cuDNN backend over N at a fixed token count.

    PYTHONPATH=BUNDLE/python python3 tools/device/bench_fixed_cost.py [--tokens 16384] [--heads 16]
        [--d 128] [--n 128,256,...] [--reps 30]

B = tokens / N, (B, H, N, D) bf16 contiguous, causal and not; CUDA events around
each call (the torch API), median of --reps after 5 warm-up calls. Besides the
times it prints "us / wave": the time over the waves of 128-row query tiles
(B * H * ceil(N / 128) CTAs over the SMs). Without a mask a CTA visits N / 128
K/V tiles, so the slope of us / wave against N / 128 is a tile's cost and the
intercept a CTA's fixed cost (docs/BENCHMARKS.md, version 29).
Exit 77 without torch or a GPU.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--n", default="128,256,512,1024,2048,4096")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel, SDPBackend
        import attn_jit
    except ImportError as e:
        print(f"SKIP: {e}")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: no GPU")
        return 77
    from sdpa_anchors import time_events
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    H, D = args.heads, args.d
    for causal in (True, False):
        for N in (int(x) for x in args.n.split(",")):
            B = max(1, args.tokens // N)
            q, k, v = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            flops = 4 * B * H * N * N * D / (2 if causal else 1)
            jit = time_events(torch, lambda i: attn_jit.attention(q, k, v, causal=causal), 5, args.reps)[0]
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                cudnn = time_events(torch, lambda i: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                    5, args.reps)[0]
            waves = B * H * ((N + 127) // 128) / sms
            print(f"causal={int(causal)} N={N:6d} B={B:4d}  attn-jit {jit * 1e3:9.1f} us {flops / jit / 1e9:6.1f} TF/s"
                  f"  cuDNN {cudnn * 1e3:9.1f} us {flops / cudnn / 1e9:6.1f} TF/s  ratio {cudnn / jit:.3f}"
                  f"  us/wave {jit * 1e3 / waves:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
