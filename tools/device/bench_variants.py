#!/usr/bin/env python3
"""Attention variants: attn-jit against torch FlexAttention (and SDPA where it has the variant), one GPU run.

    PYTHONPATH=BUNDLE/python python3 tools/device/bench_variants.py [--reps 20] [--warmup 5]
        [--only NAME,...] [--json FILE] [--time-limit S] [--keep-cache] [--list]
        [--old-lib OLD/libattn-jit.so [--old-env VAR=VALUE,...]] [--no-flex] [--jit-block-m M]
        [--jit-block-n N]

Shapes: D = 128 (--d), bf16, H = 16 heads, (B, H, N, D) contiguous, batch so that
B * N = 16k tokens (N = 4k: B = 4, 8k: B = 2, 16k: B = 1). Configurations:
  causal@4k/8k/16k       plain causal, the reference of each N;
  window{256,512,1024}@{8k,16k}  causal + window (W - 1, 0), Mistral's sliding
                         window (Flex mask_mod (q - kv >= 0) & (q - kv < W));
  softcap30@8k           causal, softcap 30;
  alibi@8k               causal, ALiBi slopes 2^(-8 (h + 1) / H);
  document@16k           B = 1, 8 documents of random lengths summing to 16k,
                         causal within each document;
  bias@4k                causal + a captured (N, N) float32 bias table.
Methods: attn-jit (attn_forward through ctypes on prebuilt arguments, the
variant in them), Flex (torch.compile(flex_attention), its block mask built
once; the first call's compile time and the block mask's build time are
reported apart), and torch SDPA's cuDNN and FlashAttention-2 backends on the
plain causal rows (they have none of these variants; the flash_attn package,
which has a window, is not on the machine); on the bias row also SDPA with the
bias (causal folded in as -inf) as a float attn_mask, on whichever backend
takes it ("sdpa+mask").

Timing (tools/device/sdpa_anchors.time_events): CUDA events around each
call, median of --reps after --warmup calls; inputs are 64 MiB per tensor,
beyond the 50 MiB L2, so no rotation. Methods run in the order attn-jit,
Flex, SDPA, then again reversed, after --warmup untimed calls of each (so
that the first one timed does not run on a GPU that idled through the setup:
BENCHMARKS version 45); the median of the two medians is reported,
"spread" is their difference over it. attn-jit's first call (an empty kernel
cache unless --keep-cache: ATTN_JIT_CACHE_DIR is set to a new folder) is
timed on the host with a synchronize, and the runtime's compile count and
milliseconds are read around it.

Checks: before timing, attn-jit's output (into a NaN-filled buffer) is
compared with Flex's: ||O - O_flex|| / ||O_flex|| < 2e-2, else the row is
marked WRONG (a fast wrong kernel cannot pass). It is a sanity check only:
softcap 30 hardly changes the N(0, 1) scores of these inputs, so there it
cannot tell a capped result from a plain one (tests/gpu/test_variants.py
checks the values).

Derived: TFLOP/s over the visible (query, key) pairs, 4 * B * H * D * pairs;
for windows the fraction of 128 x 128 tiles visited against full causal (a
kernel that skips the tiles it need not visit costs about that fraction of
the causal time: "x tiles" is time / (causal time x fraction)); the speedup
of window 1024 over full causal at 16k.
Exit 0 done, 1 attn-jit failed or WRONG on a row, 2 usage, 77 no torch / GPU.
"""
import argparse
import contextlib
import ctypes
import json
import math
import os
import statistics
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)
from sdpa_anchors import round_orders, settle  # noqa: E402

