#!/usr/bin/env python3
"""Registers and spills of every backward kernel, as ptxas -v reports them.

Compiles the canonical backward (attn-opt --attn-to-ptx backward=1) for each
head dim x element type x mask x form (deterministic, atomic) x arch,
assembles it with ptxas -v and prints one Markdown row per kernel. Where
attn-opt refuses the atomic form (mma.sync has none: the runtime keeps such
calls deterministic, KernelConfig::resolved), the table says so below.
Runs on the CPU machine (no GPU): about a minute for the full sweep.

  python3 tools/backward_registers.py --attn-opt build/bin/attn-opt
  python3 tools/backward_registers.py --attn-opt build/bin/attn-opt \
      --dims 128 --archs sm_90a --json
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
REGISTERS = re.compile(r"Used (\d+) registers")


def ptxas_report(ptxas, arch, ptx):
    """[(kernel, registers, spill stores, spill loads)] for one PTX file."""
    cubin = ptx + ".cubin"
    out = subprocess.run([ptxas, "-arch=" + arch, "-v", ptx, "-o", cubin],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("ptxas failed on %s:\n%s" % (ptx, out.stderr))
    if "serialized" in out.stderr:
        raise RuntimeError("ptxas serialized a wgmma in %s:\n%s" %
                           (ptx, out.stderr))
    rows, kernel, spills = [], None, None
    for line in out.stderr.splitlines():
        if m := ENTRY.search(line):
            kernel, spills = m.group(1), None
        elif (m := SPILLS.search(line)) and kernel:
            spills = (int(m.group(1)), int(m.group(2)))
        elif (m := REGISTERS.search(line)) and kernel and spills:
            rows.append((kernel, int(m.group(1))) + spills)
            kernel = None
    return rows


def compile_ptx(attn_opt, options, ptx):
    opts = " ".join("%s=%s" % kv for kv in options.items())
    cmd = [attn_opt, os.devnull, "--attn-to-ptx=%s ptx-file=%s" % (opts, ptx),
           "-o", os.devnull]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), out.stderr))


def atomic_refused(attn_opt, options, ptx):
    """The reason attn-opt gives for not compiling the atomic form, or None
    when it compiles it (into `ptx`)."""
    try:
        compile_ptx(attn_opt, options, ptx)
        return None
    except RuntimeError as e:
        if "'dq_accum' (the atomic backward) is mapped on" not in str(e):
            raise
        return "no atomic form"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attn-opt", default="build/bin/attn-opt")
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--archs", default="sm_90a,sm_80")
    ap.add_argument("--json", action="store_true",
                    help="one JSON object a kernel instead of the table")
    args = ap.parse_args()

    rows, refused = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        for d in args.dims.split(","):
            for t in args.dtypes.split(","):
                for causal in ("0", "1"):
                    for arch in args.archs.split(","):
                        for form, det in (("deterministic", "1"),
                                          ("atomic", "0")):
                            path = os.path.join(tmp, "%s.ptx" % form)
                            options = {"head-dim": d, "dtype": t,
                                       "causal": causal, "backward": "1",
                                       "deterministic": det, "arch": arch}
                            if form == "deterministic":
                                compile_ptx(args.attn_opt, options, path)
                            elif atomic_refused(args.attn_opt, options, path):
                                refused.add("D=%s %s" % (d, arch))
                                continue
                            for kernel, regs, st, ld in sorted(ptxas_report(
                                    args.ptxas, arch, path)):
                                rows.append(dict(
                                    D=int(d), dtype=t,
                                    mask="causal" if causal == "1" else "none",
                                    form=form, arch=arch, kernel=kernel,
                                    registers=regs, spill_stores=st,
                                    spill_loads=ld))
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print("| D | dtype | mask | arch | form | kernel | registers | spill stores / loads (bytes) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %(D)d | %(dtype)s | %(mask)s | %(arch)s | %(form)s | %(kernel)s "
              "| %(registers)d | %(spill_stores)d / %(spill_loads)d |" % r)
    if refused:
        print("\nNo atomic form (mma.sync; the runtime keeps these calls "
              "deterministic): " + ", ".join(sorted(refused)))
    spilled = [r for r in rows if r["spill_stores"] or r["spill_loads"]]
    print("\n%d kernels, %d spill" % (len(rows), len(spilled)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
