#!/usr/bin/env python3
"""A/B timing of two builds of libattn-jit.so and torch SDPA, in one process.

  python3 tools/device/ab_bench.py --new NEW/lib/libattn-jit.so --old OLD/lib/libattn-jit.so \\
      [--shapes conv,gqa,decode] [--d 64,128,256] [--n 1024,...,16384] [--causal 0,1] \\
      [--reps 30] [--warmup 5] [--json FILE] [--time-limit S] [--list]

Both libraries are loaded with ctypes.CDLL into this process (each its own
handle and binding instance; C symbols are looked up per handle); methods:
old, new (attn-jit), cudnn and fa2 (torch SDPA's cuDNN and FLASH backends).
For an mma.sync A/B set ATTN_JIT_TENSOR_CORES=mma.sync for the whole process
(both libraries read it at their first call); it is recorded in every record.
--old-env / --new-env VAR=VALUE,... set variables while that library's engine
starts (it reads ATTN_JIT_* once), so one build can be compared with itself
under two settings: --old and --new two copies of one libattn-jit.so (one file
loads once), e.g. --new-env ATTN_JIT_TMA=1 for TMA against cp.async.
--old-tiles / --new-tiles M,N make that library's calls ask for block_m x block_n
(attn_fwd_args; default 0,0: the runtime's tiles), to A/B a tile choice.

Shapes (--shapes):
  conv    the FlashAttention convention: 16384 tokens (--tokens), batch = tokens / N,
          heads = width // D (--width 2048; D = 96 gives 21 heads), (B, H, N, D)
          contiguous, D in --d, N in --n, causal in --causal (--d/--n/--causal
          select these shapes only);
  gqa     GQA prefill B = 4, Hq = 32, Hkv = 8, N = 4096, D = 128, causal 1 and 0;
  extra   issue 16's other shapes: the short batch B = 64, H = 16, N = 256, D = 128
          causal, and D = 96 and 192 at N = 4096 (FlashAttention convention batch
          and heads), causal and not;
  decode  B = 16, Hq = 32, Hkv = 8, Nq = 1, Nk = 8192, D = 128, no mask, and the same
          with Hkv = 32 (no GQA); also the achieved K/V read bandwidth, bytes
          2*B*Hkv*Nk*D*2 / time, next to a device-to-device copy of 1 GiB measured
          in the same run (bytes read + written, median of --reps) and the ratio.
For gqa and decode the SDPA backends get enable_gqa=True when they accept it,
else K/V expanded to Hq heads (repeat_interleave; "kv" in the record says which).

Timing: inputs random normal bf16. CUDA events around each call, median of
--reps after --warmup calls; when q, k, v, o of a shape take < 64 MB (they could
sit in L2) the calls rotate over 3 input sets. Per shape the methods run in the
order old, new, cudnn, fa2 (after --warmup untimed calls of each, so that the
first one timed does not run on a GPU that idled through the shape's setup:
BENCHMARKS version 45), then in the reverse order, and so on for --rounds
rounds (default 2; more rounds interleave the methods more finely against
clock and temperature drift); the reported median is the median of the rounds'
medians, "spread" is (max - min) of them / median. FLOPs:
4*B*H*Nq*Nk*D, halved when causal and Nq == Nk.

Checks: before timing a shape, new's (and old's) output, written into a NaN
filled buffer, is compared with SDPA's (fa2, else cudnn): rel. err
||O - O_sdpa|| / ||O_sdpa|| must be < 2e-2, else the row is marked WRONG (a fast
wrong kernel cannot pass). An attn_forward status != 0 is reported with
attn_last_error() and that method is skipped for the shape.

Output: one JSON line per (shape, method) to --json (appended; "tool":"ab_bench"),
plus "kind":"meta", "copy" and "summary" records; at the end a table
(throughput: TFLOP/s, decode rows GB/s of K/V; ratios > 1: new faster) and
summary lines: median and minimum of new/old over the conv shapes, and the
minimum's shape. The last line starts with "ab summary:".
Exit: 0 done (WRONG rows, failing methods and skipped shapes are in the output; 1 if
new was WRONG or failed on any shape), 2 usage error, 77 without torch or a GPU.
"""
import argparse
import contextlib
import ctypes
import json
import math
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
import attn_jit_ctypes as aj  # noqa: E402
from sdpa_anchors import round_orders, settle, time_events  # noqa: E402
from test_attention import first_line, rel_err  # noqa: E402

