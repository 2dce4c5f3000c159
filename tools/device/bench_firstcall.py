#!/usr/bin/env python3
"""First-call latency of attn-jit (issue 11: first call <= 300 ms): our compile, the driver's PTX
JIT, and the disk cache, each configuration in fresh processes.

    ATTN_JIT_LIB=NEW/lib/libattn-jit.so python3 tools/device/bench_firstcall.py
        [--old-lib OLD/lib/libattn-jit.so] [--configs NAME,...] [--reps 3] [--jit-levels 4,3,1,0]
        [--steady-reps 30] [--no-ptxas] [--tiered] [--json FILE] [--list]

Per library (the new one, then --old-lib), configuration and repetition, two fresh
`python3 bench_firstcall.py --child` processes share one new, empty ATTN_JIT_CACHE_DIR, with
CUDA_CACHE_DISABLE=1 (the driver's own compute cache off) and ATTN_JIT_LOG=1:
  cold   the first attn_forward of the process, timed on the host with a synchronize
         (tensors allocated and the CUDA context made before): our compile + the driver
         load (its PTX JIT) + the launch; from the runtime's log line: IR, passes, PTX
         codegen, driver load, and the driver's own JIT time (CU_JIT_WALL_TIME; new
         libraries only);
  warm   the same in a second process over the cache the first one wrote: a disk hit;
         a library with the cubin cache loads the cubin (no JIT), an older one JIT-compiles
         the PTX again.
Steady state (--jit-levels, new library only): one more process per level with
ATTN_JIT_PTX_OPT_LEVEL=L (the driver's CU_JIT_OPTIMIZATION_LEVEL; 4 is the driver's
default), the kernel's median time over --steady-reps calls (CUDA events, after 5 warm-up
calls) and its JIT time, so the price of a lower level is seen next to what it saves.
ptxas (unless --no-ptxas, when ptxas is on PATH or in /usr/local/cuda/bin; new library): the
PTX of the first cold run (read from its disk cache entry) assembled by ptxas -O3, -O3
--split-compile 0 (threads over the module's functions), -Ofc mid (fast-compile) and -O1,
the wall time of each and its spill stores: what running ptxas ourselves would cost.

The processes above run with ATTN_JIT_TIERED=0 (tests/gpu/attn_jit_ctypes.py's default for
tests and benchmarks), the library's default kernel on the first call.
Tiered (--tiered, new library only; the library's default since version 43): per configuration
and repetition one more fresh process over an empty cache with ATTN_JIT_TIERED=1: the first call (the quick kernel, compiled and
JIT-compiled while the default kernel builds in the background), the next call's kernel time
(still the quick kernel, CUDA events), the time from the first call until
attn_wait_for_compiles returns (the default kernel loaded), and the largest |O| difference
between the quick kernel's output and the default kernel's on the same inputs.
Configurations: B 2, H 16, N 4096, bf16, (B, H, N, D) contiguous:
  d128-causal  d128-none  d64-causal  d128-alibi (causal)  d128-softcap (causal, softcap 30)
Prints a markdown table (median over --reps of each number); --json appends one object per
(library, configuration, repetition, stage).
Exit 0 done, 1 a run failed, 2 usage, 77 no torch / GPU.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)

B, H, N = 2, 16, 4096
WARMUP = 5
CONFIGS = {
    "d128-causal": dict(D=128, causal=True),
    "d128-none": dict(D=128, causal=False),
    "d64-causal": dict(D=64, causal=True),
    "d128-alibi": dict(D=128, causal=True, variant="alibi"),
    "d128-softcap": dict(D=128, causal=True, variant="softcap"),
}
CHILD_TIMEOUT_S = 120

# The runtime's log lines (runtime/lib/Engine.cpp, loadCudaKernel).
COMPILED = re.compile(r"compiled \S+ in ([\d.]+) ms: IR ([\d.]+) ms, passes ([\d.]+) ms, PTX codegen "
                      r"([\d.]+) ms, driver load ([\d.]+) ms")
DISK_HIT = re.compile(r"disk hit \S+ \(\S+\): read ([\d.]+) ms, driver load ([\d.]+) ms")
JIT = re.compile(r"driver load [\d.]+ ms \(JIT ([\d.]+) ms\)")
NO_JIT = "(cached cubin, no JIT)"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default="", help="libattn-jit.so (default: $ATTN_JIT_LIB or $ATTN_JIT_BUNDLE's)")
    ap.add_argument("--old-lib", default="", help="a base library, measured the same way in the same run")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated names (see --list)")
    ap.add_argument("--reps", type=int, default=3, help="fresh (cold, warm) process pairs per configuration")
    ap.add_argument("--jit-levels", default="4,3,1,0",
                    help="ATTN_JIT_PTX_OPT_LEVEL values for the steady-state runs ('' for none)")
    ap.add_argument("--steady-reps", type=int, default=30)
    ap.add_argument("--no-ptxas", action="store_true")
    ap.add_argument("--tiered", action="store_true", help="also time tiered first calls (ATTN_JIT_TIERED=1)")
    ap.add_argument("--json", default="")
    ap.add_argument("--list", action="store_true")
    # A child process: one configuration, one first call (and the steady state with --steady).
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--steady", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args()


# --- the child: one first call --------------------------------------------------


def child(args):
    import ctypes
    import attn_jit_ctypes as aj
    from ab_bench import make_args_struct
    from sdpa_anchors import time_events
    torch = aj.torch_on_cuda()
    if torch is None:
        return 77
    c = CONFIGS[args.child]
    lib = aj.AttnJit(args.lib)
    gen = torch.Generator(device="cuda").manual_seed(0)

    def rnd(*shape):
        return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    q, k, v = rnd(B, H, N, c["D"]), rnd(B, H, N, c["D"]), rnd(B, H, N, c["D"])
    o = torch.empty_like(q)
    a = make_args_struct(q, k, v, o, c["causal"], torch.cuda.current_stream().cuda_stream)
    slopes = None
    if c.get("variant") == "alibi":
        slopes = (2.0 ** (-8.0 * torch.arange(1, H + 1, dtype=torch.float64, device="cuda") / H)).float()
        a.variant = aj.make_variant(alibi_slopes=slopes)
    elif c.get("variant") == "softcap":
        a.variant = aj.make_variant(softcap=30.0)
    ref = ctypes.byref(a)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    status = lib.lib.attn_forward(ref)
    torch.cuda.synchronize()
    out = dict(first_call_ms=(time.perf_counter() - t0) * 1e3, status=int(status), stats=lib.stats())
    if status != 0:
        out["error"] = lib.lib.attn_last_error().decode(errors="replace")
    elif os.environ.get("ATTN_JIT_TIERED") == "1":
        # The quick kernel's output and time, the wait for the default
        # kernel, then its output on the same inputs.
        quick = o.clone()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        second = lib.lib.attn_forward(ref)
        end.record()
        torch.cuda.synchronize()
        lib.lib.attn_wait_for_compiles()
        out["ready_ms"] = (time.perf_counter() - t0) * 1e3
        out["second_call_kernel_ms"] = start.elapsed_time(end)
        o.fill_(float("nan"))
        third = lib.lib.attn_forward(ref)
        torch.cuda.synchronize()
        out["status"] = int(second or third)
        out["quick_vs_full_max_abs"] = (quick.float() - o.float()).abs().max().item()
    elif args.steady:
        med, mn, _, bad = time_events(torch, lambda _i: lib.lib.attn_forward(ref), WARMUP, args.steady_reps)
        out.update(kernel_ms=med, kernel_min_ms=mn, status=int(bad))
    del slopes
    print("RESULT " + json.dumps(out), flush=True)
    return 0 if out["status"] == 0 else 1


# --- the parent: fresh processes --------------------------------------------------


def run_child(lib, name, cache_dir, extra_env=None, steady_reps=0):
    env = dict(os.environ, CUDA_CACHE_DISABLE="1", ATTN_JIT_CACHE_DIR=cache_dir, ATTN_JIT_LOG="1")
    env.pop("ATTN_JIT_PTX_OPT_LEVEL", None)
    env.update(extra_env or {})
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--lib", lib]
    if steady_reps:
        cmd += ["--steady", "--steady-reps", str(steady_reps)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return dict(status=-1, error=f"timed out after {CHILD_TIMEOUT_S} s")
    rec = dict(process_ms=(time.perf_counter() - t0) * 1e3)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        rec.update(status=p.returncode or -1, error=(p.stdout + p.stderr)[-2000:])
        return rec
    rec.update(json.loads(line[len("RESULT "):]))
    log = p.stderr
    if m := COMPILED.search(log):
        rec.update(compile_ms=float(m[2]) + float(m[3]) + float(m[4]), ir_ms=float(m[2]),
                   passes_ms=float(m[3]), codegen_ms=float(m[4]), load_ms=float(m[5]))
    elif m := DISK_HIT.search(log):
        rec.update(disk_read_ms=float(m[1]), load_ms=float(m[2]))
    if m := JIT.search(log):
        rec["jit_ms"] = float(m[1])
    rec["cubin_hit"] = NO_JIT in log
    rec["log"] = log[-1500:]
    return rec


def ptx_of(cache_dir):
    """The PTX in the cache directory's PTX entry (runtime/lib/DiskCache.h, KernelBlob.h), or None."""
    for name in os.listdir(cache_dir):
        if not name.endswith(".kernel"):
            continue
        data = open(os.path.join(cache_dir, name), "rb").read()
        key_size = int.from_bytes(data[12:20], "little")
        if b";cubin;" in data[28:28 + key_size]:
            continue
        at = data.find(b"//\n// Generated by LLVM NVPTX")
        if at >= 0:
            return data[at:-16].decode(errors="replace")
    return None


