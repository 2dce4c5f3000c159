#!/usr/bin/env python3
"""The backward pass: attn-jit against torch SDPA's FlashAttention-2 and cuDNN backends, one GPU run.

    ATTN_JIT_LIB=.../libattn-jit.so python3 tools/device/bench_backward.py
        [--reps 10] [--warmup 3] [--rounds 2] [--dims 64,128] [--seqlens 512,2048,8192,16384]
        [--old-lib OLD/lib/libattn-jit.so [--old-env VAR=VALUE,...]] [--jit-tiles M,N]
        [--json FILE] [--time-limit S]

A/B in one process: --old-lib loads a second build of the library beside
ATTN_JIT_LIB's (ctypes, a handle each) and times it as method "old" on the
same inputs; --jit-tiles also times ATTN_JIT_LIB's backward with tiles
block_m x block_n (attn_fwd_args.block_m/block_n) as method "attn-jit MxN".
Each shape prints every method's time over attn-jit's ("ratio vs", > 1:
attn-jit faster); a last line per extra method, "ab summary:", gives the
median and minimum of that ratio over the shapes.
Mapping A/B: ATTN_JIT_TENSOR_CORES=wgmma or mma.sync for the whole process.
Form A/B: --deterministic 0|1 and --old-deterministic 0|1 set each library's
backward form (attn_set_deterministic); with --old-lib a copy of the same
build at another path, e.g. ATTN_JIT_GPU_ATOMIC_BACKWARD=1 ... --deterministic
0 --old-deterministic 1 times the wgmma atomic form against the deterministic.
Setting A/B: --old-env VAR=VALUE,... is set while --old-lib's engine starts
(e.g. a copy of this build with ATTN_JIT_EXP2_FMA=4).

Shapes (FlashAttention's convention): bf16, (B, H, N, D) contiguous, H = 2048 / D
heads, batch so that B * N = 16k tokens; causal and not.
Timed (tools/device/sdpa_anchors.time_events: CUDA events, median of --reps
after --warmup; per shape the methods run in the order attn-jit, the extra
attn-jit methods, fa2, cudnn, then reversed, for --rounds rounds, and each
time is the median of its rounds' medians, so that clock drift over a
shape's timing favours no method; before the rounds every method runs
--warmup untimed calls, so that the first one timed does not run on a GPU
that idled through the shape's setup -- before version 45 attn-jit, timed
first, gained 5-10 % from that): "bwd", the backward alone (attn-jit: attn_backward; torch:
autograd's backward of one SDPA call, its graph retained, gradients reset to
None before each call), and "fwd+bwd" (attn-jit: attn_forward with the LSE
then attn_backward; torch: SDPA then backward). TFLOP/s count the forward as
4 * B * H * N^2 * D (half with a causal mask) and the backward as 2.5 times
that. Extra memory: attn-jit's backward allocates B * H * N floats of row
terms (stream-ordered, freed after the call), and where the library takes
the atomic form (asked for by --deterministic 0 or ATTN_JIT_DETERMINISTIC=0,
allowed by ATTN_JIT_GPU_ATOMIC_BACKWARD=1, mapped: wgmma up to D = 128)
dQ's accumulator, B * H * N * D floats more; torch's is its peak allocation
(torch.cuda.max_memory_allocated) over one forward and backward, less the
output and the three gradients. The JSON rows keep each round's median
(round_bwd_ms, round_both_ms).
Exit 0 done, 1 attn-jit failed, 77 no torch / GPU.
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)

TOKENS = 16384


def backward_tensors(torch, d, n):
    """The convention shape's (B * N = 16k tokens, H = 2048 / D, bf16) tensors
    of one backward call, seeded by n + d: (B, H, q, k, v, dO, o, lse, dq, dk,
    dv), o, the LSE and the gradients left empty."""
    h, b = 2048 // d, max(1, TOKENS // n)
    g = torch.Generator(device="cuda").manual_seed(n + d)
    q, k, v, do = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
                   for _ in range(4))
    o = torch.empty_like(q)
    lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
    return b, h, q, k, v, do, o, lse, dq, dk, dv


def takes_atomic(torch, d, asked, gpu_atomic):
    """Whether a library's backward at head dim d takes the atomic form,
    whose dQ accumulator (B * H * N * D floats) is workspace too: asked for,
    allowed on CUDA (ATTN_JIT_GPU_ATOMIC_BACKWARD=1), and mapped there --
    wgmma on sm_90a up to D = 128 in multiples of 64 (mapsAtomicBackward in
    TilePolicy.cpp); anything else runs the deterministic kernels."""
    return (asked and gpu_atomic and d <= 128 and d % 64 == 0
            and torch.cuda.get_device_capability() == (9, 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2,
                    help="timing rounds per shape, the methods' order reversed each round")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--seqlens", default="512,2048,8192,16384")
    ap.add_argument("--old-lib", default="", help="a second libattn-jit.so, timed as method 'old'")
    ap.add_argument("--old-env", default="", help="VAR=VALUE,... while --old-lib's engine starts")
    ap.add_argument("--jit-tiles", default="", help="M,N: also time attn-jit's backward with these tiles")
    ap.add_argument("--deterministic", choices=("0", "1"), default="",
                    help="attn_set_deterministic for ATTN_JIT_LIB's library (default: its own)")
    ap.add_argument("--old-deterministic", choices=("0", "1"), default="",
                    help="the same for --old-lib's (one build against itself: start_library loads the path again from a copy)")
    ap.add_argument("--json", default="")
    ap.add_argument("--time-limit", type=float, default=0)
    args = ap.parse_args()
    from attn_jit_ctypes import torch_on_cuda
    torch = torch_on_cuda()
    if torch is None:
        return 77
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from attn_jit_ctypes import ATTN_OK, AttnJit, default_lib_path, parse_env, start_library
    from sdpa_anchors import round_orders, settle, time_events
    lib = AttnJit(default_lib_path())
    old_lib = start_library(args.old_lib, parse_env(args.old_env)) if args.old_lib else None
    # The backward's form per library (each handle its own engine), so the
    # atomic and deterministic forms of one build can be timed side by side;
    # `forms` keeps (atomic form asked for, ATTN_JIT_GPU_ATOMIC_BACKWARD=1) as
    # its engine saw them at start or as set here.
    forms = {}
    for chosen, which, env in ((args.deterministic, lib, {}),
                               (args.old_deterministic, old_lib, parse_env(args.old_env))):
        if which is None:
            continue
        if chosen:
            which.set_deterministic(chosen == "1")
        seen = dict(os.environ, **env)
        asked = chosen == "0" if chosen else seen.get("ATTN_JIT_DETERMINISTIC", "1") == "0"
        forms[id(which)] = (asked, seen.get("ATTN_JIT_GPU_ATOMIC_BACKWARD", "0") == "1")
    tiles = tuple(int(x) for x in args.jit_tiles.split(",")) if args.jit_tiles else None
    # Extra attn-jit methods: (name, library, tiles), timed like attn-jit.
    variants = ([("old", old_lib, (0, 0))] if old_lib else []) + \
        ([(f"attn-jit {tiles[0]}x{tiles[1]}", lib, tiles)] if tiles else [])
    start = time.time()
    rows = []
    failed = False
    print(f"{'D':>4} {'N':>6} {'mask':>6} {'method':>8} {'bwd ms':>8} {'bwd TF/s':>9} "
          f"{'f+b ms':>8} {'f+b TF/s':>9} {'extra MiB':>9}")
    for d in (int(x) for x in args.dims.split(",")):
        for n in (int(x) for x in args.seqlens.split(",")):
            for causal in (False, True):
                if args.time_limit and time.time() - start > args.time_limit:
                    print("time limit reached: later rows skipped")
                    break
                mask = "causal" if causal else "none"
                b, h, q, k, v, do, o, lse, dq, dk, dv = backward_tensors(torch, d, n)
                fwd_flops = 4 * b * h * n * n * d * (0.5 if causal else 1.0)
                stream = torch.cuda.current_stream().cuda_stream

                def ours_fwd(_):
                    return lib.forward(q, k, v, o, lse, "bf16", mask, stream=stream)[0]

                def ours_bwd(_):
                    return lib.backward(q, k, v, o, lse, do, dq, dk, dv, "bf16", mask, stream=stream)[0]
                st, msg = lib.forward(q, k, v, o, lse, "bf16", mask, stream=stream)
                st2, msg2 = (lib.backward(q, k, v, o, lse, do, dq, dk, dv, "bf16", mask, stream=stream)
                             if st == ATTN_OK else (st, msg))
                if st2 != ATTN_OK:
                    print(f"attn-jit failed at D={d} N={n} {mask}: {msg2}")
                    failed = True
                    continue
                # Methods: (name, context for its calls, bwd fn, fwd+bwd fn, extra MiB).
                # The row terms, and the atomic form's dQ accumulator where
                # the library takes that form.
                def extra_mib(which):
                    atomic = takes_atomic(torch, d, *forms[id(which)])
                    return b * h * n * (1 + (d if atomic else 0)) * 4 / 2 ** 20
                methods = [("attn-jit", contextlib.nullcontext, ours_bwd,
                            lambda i: ours_fwd(i) or ours_bwd(i), extra_mib(lib))]
                for name, alt_lib, alt_tiles in variants:
                    def alt_fwd(_, L=alt_lib):
                        return L.forward(q, k, v, o, lse, "bf16", mask, stream=stream)[0]

                    def alt_bwd(_, L=alt_lib, t=alt_tiles):
                        return L.backward(q, k, v, o, lse, do, dq, dk, dv, "bf16", mask, stream=stream,
                                          tiles=t)[0]
                    st3, msg3 = alt_lib.backward(q, k, v, o, lse, do, dq, dk, dv, "bf16", mask,
                                                 stream=stream, tiles=alt_tiles)
                    if st3 != ATTN_OK:
                        print(f"{name} failed at D={d} N={n} {mask}: {msg3}")
                        continue
                    methods.append((name, contextlib.nullcontext, alt_bwd,
                                    lambda i, f=alt_fwd, g=alt_bwd: f(i) or g(i), extra_mib(alt_lib)))
                torch_inputs = []
                for name, backend in (("fa2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    qs, ks, vs = (x.detach().clone().requires_grad_() for x in (q, k, v))
                    ctx = (lambda be=backend: sdpa_kernel(be))
                    try:
                        with ctx():
                            torch.cuda.synchronize()
                            base = torch.cuda.memory_allocated()
                            torch.cuda.reset_peak_memory_stats()
                            out = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
                            out.backward(do, retain_graph=True)
                            torch.cuda.synchronize()
                            peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
                    except RuntimeError as ex:
                        print(f"{name} unavailable at D={d} N={n} {mask}: {str(ex).splitlines()[0]}")
                        continue
                    # The output and the gradients (4 tensors) are outputs, not extra.
                    extra_t = max(0.0, peak - 4 * q.numel() * 2 / 2 ** 20)

                    def t_bwd(_, qs=qs, ks=ks, vs=vs, out=out):
                        qs.grad = ks.grad = vs.grad = None
                        out.backward(do, retain_graph=True)

                    def t_both(_, qs=qs, ks=ks, vs=vs):
                        qs.grad = ks.grad = vs.grad = None
                        F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).backward(do)
                    methods.append((name, ctx, t_bwd, t_both, extra_t))
                    torch_inputs.append((qs, ks, vs, out))
                settle(torch, args.warmup, [(ctx, f_both) for _, ctx, _, f_both, _ in methods])
                # Rounds, the methods' order reversed each round, so that clock
                # and temperature drift over a shape's timing favours no method;
                # each method's time is the median of its rounds' medians.
                times = {m[0]: ([], []) for m in methods}
                for seq in round_orders(methods, args.rounds):
                    for name, ctx, f_bwd, f_both, _ in seq:
                        with ctx():
                            times[name][0].append(time_events(torch, f_bwd, args.warmup, args.reps)[0])
                            times[name][1].append(time_events(torch, f_both, args.warmup, args.reps)[0])
                results = [(name, statistics.median(times[name][0]), statistics.median(times[name][1]), ex_mb)
                           for name, _, _, _, ex_mb in methods]
                rounds = {name: dict(round_bwd_ms=t[0], round_both_ms=t[1]) for name, t in times.items()}
                del torch_inputs, methods
                for name, tb, tf, extra_mb in results:
                    row = dict(d=d, n=n, b=b, h=h, mask=mask, method=name, bwd_ms=tb,
                               bwd_tflops=2.5 * fwd_flops / (tb * 1e-3) / 1e12, both_ms=tf,
                               both_tflops=3.5 * fwd_flops / (tf * 1e-3) / 1e12, extra_mib=extra_mb,
                               **rounds[name])
                    rows.append(row)
                    print(f"{d:>4} {n:>6} {mask:>6} {name:>8} {tb:8.3f} {row['bwd_tflops']:9.1f} "
                          f"{tf:8.3f} {row['both_tflops']:9.1f} {extra_mb:9.1f}", flush=True)
                ours = results[0]
                for name, tb, tf, _ in results[1:]:
                    print(f"{'':>4} {'':>6} {'':>6} ratio vs {name}: bwd {tb / ours[1]:.2f}x, "
                          f"fwd+bwd {tf / ours[2]:.2f}x (>1: attn-jit faster)")
                del q, k, v, do, o, lse, dq, dk, dv
                torch.cuda.empty_cache()
    # A/B summary: each extra attn-jit method's backward time over attn-jit's
    # per shape (> 1: attn-jit faster), median and minimum.
    ours_ms = {(r["d"], r["n"], r["mask"]): r["bwd_ms"] for r in rows if r["method"] == "attn-jit"}
    for name, _, _ in variants:
        ratios = sorted((r["bwd_ms"] / ours_ms[(r["d"], r["n"], r["mask"])], r["d"], r["n"], r["mask"])
                        for r in rows if r["method"] == name and (r["d"], r["n"], r["mask"]) in ours_ms)
        if ratios:
            mid = ratios[len(ratios) // 2][0] if len(ratios) % 2 else \
                (ratios[len(ratios) // 2 - 1][0] + ratios[len(ratios) // 2][0]) / 2
            low = ratios[0]
            print(f"ab summary: {name} bwd time / attn-jit's over {len(ratios)} shapes: median {mid:.3f}, "
                  f"min {low[0]:.3f} (D={low[1]} N={low[2]} {low[3]}) (> 1: attn-jit faster)")
    if args.json:
        with open(args.json, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