METHODS = ["old", "new", "cudnn", "fa2"]
SDPA_BACKENDS = {   # method -> SDPBackend (looked up late: torch is imported in main)
    "cudnn": lambda: __import__("torch.nn.attention", fromlist=["SDPBackend"]).SDPBackend.CUDNN_ATTENTION,
    "fa2": lambda: __import__("torch.nn.attention", fromlist=["SDPBackend"]).SDPBackend.FLASH_ATTENTION,
}
CHECK_TOL = 2e-2
L2_ROTATE_BYTES = 64 << 20
ROTATE_SETS = 3
COPY_BYTES = 1 << 30


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", default="", help="libattn-jit.so of the new build")
    ap.add_argument("--old", default="", help="libattn-jit.so of the old build (optional: without it, new vs SDPA)")
    ap.add_argument("--old-env", default="", help="VAR=VALUE,... while --old's engine starts")
    ap.add_argument("--new-env", default="", help="VAR=VALUE,... while --new's engine starts")
    ap.add_argument("--old-tiles", default="", help="M,N: --old's calls ask for block_m x block_n (default: the runtime's)")
    ap.add_argument("--new-tiles", default="", help="M,N: --new's calls ask for block_m x block_n")
    ap.add_argument("--shapes", default="conv,gqa,decode")
    ap.add_argument("--d", default="64,128,256", help="conv shapes: head dims")
    ap.add_argument("--n", default="1024,2048,4096,8192,16384", help="conv shapes: sequence lengths (k suffix ok)")
    ap.add_argument("--causal", default="0,1", help="conv and gqa shapes")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2,
                    help="timing rounds per shape, the methods' order reversed each round")
    ap.add_argument("--json", default="", help="append one JSON object per (shape, method) here")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; later shapes are skipped")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--list", action="store_true", help="print the shapes and a cost estimate, then exit")
    args = ap.parse_args(argv)
    try:
        args.d_list = [int(x) for x in args.d.split(",") if x]
        args.n_list = [parse_len(x) for x in args.n.split(",") if x]
        args.causal_list = [bool(int(x)) for x in args.causal.split(",") if x]
    except ValueError as ex:
        ap.error(f"bad list: {ex}")
    try:
        args.tiles = {m: tuple(int(x) for x in t.split(",")) if t else (0, 0)
                      for m, t in (("old", args.old_tiles), ("new", args.new_tiles))}
    except ValueError as ex:
        ap.error(f"bad tiles: {ex}")
    if any(len(t) != 2 for t in args.tiles.values()):
        ap.error("--old-tiles / --new-tiles: M,N")
    args.shape_sets = [x for x in args.shapes.split(",") if x]
    for s in args.shape_sets:
        if s not in SHAPE_SETS:
            ap.error(f"--shapes: unknown set {s!r} ({', '.join(SHAPE_SETS)})")
    args.method_list = [m for m in args.methods.split(",") if m]
    for m in args.method_list:
        if m not in METHODS:
            ap.error(f"--methods: unknown method {m!r} ({', '.join(METHODS)})")
    if not args.old and "old" in args.method_list:
        args.method_list.remove("old")
    if args.reps < 1 or args.warmup < 0 or args.rounds < 1:
        ap.error("--reps >= 1, --warmup >= 0, --rounds >= 1")
    return args


def parse_len(x):
    x = x.strip().lower()
    return int(x[:-1]) * 1024 if x.endswith("k") else int(x)


SHAPE_SETS = ("conv", "gqa", "extra", "decode")


def conv_shape(args, d, n, c, set_name="conv"):
    """A FlashAttention-convention shape: --tokens tokens, --width // d heads."""
    b, h = args.tokens // n, args.width // d
    return dict(set=set_name, B=b, H=h, Hkv=h, Nq=n, Nk=n, D=d, causal=c,
                name=f"D={d} N={n} {'causal' if c else 'full'}")


