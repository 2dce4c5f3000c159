#!/usr/bin/env python3
"""torch SDPA (cuDNN, FlashAttention-2, math) on attn-bench's shapes, plus ceilings.

Same shapes and measures as attn-bench, so make_report.py can put them side by side:
  * shapes: batch = tokens / N, heads = width / D (16384 tokens, width 2048), bf16;
  * timing: CUDA events around each call, median of --reps after --warmup calls
    (the math backend: --math-reps after 1 warm-up, it is slow and not the anchor);
  * FLOPs 4 B H N^2 D, halved when causal;
  * extra memory: peak bytes torch's allocator held during one call beyond what was
    allocated before it, minus the output tensor (so: workspace and intermediates);
  * relative error ||O - ref|| / ||ref|| against a float64 reference computed on the
    GPU for two (batch, head) pairs, the first and the last, all rows (attn-bench
    samples rows of the same two heads; both estimate the same statistic);
  * ceilings: bf16 matmul 8192^3 TFLOP/s and a device-to-device copy in GB/s
    (bytes read + written), same timing.
Writes one JSON object per line (--json) and prints a table last.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", default="64,128,256")
    ap.add_argument("--n", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--math-reps", type=int, default=5)
    ap.add_argument("--math-max-gb", type=float, default=60.0,
                    help="skip the math backend when B*H*N^2*10 bytes exceed this")
    ap.add_argument("--backends", default="cudnn,flash,math")
    ap.add_argument("--no-ceilings", action="store_true")
    ap.add_argument("--quick", action="store_true", help="D 64,128; N 1024,4096; reps 10")
    ap.add_argument("--json", default="")
    ap.add_argument("--seed", type=int, default=None)
    return ap.parse_args()


def time_events(torch, fn, warmup, reps, rotate=1):
    """Median/min/max milliseconds of fn(i), events around each call, and the first
    nonzero status fn returned (an int: a C API status; anything else counts as ok)."""
    bad = 0

    def note(st):
        return bad or (st if isinstance(st, int) else 0)
    for i in range(warmup):
        bad = note(fn(i % rotate))
    # With ATTN_JIT_TIERED a first call's quick kernel may still run: the
    # timed calls are the default kernel's.
    try:
        import attn_jit_ctypes
        attn_jit_ctypes.wait_for_compiles()
    except ImportError:
        pass
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        st = fn((warmup + i) % rotate)
        ends[i].record()
        bad = note(st)
    torch.cuda.synchronize()
    ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return statistics.median(ms), min(ms), max(ms), bad


def round_orders(methods, rounds):
    """The methods' order in each of `rounds` timing rounds: as given, then
    reversed, and so on, so that clock and temperature drift over a shape's
    timing favours no method (under its 700 W limit the H200's clock falls
    while kernels run: BENCHMARKS version 45). The timing scripts
    (ab_bench, bench_variants, bench_backward) take their order from here."""
    methods = list(methods)
    for rnd in range(rounds):
        yield methods if rnd % 2 == 0 else methods[::-1]


def settle(torch, calls, methods, rotate=1):
    """Untimed calls of every method before a shape's first timed round.
    methods: (context factory, fn) pairs; fn(i % rotate) as time_events
    calls it; a failing method is left for its timed calls to report.
    Without this the first method timed runs on a GPU that idled through the
    setup (below its 700 W limit, at full clock): 5-10 % faster in
    BENCHMARKS version 45."""
    for ctx, fn in methods:
        try:
            with warnings.catch_warnings(), ctx():
                warnings.simplefilter("ignore")
                for i in range(calls):
                    fn(i % rotate)
        except Exception:  # noqa: BLE001 -- the timed calls report it
            pass
    torch.cuda.synchronize()


def ceilings(torch, reps, warmup):
    out = []
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    med, mn, _, _ = time_events(torch, lambda i: torch.matmul(a, b), warmup, reps)
    out.append(dict(tool="ceiling", kind="matmul_bf16_8192", median_ms=med,
                    tflops=2 * n ** 3 / (med * 1e-3) / 1e12))
    del a, b
    nbytes = 1 << 30
    src = torch.randint(0, 255, (nbytes,), device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    med, mn, _, _ = time_events(torch, lambda i: dst.copy_(src), warmup, reps)
    out.append(dict(tool="ceiling", kind="d2d_copy_1GiB", median_ms=med,
                    gbps=2 * nbytes / (med * 1e-3) / 1e9))
    del src, dst
    torch.cuda.empty_cache()
    return out


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as ex:
        print(f"SKIP: torch with torch.nn.attention not importable ({ex})")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    from test_attention import reference, rel_err

    if args.quick:
        args.d, args.n, args.reps, args.warmup = "64,128", "1024,4096", 10, 3
    dims = [int(x) for x in args.d.split(",")]
    seqlens = [int(x) for x in args.n.split(",")]
    causals = [bool(int(x)) for x in args.causal.split(",")]
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                "math": SDPBackend.MATH}
    wanted = [b for b in args.backends.split(",") if b]
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    meta = dict(tool="sdpa-meta", device=props.name, torch=torch.__version__,
                cudnn=torch.backends.cudnn.version(), cuda=torch.version.cuda, seed=seed,
                reps=args.reps, warmup=args.warmup, math_reps=args.math_reps,
                time=time.strftime("%Y-%m-%d %H:%M:%S"))
    print("# " + json.dumps(meta), flush=True)
    jf = open(args.json, "a") if args.json else None

    def emit(rec):
        line = json.dumps(rec)
        print(line, flush=True)
        if jf:
            jf.write(line + "\n")
            jf.flush()

    emit(meta)
    if not args.no_ceilings:
        for rec in ceilings(torch, args.reps, args.warmup):
            emit(rec)

    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    rows = []
    for d in dims:
        for n in seqlens:
            if args.tokens % n or args.width % d:
                continue
            B, H = args.tokens // n, args.width // d
            shape = (B, H, n, d)
            in_bytes = 3 * B * H * n * d * 2
            rotate = 1 if in_bytes >= 2 * l2 else min(16, 2 * l2 // in_bytes + 1)
            sets = [[torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
                     for _ in range(3)] for _ in range(rotate)]
            q, k, v = sets[0]
            for causal in causals:
                flops = 4.0 * B * H * n * n * d * (0.5 if causal else 1.0)
                # float64 reference for the first and last (batch, head).
                picks = [(0, 0)] + ([(B - 1, H - 1)] if B * H > 1 else [])
                refs = []
                for b, h in picks:
                    sl = (slice(b, b + 1), slice(h, h + 1))
                    refs.append(reference(torch, q[sl], k[sl], v[sl], "causal" if causal else "none",
                                          1.0 / math.sqrt(d))[0])
                torch.cuda.synchronize()
                for name in wanted:
                    rec = dict(tool="sdpa", backend=name, dtype="bf16", d=d, n=n, causal=causal,
                               batch=B, heads=H, flops=flops, input_sets=rotate)
                    if name == "math" and B * H * n * n * 10 > args.math_max_gb * 1e9:
                        rec["status"] = f"skipped: needs ~{B * H * n * n * 10 / 1e9:.0f} GB"
                        emit(rec)
                        continue
                    try:
                        with warnings.catch_warnings(), sdpa_kernel(backends[name]):
                            warnings.simplefilter("ignore")

                            def call(i):
                                qq, kk, vv = sets[i]
                                return F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal)

                            torch.cuda.synchronize()
                            torch.cuda.reset_peak_memory_stats()
                            before = torch.cuda.memory_allocated()
                            out = call(0)
                            torch.cuda.synchronize()
                            peak = torch.cuda.max_memory_allocated()
                            rec["extra_bytes"] = max(0, peak - before - out.numel() * out.element_size())
                            errs_num, errs_den = 0.0, 0.0
                            for (b, h), ref in zip(picks, refs):
                                diff = (out[b:b + 1, h:h + 1].double() - ref)
                                errs_num += float((diff * diff).sum())
                                errs_den += float((ref * ref).sum())
                            rec["rel_err"] = math.sqrt(errs_num / errs_den) if errs_den > 0 else None
                            rec["nonfinite"] = int((~torch.isfinite(out)).sum())
                            del out
                            reps = args.math_reps if name == "math" else args.reps
                            warm = 1 if name == "math" else args.warmup
                            med, mn, mx, _ = time_events(torch, call, warm, reps, rotate)
                            rec.update(median_ms=med, min_ms=mn, max_ms=mx, reps=reps,
                                       tflops=flops / (med * 1e-3) / 1e12, status="ok")
                    except (RuntimeError, torch.cuda.OutOfMemoryError) as ex:
                        rec["status"] = "n/a: " + str(ex).strip().splitlines()[0][:120]
                        torch.cuda.empty_cache()
                    emit(rec)
                    rows.append(rec)
            del sets, q, k, v
            torch.cuda.empty_cache()
    if jf:
        jf.close()

    print(f"\n{'D':>4} {'N':>6} {'causal':>6} " + " ".join(f"{b + ' TF/s':>12}" for b in wanted))
    keys = sorted({(r["d"], r["n"], r["causal"]) for r in rows})
    for key in keys:
        cells = []
        for b in wanted:
            r = next((r for r in rows if (r["d"], r["n"], r["causal"]) == key and r["backend"] == b), None)
            cells.append(f"{r['tflops']:12.1f}" if r and r.get("status") == "ok" else f"{'-':>12}")
        print(f"{key[0]:>4} {key[1]:>6} {('yes' if key[2] else 'no'):>6} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