H, D, TOKENS = 16, 128, 16384
CHECK_TOL = 2e-2
TILE = 128


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated configuration names (see --list)")
    ap.add_argument("--json", default="", help="append one JSON object per (configuration, method)")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; later configurations are skipped")
    ap.add_argument("--keep-cache", action="store_true", help="use $ATTN_JIT_CACHE_DIR as it is")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--jit-block-n", type=int, default=0,
                    help="also time attn-jit with this K/V tile (attn_fwd_args.block_n), as method 'attn-jit bn=N'")
    ap.add_argument("--old-lib", default="",
                    help="also time this libattn-jit.so (a previous build) on the same arguments, as method "
                         "'attn-jit old': an A/B in one process")
    ap.add_argument("--old-env", default="",
                    help="VAR=VALUE,... while --old-lib's engine starts: with a copy of this library at "
                         "another path, an A/B of two settings (e.g. ATTN_JIT_EXP2_FMA=4)")
    ap.add_argument("--no-flex", action="store_true", help="leave FlexAttention out (its compiles take minutes)")
    ap.add_argument("--d", type=int, default=D, help="head dim (Gemma 2's softcap and window: 256)")
    ap.add_argument("--jit-block-m", type=int, default=0,
                    help="also time attn-jit with this query tile (attn_fwd_args.block_m), as method "
                         "'attn-jit bm=M' (with --jit-block-n: both, 'attn-jit bm=M bn=N')")
    return ap.parse_args()


def configs(d=D):
    """name -> dict(N, B, D, kind, param): kind in causal, window, softcap, alibi, document, bias."""
    out = {}
    for n in (4096, 8192, 16384):
        out[f"causal@{n // 1024}k"] = dict(N=n, kind="causal")
    for n in (8192, 16384):
        for w in (256, 512, 1024):
            out[f"window{w}@{n // 1024}k"] = dict(N=n, kind="window", W=w)
    out["softcap30@8k"] = dict(N=8192, kind="softcap", cap=30.0)
    out["alibi@8k"] = dict(N=8192, kind="alibi")
    out["document@16k"] = dict(N=16384, kind="document", docs=8)
    out["bias@4k"] = dict(N=4096, kind="bias")
    for c in out.values():
        c["B"] = TOKENS // c["N"]
        c["D"] = d
    return out


# --- the visible pairs of a configuration ----------------------------------------


def doc_lengths(torch, n, ndocs, gen):
    """ndocs random lengths (each >= 1) summing to n."""
    cuts = torch.sort(torch.randperm(n - 1, generator=gen)[:ndocs - 1] + 1).values.tolist()
    edges = [0] + cuts + [n]
    return [b - a for a, b in zip(edges, edges[1:])]