def make_shapes(args):
    """Shapes as dicts: set, name, B, H, Hkv, Nq, Nk, D, causal."""
    shapes = []
    if "conv" in args.shape_sets:
        for d in args.d_list:
            for n in args.n_list:
                if args.tokens % n or args.width < d:
                    continue
                for c in args.causal_list:
                    shapes.append(conv_shape(args, d, n, c))
    if "gqa" in args.shape_sets:
        for c in sorted(args.causal_list, reverse=True):   # causal first: the shape asked for
            shapes.append(dict(set="gqa", B=4, H=32, Hkv=8, Nq=4096, Nk=4096, D=128, causal=c,
                               name=f"gqa B=4 H=32 Hkv=8 N=4096 D=128 {'causal' if c else 'full'}"))
    if "extra" in args.shape_sets:
        shapes.append(dict(set="extra", B=64, H=16, Hkv=16, Nq=256, Nk=256, D=128, causal=True,
                           name="short B=64 H=16 N=256 D=128 causal"))
        for d in (96, 192):
            for c in args.causal_list:
                shapes.append(conv_shape(args, d, 4096, c, "extra"))
    if "decode" in args.shape_sets:
        for hkv in (8, 32):
            shapes.append(dict(set="decode", B=16, H=32, Hkv=hkv, Nq=1, Nk=8192, D=128, causal=False,
                               name=f"decode B=16 H=32 Hkv={hkv} Nk=8192 D=128"))
    for s in shapes:
        s["flops"] = 4.0 * s["B"] * s["H"] * s["Nq"] * s["Nk"] * s["D"] * (
            0.5 if s["causal"] and s["Nq"] == s["Nk"] else 1.0)
        s["kv_bytes"] = 2 * s["B"] * s["Hkv"] * s["Nk"] * s["D"] * 2
        s["in_bytes"] = 2 * (2 * s["B"] * s["H"] * s["Nq"] * s["D"]) + s["kv_bytes"]   # q, o, k, v
        s["rotate"] = ROTATE_SETS if s["in_bytes"] < L2_ROTATE_BYTES else 1
    return shapes


def estimate_ms(s):
    """A rough per-call time: 350 TFLOP/s when compute bound, 3.5 TB/s when not."""
    return max(s["flops"] / 350e12, s["in_bytes"] / 3.5e12) * 1e3 + 0.01


def list_shapes(args, shapes):
    nmeth = len(args.method_list)
    calls = args.rounds * (args.warmup + args.reps) + 1
    total = 0.0
    for s in shapes:
        ms = estimate_ms(s)
        secs = nmeth * calls * ms / 1e3 + 0.3   # + checks, inputs, first calls
        total += secs
        print(f"{s['set']:6} {s['name']:42} B={s['B']:<3} H={s['H']:<3} Hkv={s['Hkv']:<3} "
              f"{s['in_bytes'] / 2**20:8.0f} MiB  sets={s['rotate']}  ~{ms:.3f} ms/call  ~{secs:.1f} s")
    if "decode" in args.shape_sets:
        total += 2 * (args.warmup + args.reps) * 2 * COPY_BYTES / 3.5e12
    print(f"# {len(shapes)} shapes x {nmeth} methods x {args.rounds} rounds x ({args.warmup}+{args.reps}) calls; "
          f"estimate ~{total:.0f} s of timing (+ ~10-20 s start-up and compiles)")


# ---------------------------------------------------------------------------

def make_args_struct(q, k, v, o, causal, stream, tiles=(0, 0)):
    """attn_fwd_args for torch tensors q, o (B, H, Nq, D), k, v (B, Hkv, Nk, D), bf16;
    tiles: (block_m, block_n), 0 for the runtime's choice."""
    B, H, Nq, D = q.shape
    a = aj.AttnFwdArgs()
    a.q, a.k, a.v, a.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()
    a.lse = None
    a.batch, a.heads, a.kv_heads = B, H, k.shape[1]
    a.seqlen_q, a.seqlen_k, a.head_dim = Nq, k.shape[2], D
    for name, t in (("q_strides", q), ("k_strides", k), ("v_strides", v), ("o_strides", o)):
        getattr(a, name)[:] = list(t.stride())
    a.lse_strides[:] = [0, 0, 0]
    a.dtype, a.mask, a.scale = aj.DTYPES["bf16"], aj.MASKS["causal" if causal else "none"], 0.0
    a.device, a.stream = aj.DEVICE_CUDA, stream
    a.block_m, a.block_n = tiles
    return a


def copy_bandwidth(torch, warmup, reps):
    src = torch.randint(0, 255, (COPY_BYTES,), device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)

    def fn(_):
        dst.copy_(src)
        return 0

    med, mn, mx, _ = time_events(torch, fn, warmup, reps, 1)
    del src, dst
    torch.cuda.empty_cache()
    return dict(median_ms=med, min_ms=mn, max_ms=mx, gbps=2 * COPY_BYTES / (med * 1e-3) / 1e9)


