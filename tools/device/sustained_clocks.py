#!/usr/bin/env python3
"""Sustained timing with the SM clock and power: each method runs back to
back for --seconds (default 4) while nvidia-smi samples the clock and the
board power every 50 ms, D = 128 bf16 (--d), no mask, the convention shape
(B * N = 16k tokens, H = 2048 / D) at each of --seqlens.

    ATTN_JIT_LIB=.../libattn-jit.so python3 tools/device/sustained_clocks.py
        [--forward | --issue11 | --conv] [--d 128] [--dims 64,128,256]
        [--seqlens 8192,16384] [--seconds 4]

Backward (default): attn_backward against torch SDPA's FA2 backward (one
retained graph); --forward: attn_forward against SDPA's cuDNN forward;
--issue11: attn-jit's forward alone on issue 11's two ratios (causal at 8k
against softcap 30 at 8k, causal at 16k against sliding window 1024 at
16k, both causal; --seqlens is ignored), printed at the end; --conv: the
forward against cuDNN's on the convention shapes of --dims x --seqlens,
without a mask and causal (issue 16), their ratios printed at the end
(cuDNN's ms over attn-jit's, > 1: attn-jit faster).
attn-jit runs first and last, the anchor between them (--conv: attn-jit,
then cuDNN), a second's pause after each; the first second of each run is left out of the samples (the
clock settles). Why: the benchmarks time short bursts (10 calls after 3
warm-ups), during which the board may stay under its power limit; under a
sustained load it caps the power (700 W on the H100) and the clock falls
by how much energy a kernel spends per cycle (BENCHMARKS version 50).
Prints per method and N: ms a call, the mean and lowest SM clock, the mean
power. Exit 0 done, 77 no torch / GPU or no nvidia-smi.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)
from attn_jit_ctypes import AttnJit, default_lib_path, make_variant, torch_on_cuda  # noqa: E402
from bench_backward import backward_tensors  # noqa: E402

SAMPLE_MS = 50
SETTLE_S = 1.0


def sample_rows(text):
    """(epoch seconds, SM MHz, W) of each nvidia-smi line."""
    rows = []
    for line in text.splitlines():
        try:
            stamp, clock, power = (x.strip() for x in line.split(","))
            whole, frac = stamp.split(".")
            t = time.mktime(time.strptime(whole, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
            rows.append((t, float(clock), float(power)))
        except ValueError:
            continue
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--forward", action="store_true", help="the forward against cuDNN's")
    ap.add_argument("--issue11", action="store_true", help="softcap and window 1024 against causal")
    ap.add_argument("--conv", action="store_true", help="the forward against cuDNN's, --dims x --seqlens x mask")
    ap.add_argument("--dims", default="64,128,256", help="head dims of --conv")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seqlens", default="8192,16384")
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    torch = torch_on_cuda()
    if torch is None or not shutil.which("nvidia-smi"):
        print("sustained_clocks: needs torch on a GPU and nvidia-smi")
        return 77
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    lib = AttnJit(default_lib_path())
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", str(SAMPLE_MS)],
                           stdout=subprocess.PIPE, text=True)
    runs = []  # (method, N, first sample time, last, ms a call)

    def timed(name, n, fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        start = time.time()
        calls = 0
        first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        first.record()
        while time.time() - start < args.seconds:
            for _ in range(10):
                fn()
            calls += 10
            torch.cuda.synchronize()
        last.record()
        torch.cuda.synchronize()
        runs.append((name, n, start + SETTLE_S, time.time(), first.elapsed_time(last) / calls))
        time.sleep(1.0)

    if args.issue11:
        # Issue 11's variants (bench_variants.py's): softcap 30 and the
        # window (W - 1, 0) of Mistral, on causal attention.
        for n, name, variant in ((8192, "causal", None), (8192, "softcap30", dict(softcap=30.0)),
                                 (16384, "causal", None), (16384, "window1024", dict(window=(1023, 0)))):
            _, _, q, k, v, _, o, lse, _, _, _ = backward_tensors(torch, args.d, n)
            made = make_variant(**variant) if variant else None
            timed(name, n, lambda: lib.forward(q, k, v, o, lse, "bf16", "causal", variant=made))
    if args.conv:
        for d in (int(x) for x in args.dims.split(",")):
            for n in (int(x) for x in args.seqlens.split(",")):
                _, _, q, k, v, _, o, lse, _, _, _ = backward_tensors(torch, d, n)
                for mask in ("none", "causal"):
                    def ours():
                        lib.forward(q, k, v, o, lse, "bf16", mask)

                    def anchor():
                        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                            F.scaled_dot_product_attention(q, k, v, is_causal=mask == "causal")
                    timed(f"fwd D={d} {mask}", n, ours)
                    timed(f"cudnn D={d} {mask}", n, anchor)
    for n in () if args.issue11 or args.conv else (int(x) for x in args.seqlens.split(",")):
        _, _, q, k, v, do, o, lse, dq, dk, dv = backward_tensors(torch, args.d, n)
        lib.forward(q, k, v, o, lse, "bf16", "none")
        if args.forward:
            def ours():
                lib.forward(q, k, v, o, lse, "bf16", "none")

            def anchor():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    F.scaled_dot_product_attention(q, k, v)
            methods = (("attn-jit fwd", ours), ("cudnn fwd", anchor), ("attn-jit fwd", ours))
        else:
            qs, ks, vs = (t.clone().requires_grad_() for t in (q, k, v))
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                out = F.scaled_dot_product_attention(qs, ks, vs)

            def ours():
                lib.backward(q, k, v, o, lse, do, dq, dk, dv, "bf16", "none")

            def anchor():
                out.backward(do, retain_graph=True)
            methods = (("attn-jit bwd", ours), ("fa2 bwd", anchor), ("attn-jit bwd", ours))
        for name, fn in methods:
            timed(name, n, fn)
    smi.terminate()
    rows = sample_rows(smi.stdout.read())
    for name, n, a, z, ms in runs:
        sel = [(c, p) for t, c, p in rows if a <= t <= z]
        if not sel:
            print(f"{name:18s} N={n:5d} {ms:7.3f} ms a call, no clock samples")
            continue
        clocks = [c for c, _ in sel]
        print(f"{name:18s} N={n:5d} {ms:7.3f} ms a call  SM clock mean {statistics.mean(clocks):6.0f} MHz "
              f"(lowest {min(clocks):.0f})  power mean {statistics.mean(p for _, p in sel):5.0f} W  "
              f"samples {len(sel)}")
    ms = {(name, n): t for name, n, _, _, t in runs}
    if args.conv:
        ratios = []
        for name, n, _, _, t in runs:
            if name.startswith("fwd "):
                ratio = ms["cudnn " + name[len("fwd "):], n] / t
                ratios.append(ratio)
                print(f"{name[len('fwd '):]:12s} N={n:5d}: {ratio:.3f} x cuDNN")
        print(f"{sum(r >= 1.0 for r in ratios)} of {len(ratios)} shapes >= 1.0 x cuDNN "
              f"(lowest {min(ratios):.3f}, median {statistics.median(ratios):.3f})")
    if args.issue11:
        print(f"softcap 30 @ 8k over causal @ 8k: {ms['softcap30', 8192] / ms['causal', 8192] - 1:+.1%} "
              f"(issue 11: <= +10 %)")
        print(f"window 1024 @ 16k against causal @ 16k: {ms['causal', 16384] / ms['window1024', 16384]:.2f} x "
              f"faster (issue 11: >= 6 x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