def visible_pairs(c):
    """(query, key) pairs seen per (batch, head)."""
    n = c["N"]
    if c["kind"] == "window":
        w = c["W"]
        return sum(min(i + 1, w) for i in range(n))
    if c["kind"] == "document":
        return sum(L * (L + 1) // 2 for L in c["lengths"])
    return n * (n + 1) // 2


def window_tiles(n, w, tile=TILE):
    """(tiles visited by causal + window (w - 1, 0), tiles visited by causal)
    of tile x tile blocks."""
    nt = (n + tile - 1) // tile
    win = causal = 0
    for bi in range(nt):
        q0, q1 = bi * tile, min(n, bi * tile + tile) - 1
        for bj in range(bi + 1):
            k0, k1 = bj * tile, min(n, bj * tile + tile) - 1
            causal += 1
            # some (q, k) in the block with 0 <= q - k < w
            if q1 - k0 >= 0 and q0 - k1 < w:
                win += 1
    return win, causal


# --- methods ----------------------------------------------------------------------


class Config:
    def __init__(self, torch, name, c, gen, lib):
        import attn_jit_ctypes as aj
        from ab_bench import make_args_struct
        self.torch, self.name, self.c, self.lib = torch, name, c, lib
        B, N, D = c["B"], c["N"], c["D"]

        def rnd(*shape):
            return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        self.q, self.k, self.v = rnd(B, H, N, D), rnd(B, H, N, D), rnd(B, H, N, D)
        self.o = torch.empty_like(self.q)
        kind = c["kind"]
        self.slopes = self.bias = self.doc = None
        vkw = {}
        if kind == "window":
            vkw["window"] = (c["W"] - 1, 0)
        elif kind == "softcap":
            vkw["softcap"] = c["cap"]
        elif kind == "alibi":
            self.slopes = (2.0 ** (-8.0 * torch.arange(1, H + 1, dtype=torch.float64, device="cuda") / H)).float()
            vkw["alibi_slopes"] = self.slopes
        elif kind == "document":
            self.doc = torch.repeat_interleave(torch.arange(len(c["lengths"]), device="cuda", dtype=torch.int32),
                                               torch.tensor(c["lengths"], device="cuda"))
            vkw["q_doc_ids"] = vkw["kv_doc_ids"] = self.doc
        elif kind == "bias":
            self.bias = torch.randn(N, N, generator=gen, device="cuda", dtype=torch.float32)
            vkw["bias"] = self.bias
        self.args = make_args_struct(self.q, self.k, self.v, self.o, True, torch.cuda.current_stream().cuda_stream)
        self.args.variant = aj.make_variant(**vkw)
        self.flex_options = None
        self.fn_c = lib.lib.attn_forward
        self.ref_args = ctypes.byref(self.args)

    # attn-jit
    def jit_call(self, _i=0):
        return self.fn_c(self.ref_args)

    # Flex
    def flex_mods(self):
        torch = self.torch
        kind, c = self.c["kind"], self.c
        score_mod = None
        if kind == "softcap":
            cap = c["cap"]

            def score_mod(score, b, h, q_idx, kv_idx):
                return cap * torch.tanh(score / cap)
        elif kind == "alibi":
            slopes = self.slopes

            def score_mod(score, b, h, q_idx, kv_idx):
                return score + slopes[h] * (kv_idx - q_idx)
        elif kind == "bias":
            bias = self.bias

            def score_mod(score, b, h, q_idx, kv_idx):
                return score + bias[q_idx, kv_idx]
        if kind == "window":
            w = c["W"]

            def mask_mod(b, h, q_idx, kv_idx):
                return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < w)
        elif kind == "document":
            doc = self.doc

            def mask_mod(b, h, q_idx, kv_idx):
                return (q_idx >= kv_idx) & (doc[q_idx] == doc[kv_idx])
        else:
            def mask_mod(b, h, q_idx, kv_idx):
                return q_idx >= kv_idx
        return score_mod, mask_mod

    def flex_setup(self, flex):
        """Builds the block mask (timed) and makes the first, compiling call
        (timed); returns (fn, block-mask seconds, first-call seconds, output)."""
        torch = self.torch
        from torch.nn.attention.flex_attention import create_block_mask
        score_mod, mask_mod = self.flex_mods()
        N = self.c["N"]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        try:
            bm = create_block_mask(mask_mod, None, None, N, N, device="cuda", _compile=True)
        except TypeError:
            bm = create_block_mask(mask_mod, None, None, N, N, device="cuda")
        torch.cuda.synchronize()
        t_mask = time.perf_counter() - t0
        q, k, v = self.q, self.k, self.v

        # Flex's default tiles may ask for more shared memory than the chip
        # has ("out of resource"): then smaller ones (noted in the row).
        for i, opts in enumerate([None, {"BLOCK_M": 64, "BLOCK_N": 64}]):
            extra = {} if opts is None else {"kernel_options": opts}

            def fn(_i=0, extra=extra):
                return flex(q, k, v, score_mod=score_mod, block_mask=bm, **extra)
            t0 = time.perf_counter()
            try:
                out = fn()
                torch.cuda.synchronize()
            except Exception as ex:  # noqa: BLE001
                if i == 1 or "out of resource" not in str(ex) and "No valid triton" not in str(ex):
                    raise
                continue
            self.flex_options = opts
            return fn, t_mask, time.perf_counter() - t0, out

    def sdpa_calls(self):
        """{method: fn} of the SDPA methods of this configuration."""
        torch = self.torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q, k, v = self.q, self.k, self.v
        out = {}
        if self.c["kind"] == "causal":
            for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
                def fn(_i=0, backend=backend):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
                out[name] = fn
        elif self.c["kind"] == "bias":
            N = self.c["N"]
            i = torch.arange(N, device="cuda")
            mask = self.bias.masked_fill(i[None, :] > i[:, None], float("-inf")).to(torch.bfloat16)

            def fn(_i=0):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            out["sdpa+mask"] = fn
        return out