class Shape:
    """Inputs and one callable per method for one shape."""

    def __init__(self, torch, s, gen, libs, stream, methods, tiles):
        self.torch, self.s, self.libs, self.stream = torch, s, libs, stream
        B, H, Hkv, Nq, Nk, D = s["B"], s["H"], s["Hkv"], s["Nq"], s["Nk"], s["D"]

        def rnd(*shape):
            return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)

        self.sets = [(rnd(B, H, Nq, D), rnd(B, Hkv, Nk, D), rnd(B, Hkv, Nk, D)) for _ in range(s["rotate"])]
        self.outs = {m: [torch.empty(B, H, Nq, D, device="cuda", dtype=torch.bfloat16) for _ in self.sets]
                     for m in ("old", "new") if m in methods}
        self.structs = {m: [make_args_struct(q, k, v, o, s["causal"], stream, tiles[m])
                            for (q, k, v), o in zip(self.sets, self.outs[m])] for m in self.outs}
        self.kv_mode = {}       # sdpa backend -> "gqa" (enable_gqa=True) / "expanded" / "same"
        self.expanded = None    # K/V repeated to H heads, per input set, if a backend needs it

    # attn-jit ---------------------------------------------------------------
    def jit_call(self, m):
        fwd = self.libs[m].lib.attn_forward
        structs = self.structs[m]
        byref = ctypes.byref
        return lambda i: fwd(byref(structs[i]))

    # torch SDPA -------------------------------------------------------------
    def sdpa_call(self, kv_mode):
        """fn(i) for one SDPA call on input set i; the caller holds sdpa_kernel(backend)
        around the timing loop (entering it per call would add host time)."""
        import torch.nn.functional as F
        causal = self.s["causal"]
        kw = {"enable_gqa": True} if kv_mode == "gqa" else {}
        if kv_mode == "expanded":
            if self.expanded is None:
                g = self.s["H"] // self.s["Hkv"]
                self.expanded = [(k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1))
                                 for _, k, v in self.sets]
            kvs = self.expanded
        else:
            kvs = [(k, v) for _, k, v in self.sets]
        qs = [q for q, _, _ in self.sets]

        def fn(i):
            F.scaled_dot_product_attention(qs[i], kvs[i][0], kvs[i][1], is_causal=causal, **kw)
            return 0
        return fn

    def sdpa_first(self, name):
        """Runs backend `name` once on set 0: (output, kv_mode, note) or raises."""
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel
        backend = SDPA_BACKENDS[name]()
        q, k, v = self.sets[0]
        causal = self.s["causal"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.s["Hkv"] == self.s["H"]:
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal), "same", ""
            try:
                with sdpa_kernel(backend):
                    return (F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True),
                            "gqa", "enable_gqa=True")
            except (RuntimeError, TypeError, ValueError) as ex:
                note = "expanded K/V (enable_gqa refused: " + first_line(ex, 80) + ")"
            g = self.s["H"] // self.s["Hkv"]
            kk, vv = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(q, kk, vv, is_causal=causal)
            del kk, vv
            return o, "expanded", note

    def jit_first(self, m):
        """One call on set 0 into a NaN-filled output: (status, message, output)."""
        o = self.outs[m][0]
        o.fill_(float("nan"))
        st = self.libs[m].lib.attn_forward(ctypes.byref(self.structs[m][0]))
        msg = "" if st == aj.ATTN_OK else f"{aj.STATUS_NAMES.get(st, st)}: {self.libs[m].last_error()}"
        self.torch.cuda.synchronize()
        return st, msg, o