def find_ptxas():
    return shutil.which("ptxas") or next(
        (p for p in ("/usr/local/cuda/bin/ptxas",) if os.path.exists(p)), None)


PTXAS_RUNS = (("ptxas_O3", ["-O3"]), ("ptxas_split", ["-O3", "--split-compile", "0"]),
              ("ptxas_ofc_mid", ["-Ofc", "mid"]), ("ptxas_O1", ["-O1"]))
SPILLS = re.compile(r"(\d+) bytes spill stores")


def time_ptxas(ptxas, ptx, arch="sm_90a"):
    """{variant: wall ms or an error, variant_spill_bytes: spill stores} of ptxas on `ptx`."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        open(src, "w").write(ptx)
        for label, flags in PTXAS_RUNS:
            t0 = time.perf_counter()
            p = subprocess.run([ptxas, f"-arch={arch}", "-v", *flags, src, "-o", os.path.join(d, "k.cubin")],
                               capture_output=True, text=True)
            out[label] = (time.perf_counter() - t0) * 1e3 if p.returncode == 0 else p.stderr.strip()[-200:]
            out[label + "_spill_bytes"] = sum(int(x) for x in SPILLS.findall(p.stderr))
    return out


def med(recs, key):
    vals = [r[key] for r in recs if isinstance(r.get(key), (int, float))]
    return statistics.median(vals) if vals else None


def fmt(x, spec=".0f"):
    return "-" if x is None else format(x, spec)


def main():
    args = parse_args()
    if args.list:
        for name, c in CONFIGS.items():
            print(name, c)
        return 0
    if args.child:
        return child(args)
    import attn_jit_ctypes as aj
    if aj.torch_on_cuda() is None:
        return 77
    lib = args.lib or aj.default_lib_path()
    if not lib:
        print("error: no library: --lib, ATTN_JIT_LIB or ATTN_JIT_BUNDLE", file=sys.stderr)
        return 2
    names = [n for n in args.configs.split(",") if n]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        print(f"error: unknown configurations {unknown} (see --list)", file=sys.stderr)
        return 2
    levels = [int(x) for x in args.jit_levels.split(",") if x != ""]
    libs = [("new", os.path.abspath(lib))] + ([("old", os.path.abspath(args.old_lib))] if args.old_lib else [])
    ptxas = None if args.no_ptxas else find_ptxas()
    jsonf = open(args.json, "a") if args.json else None
    failed = False
    rows = []

    def emit(rec):
        nonlocal failed
        if rec.get("status") != 0:
            failed = True
            print(f"FAILED {rec['lib']} {rec['config']} {rec['stage']}: {rec.get('error', '')[-400:]}",
                  file=sys.stderr)
        if jsonf:
            jsonf.write(json.dumps({k: v for k, v in rec.items() if k != "log"}) + "\n")
            jsonf.flush()

    for name in names:
        for which, path in libs:
            cold, warm, ptx_times = [], [], []
            for rep in range(args.reps):
                cache_dir = tempfile.mkdtemp(prefix="attn-firstcall-")
                try:
                    for stage, recs in (("cold", cold), ("warm", warm)):
                        rec = run_child(path, name, cache_dir)
                        rec.update(tool="bench_firstcall", lib=which, config=name, rep=rep, stage=stage)
                        recs.append(rec)
                        emit(rec)
                    if ptxas and rep == 0 and which == "new" and (ptx := ptx_of(cache_dir)):
                        ptx_times.append(time_ptxas(ptxas, ptx))
                        emit(dict(tool="bench_firstcall", lib=which, config=name, stage="ptxas", status=0,
                                  **ptx_times[-1]))
                finally:
                    shutil.rmtree(cache_dir, ignore_errors=True)
            rows.append((name, which, cold, warm, ptx_times[0] if ptx_times else {}))
    tiered = []
    for name in names if args.tiered else []:
        recs = []
        for rep in range(args.reps):
            cache_dir = tempfile.mkdtemp(prefix="attn-firstcall-")
            try:
                rec = run_child(libs[0][1], name, cache_dir, {"ATTN_JIT_TIERED": "1"})
            finally:
                shutil.rmtree(cache_dir, ignore_errors=True)
            rec.update(tool="bench_firstcall", lib="new", config=name, rep=rep, stage="tiered")
            emit(rec)
            recs.append(rec)
        tiered.append((name, recs))
    steady = []
    for name in names:
        for level in levels:
            cache_dir = tempfile.mkdtemp(prefix="attn-firstcall-")
            try:
                rec = run_child(libs[0][1], name, cache_dir, {"ATTN_JIT_PTX_OPT_LEVEL": str(level)},
                                steady_reps=args.steady_reps)
            finally:
                shutil.rmtree(cache_dir, ignore_errors=True)
            rec.update(tool="bench_firstcall", lib="new", config=name, stage="steady", jit_level=level)
            emit(rec)
            steady.append(rec)

    print(f"\nFirst call, fresh processes, CUDA_CACHE_DISABLE=1, B {B} H {H} N {N} bf16; median of {args.reps} "
          "(ms). cold: empty attn-jit cache; warm: a second process over the cache the first wrote.\n")
    print("| config | lib | cold first call (untiered) | our compile (IR + passes + codegen) | driver load | "
          "JIT (driver) | warm first call | warm driver load | warm cubin | ptxas -O3 / --split-compile 0 / "
          "-Ofc mid / -O1 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, which, cold, warm, pt in rows:
        comp = (f"{fmt(med(cold, 'compile_ms'))} ({fmt(med(cold, 'ir_ms'), '.1f')} + "
                f"{fmt(med(cold, 'passes_ms'))} + {fmt(med(cold, 'codegen_ms'))})")
        pts = " / ".join((fmt(pt[k]) + (f" ({pt[k + '_spill_bytes']} B spilled)" if pt[k + "_spill_bytes"] else "")
                          if isinstance(pt.get(k), float) else ("-" if k not in pt else "err"))
                         for k, _ in PTXAS_RUNS) if pt else "-"
        print(f"| {name} | {which} | {fmt(med(cold, 'first_call_ms'))} | {comp} | {fmt(med(cold, 'load_ms'))} | "
              f"{fmt(med(cold, 'jit_ms'))} | {fmt(med(warm, 'first_call_ms'))} | {fmt(med(warm, 'load_ms'))} | "
              f"{sum(bool(r.get('cubin_hit')) for r in warm)}/{len(warm)} | {pts} |")
    if tiered:
        print(f"\nTiered first calls (ATTN_JIT_TIERED=1, fresh processes, empty cache), median of {args.reps} "
              "(ms): the first call runs the quick kernel while the default one builds in the background.\n")
        print("| config | tiered first call | quick kernel (2nd call) | default kernel loaded after | "
              "max abs(O quick - O default) |")
        print("|---|---|---|---|---|")
        for name, recs in tiered:
            diffs = [r["quick_vs_full_max_abs"] for r in recs if "quick_vs_full_max_abs" in r]
            print(f"| {name} | {fmt(med(recs, 'first_call_ms'))} | {fmt(med(recs, 'second_call_kernel_ms'), '.3f')} | "
                  f"{fmt(med(recs, 'ready_ms'))} | {fmt(max(diffs) if diffs else None, '.2e')} |")
    if steady:
        print("\nSteady state by the driver's JIT level (ATTN_JIT_PTX_OPT_LEVEL; 4 = the driver's default), "
              f"median of {args.steady_reps} calls.\n")
        print("| config | level | kernel ms | vs level 4 | cold first call | JIT (driver) |")
        print("|---|---|---|---|---|---|")
        for rec in steady:
            base = next((r.get("kernel_ms") for r in steady
                         if r["config"] == rec["config"] and r["jit_level"] == 4), None)
            ratio = rec.get("kernel_ms") / base if base and rec.get("kernel_ms") else None
            print(f"| {rec['config']} | {rec['jit_level']} | {fmt(rec.get('kernel_ms'), '.3f')} | "
                  f"{fmt(ratio, '.3f')} | {fmt(rec.get('first_call_ms'))} | {fmt(rec.get('jit_ms'))} |")
    if jsonf:
        jsonf.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
