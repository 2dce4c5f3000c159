#!/usr/bin/env python3
"""Merges attn-bench's and sdpa_anchors.py's JSON lines into one markdown table and a plot.

usage: make_report.py --bench bench.jsonl --anchors anchors.jsonl --md OUT.md --png OUT.png

Every number comes from the input files (one run on the GPU machine); missing
measurements show as '-'. Lines that are not JSON objects are ignored.
"""
import argparse
import json
import math
import sys


def load(path):
    recs = []
    if not path:
        return recs
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    except OSError as ex:
        print(f"warning: {path}: {ex}", file=sys.stderr)
    return recs


def ok(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def f1(x):
    return f"{x:.1f}" if ok(x) else "-"


def f2(x):
    return f"{x:.2f}" if ok(x) else "-"


def fe(x):
    return f"{x:.2e}" if ok(x) else "-"


def mib(x):
    if not ok(x):
        return "-"
    return f"{x / 2**20:.0f}" if x >= 2**20 else f"{x / 2**20:.2f}"


def tflops(m):
    return m.get("tflops") if m and m.get("status") == "ok" else None


def build(bench, anchors):
    """{(d, n, causal): {"jit": {...}, "unfused": {...}, "cudnn": {...}, ...}}"""
    table = {}
    for r in bench:
        if r.get("tool") != "attn-bench":
            continue
        key = (r["d"], r["n"], bool(r["causal"]))
        table.setdefault(key, {})["jit"] = r.get("attn_jit")
        table[key]["unfused"] = r.get("unfused")
        table[key]["shape"] = (r.get("batch"), r.get("heads"))
    for r in anchors:
        if r.get("tool") != "sdpa":
            continue
        key = (r["d"], r["n"], bool(r["causal"]))
        table.setdefault(key, {})[r["backend"]] = r
        table[key].setdefault("shape", (r.get("batch"), r.get("heads")))
    return table


def ratio(a, b):
    return a / b if ok(a) and ok(b) and b > 0 else None


def markdown(table, bench, anchors):
    meta = next((r for r in anchors if r.get("tool") == "sdpa-meta"), {})
    ceil = {r["kind"]: r for r in anchors if r.get("tool") == "ceiling"}
    first = [r for r in bench if r.get("mode") == "first_call"]
    any_bench = next((r for r in bench if r.get("tool") == "attn-bench"), {})
    out = [f"# attn-jit forward benchmark ({any_bench.get('dtype', 'bf16')})", ""]
    out.append(f"Measured in one run on {meta.get('device', '?')} ({meta.get('time', '?')}); "
               f"torch {meta.get('torch', '?')}, cuDNN {meta.get('cudnn', '?')}, CUDA {meta.get('cuda', '?')}.")
    mm, cp = ceil.get("matmul_bf16_8192", {}), ceil.get("d2d_copy_1GiB", {})
    out.append(f"Ceilings in the same run: bf16 matmul 8192^3 {f1(mm.get('tflops'))} TFLOP/s; "
               f"device-to-device copy {f1(cp.get('gbps'))} GB/s (read + write).")
    out.append("")
    out.append("Shapes: 16384 tokens, width 2048 (batch = 16384/N, heads = 2048/D). FLOPs 4·B·H·N²·D, "
               "halved when causal (the unfused baseline still computes all of S). Timing: CUDA events "
               f"around each call, median of {any_bench.get('reps', '?')} (attn-jit, unfused) / "
               f"{meta.get('reps', '?')} (SDPA) after warm-up; math backend median of "
               f"{meta.get('math_reps', '?')}. Inputs random normal.")
    out.append("")
    out.append("| D | N | causal | attn-jit TFLOP/s | cuDNN | FA2 | unfused | math | jit/FA2 | jit/cuDNN "
               "| extra MiB jit / cuDNN / FA2 / unfused | rel. err jit / cuDNN / FA2 / unfused | jit 1st call ms |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(table):
        t = table[key]
        jit, unf = t.get("jit") or {}, t.get("unfused") or {}
        cud, fa2, mth = t.get("cudnn") or {}, t.get("flash") or {}, t.get("math") or {}
        jt = tflops(jit)
        out.append(
            f"| {key[0]} | {key[1]} | {'yes' if key[2] else 'no'} | {f1(jt)} | {f1(tflops(cud))} | "
            f"{f1(tflops(fa2))} | {f1(tflops(unf))} | {f1(tflops(mth))} | {f2(ratio(jt, tflops(fa2)))} | "
            f"{f2(ratio(jt, tflops(cud)))} | {mib(jit.get('extra_bytes'))} / {mib(cud.get('extra_bytes'))} / "
            f"{mib(fa2.get('extra_bytes'))} / {mib(unf.get('extra_bytes'))} | {fe(jit.get('rel_err'))} / "
            f"{fe(cud.get('rel_err'))} / {fe(fa2.get('rel_err'))} / {fe(unf.get('rel_err'))} | "
            f"{f1(jit.get('first_call_ms'))} |")
    problems = []
    for key in sorted(table):
        for name in ("jit", "unfused", "cudnn", "flash", "math"):
            m = table[key].get(name)
            if m and m.get("status") not in (None, "ok"):
                problems.append(f"- D={key[0]} N={key[1]} causal={key[2]} {name}: {m.get('status')}")
    if problems:
        out += ["", "Not measured / failed:"] + problems
    out += ["", "Extra memory: attn-jit and unfused: drop in free device memory (cuMemGetInfo) across the "
            "method's first call for the shape, inputs and outputs allocated before (attn-jit: module and "
            "kept workspace, 0 when an earlier shape loaded the same kernel; unfused: S (f32) + P + cuBLAS "
            "workspace); SDPA: torch allocator peak during one call minus the output. Relative error: "
            "‖O − ref‖/‖ref‖ against float64 on two (batch, head) pairs, the first and the last (attn-jit "
            "and unfused: every N/128-th row, computed on the host; SDPA: all rows, on the GPU). 1st call: wall time of attn-jit's first call for the shape in the "
            "benchmark process (includes compiling unless an earlier shape used the same kernel)."]
    if first:
        out += ["", "## First-call latency (separate processes)", "",
                "| D | N | causal | cache | first call ms | compiles | disk hits | compile ms | after attn_clear_memory_cache ms |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in first:
            s = r.get("stats") or {}
            nfiles = r.get("cache_files_before")
            cache = ("empty dir (cold)" if nfiles == 0 else
                     f"warm disk ({nfiles} files)" if nfiles is not None else "?")
            out.append(f"| {r['d']} | {r['n']} | {'yes' if r['causal'] else 'no'} | {cache} | "
                       f"{f1(r.get('first_call_ms'))} | {s.get('compiles', '-')} | {s.get('disk_hits', '-')} | "
                       f"{f1(s.get('compile_ms'))} | {f1(r.get('after_memory_clear_ms'))} |")
    return "\n".join(out) + "\n"


def compact(table):
    """A short plain-text table for the end of the device run's output."""
    lines = [f"{'D':>4} {'N':>6} {'causal':>6} {'jit':>7} {'cuDNN':>7} {'FA2':>7} {'unfused':>7} "
             f"{'jit/FA2':>7} {'jit/cuDNN':>9} {'jit err':>9}   (TFLOP/s)"]
    for key in sorted(table):
        t = table[key]
        jit = t.get("jit") or {}
        jt, cu, fa = tflops(jit), tflops(t.get("cudnn")), tflops(t.get("flash"))
        lines.append(f"{key[0]:>4} {key[1]:>6} {('yes' if key[2] else 'no'):>6} {f1(jt):>7} {f1(cu):>7} "
                     f"{f1(fa):>7} {f1(tflops(t.get('unfused'))):>7} {f2(ratio(jt, fa)):>7} "
                     f"{f2(ratio(jt, cu)):>9} {fe(jit.get('rel_err')):>9}")
    return "\n".join(lines) + "\n"


def plot(table, anchors, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    dims = sorted({k[0] for k in table})
    if not dims:
        return False
    ceil = next((r for r in anchors if r.get("kind") == "matmul_bf16_8192"), None)
    fig, axes = plt.subplots(2, len(dims), figsize=(5 * len(dims), 8), squeeze=False, sharey=True)
    series = [("jit", "attn-jit", "C3", "o"), ("cudnn", "cuDNN", "C0", "s"), ("flash", "FA2", "C2", "^"),
              ("unfused", "unfused cuBLAS", "C7", "x"), ("math", "SDPA math", "C1", "v")]
    for col, d in enumerate(dims):
        for row, causal in enumerate((False, True)):
            ax = axes[row][col]
            keys = sorted(k for k in table if k[0] == d and k[2] == causal)
            for name, label, color, marker in series:
                pts = [(k[1], tflops(table[k].get(name))) for k in keys]
                pts = [(n, t) for n, t in pts if ok(t)]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, label=label)
            if ceil and ok(ceil.get("tflops")):
                ax.axhline(ceil["tflops"], color="k", ls=":", lw=1, label="bf16 matmul 8192³")
            ax.set_xscale("log", base=2)
            ax.set_title(f"D={d}, {'causal' if causal else 'not causal'}")
            ax.set_xlabel("sequence length N")
            if col == 0:
                ax.set_ylabel("TFLOP/s")
            ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Forward attention, bf16, 16k tokens, width 2048")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bench", default="")
    ap.add_argument("--anchors", default="")
    ap.add_argument("--md", required=True)
    ap.add_argument("--png", default="")
    ap.add_argument("--compact", default="", help="also write a short plain-text table here")
    args = ap.parse_args()
    bench, anchors = load(args.bench), load(args.anchors)
    table = build(bench, anchors)
    md = markdown(table, bench, anchors)
    with open(args.md, "w") as f:
        f.write(md)
    if args.compact:
        with open(args.compact, "w") as f:
            f.write(compact(table))
    try:
        print(md)
    except BrokenPipeError:
        pass
    if args.png:
        try:
            if plot(table, anchors, args.png):
                print(f"plot: {args.png}")
        except ImportError as ex:
            print(f"no plot: {ex}", file=sys.stderr)
    return 0 if table else 1


if __name__ == "__main__":
    sys.exit(main())