def run_shape(torch, s, gen, libs, stream, args, emit_base):
    """Checks and times every method on shape s; returns {method: record}."""
    from torch.nn.attention import sdpa_kernel
    methods = [m for m in args.method_list if m in ("cudnn", "fa2") or m in libs]
    sh = Shape(torch, s, gen, libs, stream, methods, args.tiles)
    recs = {m: dict(emit_base, method=m, status="ok") for m in methods}
    fns = {}

    # SDPA first: its output is the check's reference.
    ref = None
    for name in ("fa2", "cudnn"):
        want = name in methods
        if not want and ref is not None:
            continue
        try:
            o, mode, note = sh.sdpa_first(name)
            torch.cuda.synchronize()
            if want:
                recs[name].update(kv=mode, note=note)
                fns[name] = sh.sdpa_call(mode)
            if ref is None and bool(torch.isfinite(o).all()):
                ref, ref_from = o, name
        except (RuntimeError, TypeError, ValueError) as ex:
            torch.cuda.empty_cache()
            if want:
                recs[name]["status"] = "n/a: " + first_line(ex, 120)
    for m in ("old", "new"):
        if m not in methods:
            continue
        try:
            st, msg, o = sh.jit_first(m)
        except Exception as ex:  # noqa: BLE001 - report, do not crash
            st, msg, o = -1, f"exception: {first_line(ex, 120)}", None
        if st != aj.ATTN_OK:
            recs[m]["status"] = "error: " + msg
            continue
        if ref is not None:
            e = rel_err(torch, o, ref)   # NaN (unwritten or overflowed output) is wrong too
            recs[m].update(rel_err=e if math.isfinite(e) else None, checked_against=ref_from,
                           wrong=not (e < CHECK_TOL))
        else:
            recs[m].update(rel_err=None, checked_against=None, wrong=None)
        fns[m] = sh.jit_call(m)
    del ref

    order = [m for m in methods if m in fns]
    meds = {m: [] for m in order}
    mins = {m: [] for m in order}
    settle(torch, args.warmup,
           [((lambda m=m: sdpa_kernel(SDPA_BACKENDS[m]())) if m in SDPA_BACKENDS else contextlib.nullcontext,
             fns[m])
            for m in order if recs[m]["status"] == "ok"], s["rotate"])
    for seq in round_orders(order, args.rounds):
        for m in seq:
            if recs[m]["status"] != "ok":
                continue
            try:
                with warnings.catch_warnings(), (sdpa_kernel(SDPA_BACKENDS[m]()) if m in SDPA_BACKENDS
                                                 else contextlib.nullcontext()):
                    warnings.simplefilter("ignore")
                    med, mn, mx, bad = time_events(torch, fns[m], args.warmup, args.reps, s["rotate"])
            except Exception as ex:  # noqa: BLE001
                recs[m]["status"] = f"error while timing: {first_line(ex, 120)}"
                continue
            if bad:
                lib = libs.get(m)
                recs[m]["status"] = (f"error while timing: {aj.STATUS_NAMES.get(bad, bad)}: "
                                     f"{lib.last_error() if lib else ''}")
                continue
            meds[m].append(med)
            mins[m].append(mn)
    for m in order:
        r = recs[m]
        if r["status"] != "ok" or len(meds[m]) != args.rounds:
            if r["status"] == "ok":
                r["status"] = "not timed"
            continue
        med = statistics.median(meds[m])
        r.update(median_ms=med, round_medians_ms=meds[m], min_ms=min(mins[m]),
                 spread=(max(meds[m]) - min(meds[m])) / med if med > 0 else None,
                 tflops=s["flops"] / (med * 1e-3) / 1e12)
        if s["set"] == "decode":
            r["kv_gbps"] = s["kv_bytes"] / (med * 1e-3) / 1e9
    del sh, fns
    torch.cuda.empty_cache()
    return recs


# ---------------------------------------------------------------------------

def fmt(x, spec):
    """format(x, spec), or '-' padded to the spec's width when x is missing."""
    if isinstance(x, (int, float)) and math.isfinite(x):
        return format(x, spec)
    width = spec.split(".")[0]
    return "-".rjust(int(width)) if width.isdigit() else "-"


def throughput(r, s):
    """TFLOP/s (decode: K/V GB/s) of an ok record, else None."""
    if not r or r.get("status") != "ok" or "median_ms" not in r:
        return None
    return r["kv_gbps"] if s["set"] == "decode" else r["tflops"]


def ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None