def rel_err(torch, x, ref):
    d = torch.linalg.vector_norm((x.float() - ref.float()).flatten())
    n = torch.linalg.vector_norm(ref.float().flatten())
    return float(d / n) if float(n) > 0 else float(d)


def run_config(torch, name, c, gen, lib, flex, args, time_events, old_lib=None):
    recs = {}
    cfg = Config(torch, name, c, gen, lib)
    # attn-jit: first call (compiles unless cached), into a NaN-filled output
    cfg.o.fill_(float("nan"))
    before = lib.stats()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    st = cfg.jit_call()
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    after = lib.stats()
    jit = dict(method="attn-jit", first_call_ms=first * 1e3, compiles=after["compiles"] - before["compiles"],
               compile_ms=after["compile_ms_total"] - before["compile_ms_total"], status="ok")
    if st != 0:
        jit["status"] = f"error: {lib.status_string(st)}: {lib.last_error()}"
    recs["attn-jit"] = jit
    fns = {}
    # Flex
    fl = dict(method="flex", status="ok")
    recs["flex"] = fl
    flex_out = None
    try:
        if flex is None:
            raise RuntimeError("left out (--no-flex)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fns["flex"], fl["block_mask_s"], fl["first_call_s"], flex_out = cfg.flex_setup(flex)
            if cfg.flex_options:
                fl["kernel_options"] = cfg.flex_options
    except Exception as ex:  # noqa: BLE001 - report, go on
        fl["status"] = "error: " + (str(ex).strip().splitlines() or [type(ex).__name__])[0][:150]
        torch.cuda.empty_cache()
    if jit["status"] == "ok":
        fns["attn-jit"] = cfg.jit_call
        if flex_out is not None:
            e = rel_err(torch, cfg.o, flex_out)
            jit["rel_err_vs_flex"] = e if math.isfinite(e) else None
            jit["wrong"] = not (e < CHECK_TOL)
    if (args.jit_block_n or args.jit_block_m) and jit["status"] == "ok":
        # The same call with other tiles: a copy of the prebuilt arguments.
        alt_args = type(cfg.args).from_buffer_copy(cfg.args)
        alt_args.block_n = args.jit_block_n or alt_args.block_n
        alt_args.block_m = args.jit_block_m or alt_args.block_m
        alt_ref = ctypes.byref(alt_args)
        name_alt = " ".join(["attn-jit"] + ([f"bm={args.jit_block_m}"] if args.jit_block_m else [])
                            + ([f"bn={args.jit_block_n}"] if args.jit_block_n else []))
        cfg.o.fill_(float("nan"))
        st = cfg.fn_c(alt_ref)
        torch.cuda.synchronize()
        alt = dict(method=name_alt, status="ok" if st == 0 else f"error: {lib.status_string(st)}: {lib.last_error()}")
        recs[name_alt] = alt
        if st == 0:
            fns[name_alt] = lambda _i=0, call=cfg.fn_c, ref=alt_ref: call(ref)
            if "flex" in fns:
                e = rel_err(torch, cfg.o, fns["flex"]())
                alt["rel_err_vs_flex"] = e if math.isfinite(e) else None
                alt["wrong"] = not (e < CHECK_TOL)
    if old_lib is not None and jit["status"] == "ok":
        # The previous build on the same arguments; its output is checked
        # against this build's.
        mine = cfg.o.clone()
        cfg.o.fill_(float("nan"))
        st = old_lib.lib.attn_forward(cfg.ref_args)
        torch.cuda.synchronize()
        rec = dict(method="attn-jit old", status="ok" if st == 0 else f"error: {old_lib.status_string(st)}")
        recs["attn-jit old"] = rec
        if st == 0:
            e = rel_err(torch, cfg.o, mine)
            rec["rel_err_vs_new"] = e if math.isfinite(e) else None
            rec["wrong"] = not (e < CHECK_TOL)
            fns["attn-jit old"] = lambda _i=0, call=old_lib.lib.attn_forward, ref=cfg.ref_args: call(ref)
        del mine
    del flex_out
    for m, fn in cfg.sdpa_calls().items():
        rec = dict(method=m, status="ok")
        recs[m] = rec
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
            torch.cuda.synchronize()
            fns[m] = fn
        except Exception as ex:  # noqa: BLE001
            rec["status"] = "n/a: " + (str(ex).strip().splitlines() or [type(ex).__name__])[0][:100]
    order = [m for m in recs if m in fns]
    meds = {m: [] for m in order}
    settle(torch, args.warmup, [(contextlib.nullcontext, fns[m]) for m in order])
    for seq in round_orders(order, 2):
        for m in seq:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    med, mn, mx, bad = time_events(torch, fns[m], args.warmup, args.reps)
            except Exception as ex:  # noqa: BLE001
                recs[m]["status"] = "error while timing: " + str(ex)[:100]
                continue
            if bad:
                recs[m]["status"] = f"error while timing: {lib.status_string(bad)}: {lib.last_error()}"
                continue
            meds[m].append(med)
    flops = 4.0 * c["B"] * H * c["D"] * visible_pairs(c)
    for m in order:
        r = recs[m]
        if r["status"] == "ok" and len(meds[m]) == 2:
            med = statistics.median(meds[m])
            r.update(median_ms=med, round_medians_ms=meds[m], spread=abs(meds[m][0] - meds[m][1]) / med,
                     tflops=flops / (med * 1e-3) / 1e12)
    del cfg, fns
    torch.cuda.empty_cache()
    return recs


def fmt(x, spec):
    if isinstance(x, (int, float)) and math.isfinite(x):
        return format(x, spec)
    return "-"


def main():
    args = parse_args()
    cfgs = configs(args.d)
    names = [n for n in cfgs if not args.only or n in args.only.split(",")]
    if args.list:
        for n in names:
            print(n, cfgs[n])
        return 0
    try:
        import torch
        from torch.nn.attention.flex_attention import flex_attention
    except ImportError as ex:
        print(f"SKIP: torch with FlexAttention not importable ({ex})")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    if not args.keep_cache:
        os.environ["ATTN_JIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-jit-bench-variants-")
    import attn_jit
    import attn_jit_ctypes as aj
    from sdpa_anchors import time_events
    cfg = torch._dynamo.config
    for n in ("cache_size_limit", "recompile_limit"):
        if hasattr(cfg, n):
            setattr(cfg, n, 256)
    lib = aj.start_library(attn_jit.library_path(), {})
    flex = None if args.no_flex else torch.compile(flex_attention, dynamic=False)
    old_lib = aj.start_library(args.old_lib, aj.parse_env(args.old_env)) if args.old_lib else None
    gen = torch.Generator(device="cpu")
    gen.manual_seed(args.seed)
    cgen = torch.Generator(device="cuda")
    cgen.manual_seed(args.seed)
    meta = dict(tool="bench_variants", kind="meta", device=torch.cuda.get_device_name(), torch=torch.__version__,
                attn_jit=lib.version(), lib=lib.path, cache_dir=os.environ.get("ATTN_JIT_CACHE_DIR"),
                reps=args.reps, warmup=args.warmup, time=time.strftime("%Y-%m-%d %H:%M:%S"))
    print("# " + json.dumps(meta), flush=True)
    jf = open(args.json, "a") if args.json else None
    if jf:
        jf.write(json.dumps(meta) + "\n")
    results, skipped = {}, []
    t_start = time.time()
    for name in names:
        c = cfgs[name]
        if c["kind"] == "document":
            c["lengths"] = doc_lengths(torch, c["N"], c["docs"], gen)
        if args.time_limit and time.time() - t_start > args.time_limit:
            skipped.append(name)
            continue
        t0 = time.time()
        try:
            recs = run_config(torch, name, c, cgen, lib, flex, args, time_events, old_lib)
        except Exception as ex:  # noqa: BLE001 - one configuration must not stop the run
            recs = {"attn-jit": dict(method="attn-jit", status=f"failed: {type(ex).__name__}: {str(ex)[:150]}")}
            torch.cuda.empty_cache()
        results[name] = recs
        line = "  ".join(f"{m} {fmt(r.get('median_ms'), '.3f')} ms" + ("" if r["status"] == "ok" else
                                                                        f" [{r['status'][:60]}]")
                         for m, r in recs.items())
        print(f"{name:<16} {line}  ({time.time() - t0:.1f}s)", flush=True)
        if jf:
            for r in recs.values():
                jf.write(json.dumps(dict(r, tool="bench_variants", kind="time", config=name, N=c["N"], B=c["B"],
                                         H=H, D=c["D"], variant=c["kind"],
                                         **({"lengths": c["lengths"]} if "lengths" in c else {}))) + "\n")
    if jf:
        jf.close()

    def ms(name, m):
        return results.get(name, {}).get(m, {}).get("median_ms")

    print()
    print("| config | B x N | attn-jit ms | TFLOP/s | Flex ms | Flex / attn-jit | cuDNN ms | FA2 ms | other | "
          "attn-jit first call ms (compiles) | Flex block mask s | Flex first call s | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = []
    for name in names:
        if name not in results:
            continue
        recs, c = results[name], cfgs[name]
        j, f = recs.get("attn-jit", {}), recs.get("flex", {})
        notes = []
        if j.get("wrong"):
            notes.append(f"WRONG (rel err vs Flex {fmt(j.get('rel_err_vs_flex'), '.1e')})")
        if f.get("kernel_options"):
            notes.append(f"Flex kernel_options {f['kernel_options']}")
        for m, r in recs.items():
            if r.get("status") != "ok":
                notes.append(f"{m}: {r['status'][:60]}")
            if r.get("spread", 0) > 0.05:
                notes.append(f"{m} spread {r['spread'] * 100:.0f}%")
        if j.get("status") != "ok" or j.get("wrong") or j.get("median_ms") is None:
            failed.append(name)
        if c["kind"] == "window":
            win, cau = window_tiles(c["N"], c["W"])
            frac = win / cau
            base = ms(f"causal@{c['N'] // 1024}k", "attn-jit")
            notes.append(f"tiles {frac:.3f} of causal" + (
                f", {j['median_ms'] / (base * frac):.2f} x tiles" if base and j.get("median_ms") else ""))
        other = "; ".join(f"{m} {fmt(r.get('median_ms'), '.3f')}" for m, r in recs.items()
                          if m not in ("attn-jit", "flex", "cudnn", "fa2"))
        print(f"| {name} | {c['B']} x {c['N']} | {fmt(j.get('median_ms'), '.3f')} | {fmt(j.get('tflops'), '.0f')} | "
              f"{fmt(f.get('median_ms'), '.3f')} | "
              f"{fmt(f['median_ms'] / j['median_ms'] if f.get('median_ms') and j.get('median_ms') else None, '.2f')} | "
              f"{fmt(ms(name, 'cudnn'), '.3f')} | {fmt(ms(name, 'fa2'), '.3f')} | {other or '-'} | "
              f"{fmt(j.get('first_call_ms'), '.0f')} ({j.get('compiles', '-')}) | "
              f"{fmt(f.get('block_mask_s'), '.2f')} | {fmt(f.get('first_call_s'), '.1f')} | {'; '.join(notes)} |")
    print()
    for m, label in (("attn-jit", "attn-jit"), ("flex", "Flex")):
        full, w = ms("causal@16k", m), ms("window1024@16k", m)
        if full and w:
            print(f"window 1024 @16k vs full causal @16k, {label}: {full:.3f} / {w:.3f} ms = {full / w:.2f}x")
    if skipped:
        print(f"# not run (time limit): {', '.join(skipped)}")
    print(f"# {time.time() - t_start:.0f}s; runtime stats: {lib.stats()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
