#!/usr/bin/env python3
"""The backward's kernels one at a time: one attn_backward call per tile
shape, for a profiler to time each kernel (the dQ grid, the K/V tiles' grid)
on its own, e.g.

    ncu --metrics gpu__time_duration.sum -k regex:attn_bwd \\
        python3 tools/device/backward_kernels.py --tiles 0,0 128,64 --n 8192

Shapes and inputs bench_backward.py's (B * N = 16k tokens, H = 2048 / D, bf16); each
tile shape's call runs twice (the first compiles and loads), and between
shapes a marker line names the next one, so that the profiler's kernels can
be told apart in order: per shape and mask, the second call's kernels are
the timed ones. Exit 0 done, 1 a call failed, 77 no torch / GPU.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)
from attn_jit_ctypes import ATTN_OK, AttnJit, default_lib_path, torch_on_cuda  # noqa: E402
from bench_backward import backward_tensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiles", nargs="+", default=["0,0"], help="block_m,block_n per call (0,0: the policy's)")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--masks", default="none,causal")
    args = ap.parse_args()
    torch = torch_on_cuda()
    if torch is None:
        return 77
    lib = AttnJit(default_lib_path())
    d, n = args.d, args.n
    _, _, q, k, v, do, o, lse, dq, dk, dv = backward_tensors(torch, d, n)
    for mask in args.masks.split(","):
        st, msg = lib.forward(q, k, v, o, lse, "bf16", mask)
        if st != ATTN_OK:
            print(f"forward failed ({mask}): {msg}")
            return 1
        for text in args.tiles:
            tiles = tuple(int(x) for x in text.split(","))
            print(f"=== D={d} N={n} {mask} tiles {tiles[0]}x{tiles[1]}: two calls", flush=True)
            for _ in range(2):
                st, msg = lib.backward(q, k, v, o, lse, do, dq, dk, dv, "bf16", mask, tiles=tiles)
                if st != ATTN_OK:
                    print(f"backward failed: {msg}")
                    return 1
            torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