def table(rows, copy):
    """rows: [(shape, {method: record})] -> lines of text."""
    w = max([len(s["name"]) for s, _ in rows] + [5])
    head = (f"{'shape':<{w}} {'unit':>6} {'old':>7} {'new':>7} {'new/old':>7} {'cudnn':>7} {'fa2':>7} "
            f"{'new/cudnn':>9} {'new/fa2':>7} {'spread':>6}  notes")
    lines = [head, "-" * len(head)]
    for s, recs in rows:
        t = {m: throughput(recs.get(m), s) for m in METHODS}
        spreads = [r.get("spread") for r in recs.values() if r.get("spread") is not None]
        notes = []
        for m in ("new", "old"):
            r = recs.get(m)
            if r and r.get("wrong"):
                notes.append(f"{m} err {fmt(r.get('rel_err'), '.1e')} vs {r.get('checked_against')}"
                             + (" (old WRONG)" if m == "old" else ""))
            if r and r.get("status") not in (None, "ok"):
                notes.append(f"{m}: {r['status'][:70]}")
        for m in ("cudnn", "fa2"):
            r = recs.get(m)
            if r and r.get("status") not in (None, "ok"):
                notes.append(f"{m}: {r['status'][:50]}")
            elif r and r.get("kv") == "expanded":
                notes.append(f"{m}: expanded K/V")
        wrong = recs.get("new", {}).get("wrong")
        lines.append(
            f"{s['name']:<{w}} {('GB/s' if s['set'] == 'decode' else 'TF/s'):>6} {fmt(t['old'], '7.1f')} "
            f"{fmt(t['new'], '7.1f')} {fmt(ratio(t['new'], t['old']), '7.3f')} {fmt(t['cudnn'], '7.1f')} "
            f"{fmt(t['fa2'], '7.1f')} {fmt(ratio(t['new'], t['cudnn']), '9.3f')} "
            f"{fmt(ratio(t['new'], t['fa2']), '7.3f')} {fmt(max(spreads) * 100 if spreads else None, '5.1f')}%"
            + ("  WRONG" if wrong else "") + ("  " + "; ".join(notes) if notes else ""))
    dec = [(s, recs) for s, recs in rows if s["set"] == "decode"]
    if dec:
        lines.append("")
        cg = copy.get("gbps") if copy else None
        lines.append(f"decode K/V read bandwidth (2*B*Hkv*Nk*D*2 bytes / time); d2d copy of 1 GiB "
                     f"(read + write) in this run: {fmt(cg, '.0f')} GB/s")
        for s, recs in dec:
            parts = []
            for m in METHODS:
                g = throughput(recs.get(m), s)
                if g is not None:
                    parts.append(f"{m} {g:.0f} GB/s = {fmt(ratio(g, cg), '.2f')} x copy"
                                 + (" (expanded K/V)" if recs[m].get("kv") == "expanded" else ""))
            lines.append(f"  {s['name']}: " + ("; ".join(parts) if parts else "nothing measured"))
    return lines


def summarize(rows):
    conv = []
    for s, recs in rows:
        if s["set"] != "conv":
            continue
        r = ratio(throughput(recs.get("new"), s), throughput(recs.get("old"), s))
        if r is not None and not recs["new"].get("wrong"):    # a wrong result's speed means nothing
            conv.append((r, s["name"]))
    out = dict(conv_shapes=len([1 for s, _ in rows if s["set"] == "conv"]), conv_ratios=len(conv))
    if conv:
        vals = [r for r, _ in conv]
        mn = min(conv)
        out.update(median_new_over_old=statistics.median(vals), min_new_over_old=mn[0], min_shape=mn[1])
    out["wrong"] = [s["name"] for s, recs in rows if recs.get("new", {}).get("wrong")]
    out["new_failed"] = [s["name"] for s, recs in rows
                         if recs.get("new", {}).get("status") not in (None, "ok")]
    return out


def main(argv=None):
    args = parse_args(argv)
    shapes = make_shapes(args)
    if args.list:
        list_shapes(args, shapes)
        return 0
    if not args.new or not os.path.exists(args.new):
        print(f"error: --new libattn-jit.so not found: {args.new!r}", file=sys.stderr)
        return 2
    if args.old and not os.path.exists(args.old):
        print(f"error: --old libattn-jit.so not found: {args.old!r}", file=sys.stderr)
        return 2
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: F401
    except ImportError as ex:
        print(f"SKIP: torch with torch.nn.attention not importable ({ex})")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    torch.cuda.init()
    envs = {"new": aj.parse_env(args.new_env), "old": aj.parse_env(args.old_env)}
    libs = {"new": aj.start_library(args.new, envs["new"])}
    if args.old:
        libs["old"] = aj.start_library(args.old, envs["old"])
    stream = torch.cuda.current_stream().cuda_stream
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    tc = os.environ.get("ATTN_JIT_TENSOR_CORES", "auto")
    meta = dict(tool="ab_bench", kind="meta", device=torch.cuda.get_device_name(), torch=torch.__version__,
                cudnn=torch.backends.cudnn.version(), cuda=torch.version.cuda, seed=seed, reps=args.reps,
                warmup=args.warmup, tensor_cores=tc, time=time.strftime("%Y-%m-%d %H:%M:%S"),
                new=dict(path=os.path.abspath(args.new), version=libs["new"].version(), env=envs["new"]),
                old=(dict(path=os.path.abspath(args.old), version=libs["old"].version(), env=envs["old"])
                     if args.old else None))
    jf = open(args.json, "a") if args.json else None

    def emit(rec, echo=True):
        line = json.dumps(rec)
        if echo:
            print(line, flush=True)
        if jf:
            jf.write(line + "\n")
            jf.flush()

    print(f"# ab_bench: {len(shapes)} shapes, methods {','.join(args.method_list)}, "
          f"ATTN_JIT_TENSOR_CORES={tc}, reps {args.reps}, warmup {args.warmup}", flush=True)
    emit(meta)
    t_start = time.time()
    rows, skipped, copy = [], [], None
    for s in shapes:
        if args.time_limit and time.time() - t_start > args.time_limit:
            skipped.append(s["name"])
            continue
        if s["set"] == "decode" and copy is None:
            copy = copy_bandwidth(torch, args.warmup, args.reps)
            emit(dict(tool="ab_bench", kind="copy_1GiB", tensor_cores=tc, **copy))
        base = dict(tool="ab_bench", kind="time", set=s["set"], shape=s["name"], dtype="bf16",
                    batch=s["B"], heads=s["H"], kv_heads=s["Hkv"], nq=s["Nq"], nk=s["Nk"], d=s["D"],
                    causal=s["causal"], flops=s["flops"], kv_bytes=s["kv_bytes"], input_sets=s["rotate"],
                    reps=args.reps, warmup=args.warmup, tensor_cores=tc)
        t0 = time.time()
        try:
            recs = run_shape(torch, s, gen, libs, stream, args, base)
        except Exception as ex:  # noqa: BLE001 - one shape must not stop the run
            recs = {m: dict(base, method=m, status=f"shape failed: {type(ex).__name__}: {first_line(ex, 120)}")
                    for m in args.method_list}
            torch.cuda.empty_cache()
        for m, r in recs.items():
            if m in libs:
                r["lib"] = meta[m]["path"]
            if s["set"] == "decode" and copy and r.get("kv_gbps"):
                r["copy_gbps"] = copy["gbps"]
                r["kv_over_copy"] = r["kv_gbps"] / copy["gbps"]
            emit(r, echo=False)
        rows.append((s, recs))
        t = {m: throughput(recs.get(m), s) for m in METHODS}
        print(f"{s['name']:<44} " + "  ".join(
            f"{m} {fmt(t[m], '.1f')}" + (" WRONG" if recs.get(m, {}).get("wrong") else "")
            + ("" if recs.get(m, {}).get("status") in (None, "ok") else f" [{recs[m]['status'][:60]}]")
            for m in args.method_list) + f"  ({time.time() - t0:.1f}s)", flush=True)

    print()
    for line in table(rows, copy):
        print(line)
    summ = summarize(rows)
    print()
    if "median_new_over_old" in summ:
        print(f"new/old over {summ['conv_ratios']} conv shapes: median {summ['median_new_over_old']:.3f}, "
              f"min {summ['min_new_over_old']:.3f} ({summ['min_shape']})")
    print(f"stats new: {libs['new'].stats()}")
    if "old" in libs:
        print(f"stats old: {libs['old'].stats()}")
    if skipped:
        print(f"# {len(skipped)} shapes not run (time limit): {', '.join(skipped)}")
    summ.update(tool="ab_bench", kind="summary", tensor_cores=tc, skipped=skipped,
                seconds=time.time() - t_start)
    emit(summ, echo=False)
    if jf:
        jf.close()
    bits = []
    if "median_new_over_old" in summ:
        bits.append(f"new/old median {summ['median_new_over_old']:.3f} min {summ['min_new_over_old']:.3f} "
                    f"({summ['min_shape']})")
    else:
        bits.append("no new/old ratio" + ("" if args.old else " (no --old)"))
    bits.append(f"{len(summ['wrong'])} WRONG, {len(summ['new_failed'])} new failed")
    if skipped:
        bits.append(f"{len(skipped)} skipped")
    print(f"ab summary [{tc}]: " + "; ".join(bits))
    return 1 if summ["wrong"] or summ["new_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
