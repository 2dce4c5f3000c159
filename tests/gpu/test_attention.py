#!/usr/bin/env python3
"""attn-jit forward attention against a float64 reference, on the GPU.

Run on the GPU machine:  ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so python3 test_attention.py
(or --lib PATH). Exit 0 all passed, 1 a case failed, 2 usage error, 77 "SKIP: ..."
when torch or a GPU is missing.

Sweep: every (D, mask, Nq, Nk) with D in {32,64,96,128,256} (--head-dims D1,D2,...
replaces them: 80,96,112,160,192 are the wgmma head dims not a multiple of 64), mask in {none, causal
(top-left, PyTorch's is_causal), bottom_right}, Nq, Nk in {1,17,128,1000,4096} is
covered; each (D, mask, dtype, layout, distribution) combination gets 5 of the
(Nq, Nk) pairs (rotating so the 8 combinations of a (D, mask) cover all 25), with
(B, H) rotating over {1,3} x {1,8}, some cases with an explicit scale, without
LSE, or with kv_heads = 0. Inputs are fresh random numbers every run (base seed
printed; --seed S --only I reruns case I).

Per case:
  * O and LSE live inside larger buffers poisoned with NaN; every element of the
    views must be written (NaN/inf in O fails) and the guard elements around them
    must stay NaN (nothing written outside).
  * Reference: float64 on the GPU from the same (rounded) inputs; fully masked rows
    (bottom_right with Nq > Nk) must give O = 0 and LSE = -inf exactly.
  * O tolerance: rel = ||O - ref|| / ||ref|| must be <= tol, where
        tol = 1.25 * max(err_cudnn, err_flash)
    err_cudnn / err_flash: the same measure for torch SDPA's cuDNN and FlashAttention
    backends on the same inputs, in the same run (a backend that raises for the
    shape is skipped -- cuDNN has no bottom-right mask here, FA2 no top-left causal
    mask for Nq != Nk -- and one whose error exceeds 5e-2 is reported and ignored as
    a semantics mismatch). Without any usable backend: tol = FIXED[dtype] = 1e-2 for
    bf16 (~4x the 2.3e-3 of FA2/cuDNN measured on the H200 anchor run) and 2e-3 for
    fp16 (8x finer rounding than bf16, so ~7x its expected error).
    Outputs of fewer than 4096 elements (e.g. Nq = 1, D = 32) make the error a noisy
    statistic, so there tol is at least 2 * err_round, the error of rounding the
    exact result to bf16/fp16 (what the best possible kernel gets; SDPA sits at
    1.0-1.4x of it). NaN never passes.
  * LSE (natural log): |lse - ref| <= 1e-3 + 3e-5 |ref| for every row. Scores are
    computed in fp32 from exact bf16/fp16 products; the float32 rounding of a
    D-term dot product of magnitude |s| is about 1e-7 |s| sqrt(D) and exp/log
    approximations add ~1e-6, so 1e-3 absolute (plus a relative term for the
    large-magnitude scores, up to ~300) leaves a wide margin without hiding a
    wrong max or a wrong scale (those are off by >= 1e-2).

Long sequences (D = 64 in the head dims, on a GPU): Nq = Nk = 8192 causal (with
--quick), and without --quick also 8192 x 9000 none and 9001 x 8192 bottom_right --
the lengths at which the runtime takes its tall D = 64 tile (192 x 128 with a
producer warpgroup; TilePolicy.h's lengthTiles); the same checks. The quick sweep's
D = 64 causal cases (both lengths <= 2048) run on the runtime's 64 x 64 tile for short
causal calls (lengthTiles too).

GQA sweep (--gqa runs only it, --no-gqa leaves it out; part of the default run,
after the sweep above, case indices continuing): K and V have Hkv heads, query
head h reads K/V head h // (H / Hkv), as torch's SDPA with enable_gqa=True.
(H, Hkv) in {(8,8), (8,4), (16,8), (8,2), (16,4), (16,2), (32,4)} (G = H/Hkv =
1, 2, 4, 8) and MQA {(8,1), (16,1)}; kinds: prefill Nq = Nk in {128, 1000, 4096}
(masks none / causal, a few bottom_right), decode Nq = 1, Nk in {1, 1000, 4096,
8192} (none / bottom_right / causal) and speculative decode Nq = 4, Nk in {1000,
4096, 8192} (mostly bottom_right); dtype, layout (bhnd / bnhd via strides), D
(64 and 128 mostly, some 96 and 256) and the input distribution rotate over the
cases. The same checks and tolerance rule as above: the float64 reference
repeats K/V along heads (repeat_interleave); each SDPA backend is first called
with enable_gqa=True on the Hkv-head K/V and, if it refuses that, with the
expanded K/V (noted "expanded K/V"). A runtime that refuses kv_heads != heads
(ATTN_ERROR_UNSUPPORTED) fails those cases with its message. Names show H, Hkv.
"""
import argparse
import itertools
import json
import math
import os
import random
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attn_jit_ctypes as aj  # noqa: E402

SEQLENS = [1, 17, 128, 1000, 4096]
DIMS = [32, 64, 96, 128, 256]
MASKS = ["none", "causal", "bottom_right"]
DTYPES = ["bf16", "f16"]
LAYOUTS = ["bhnd", "bnhd"]
DISTS = ["normal", "large"]
BATCH_HEADS = [(1, 1), (1, 8), (3, 1), (3, 8)]
PAIRS_PER_COMBO = 5
FIXED_TOL = {"bf16": 1e-2, "f16": 2e-3}
BACKEND_SANITY = 5e-2   # a backend error above this means it computed something else
GUARD = 512             # poisoned elements before and after O and LSE
SMALL_OUTPUT = 4096     # below this many O elements the error statistic is noisy

# GQA sweep: (H, Hkv) pairs. G = H / Hkv in {1, 2, 4, 8}, and MQA (Hkv = 1).
GQA_HK_ALL = [(8, 8), (8, 4), (16, 8), (8, 2), (16, 4), (16, 2), (32, 4), (8, 1), (16, 1)]
GQA_HK_SUB = [(8, 8), (16, 8), (16, 4), (32, 4), (8, 1), (16, 1)]    # G = 1, 2, 4, 8, MQA 8, MQA 16
GQA_HK_SPEC = [(8, 8), (8, 4), (16, 4), (32, 4), (16, 1)]
GQA_HK_BR = [(8, 4), (16, 2), (8, 1)]       # prefill with the bottom-right mask (== causal at Nq = Nk)
# (Nq, Nk, mask, dtype, layout) of the long-sequence cases (D = 64, B = 1, H = 2).
LONG_CASES = [(8192, 8192, "causal", "bf16", "bhnd"), (8192, 9000, "none", "f16", "bnhd"),
              (9001, 8192, "bottom_right", "bf16", "bhnd")]
GQA_DIMS = [64, 128, 64, 128, 96, 128, 256]  # period 7: coprime with dtype (2) and layout (4) rotation
GQA_DECODE_MASKS = ["none", "bottom_right", "none", "causal"]
GQA_SPEC_MASKS = ["bottom_right", "bottom_right", "none", "bottom_right", "causal"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=aj.default_lib_path(), help="libattn-jit.so ($ATTN_JIT_LIB)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="lengths up to 1000, 2 pairs per combination")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: the runtime's host path (ATTN_DEVICE_HOST), no SDPA baselines")
    ap.add_argument("--only", default="", help="comma-separated case indices")
    ap.add_argument("--filter", default="", help="run cases whose name contains this")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; later cases are skipped")
    ap.add_argument("--json", default="", help="append one JSON object per case to this file")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    ap.add_argument("--tiles", default="",
                    help="M,N: every call asks for block_m x block_n (attn_fwd_args), e.g. a tile "
                         "shape the policy does not choose yet; default: the policy's")
    ap.add_argument("--head-dims", default="",
                    help="comma-separated head dims for the main sweep instead of "
                         + ",".join(map(str, DIMS))
                         + " (e.g. 80,96,112,160,192: wgmma's head dims that are not multiples of 64); "
                         "the GQA sweep keeps its own")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--gqa", action="store_true", help="run only the GQA sweep (K/V with Hkv < H heads)")
    g.add_argument("--no-gqa", action="store_true", help="leave the GQA sweep out")
    return ap.parse_args()


def head_dims(args):
    """--head-dims as a list (DIMS when empty); exit 2 on a malformed list."""
    if not args.head_dims:
        return DIMS
    try:
        dims = [int(x) for x in args.head_dims.split(",")]
    except ValueError:
        dims = []
    if not dims or any(d < 1 for d in dims):
        print(f"error: --head-dims {args.head_dims!r}: expected positive integers, e.g. 80,96,112", file=sys.stderr)
        sys.exit(2)
    return dims


def make_cases(quick, device, dims=DIMS):
    seqlens = [n for n in SEQLENS if n <= (128 if device == "cpu" else 1000 if quick else 4096)]
    pairs = [(a, b) for a in seqlens for b in seqlens]
    per_combo = 2 if quick or device == "cpu" else PAIRS_PER_COMBO
    cases = []
    combos = list(itertools.product(dims, MASKS, DTYPES, LAYOUTS, DISTS))
    # Round-major order: every combination gets its first pair before any gets
    # its second, so a run cut short by --time-limit still spans all of them.
    for r in range(per_combo):
        for idx, (d, mask, dt, layout, dist) in enumerate(combos):
            off = (idx * 7) % len(pairs)   # 7 is coprime with 9, 16 and 25 pairs
            nq, nk = pairs[(off + r * len(seqlens)) % len(pairs)]
            b, h = BATCH_HEADS[(idx + r) % len(BATCH_HEADS)]
            k = idx * per_combo + r
            cases.append(dict(
                idx=len(cases), B=b, H=h, Nq=nq, Nk=nk, D=d, mask=mask, dtype=dt, layout=layout, dist=dist,
                scale=(0.7 / math.sqrt(d)) if k % 4 == 3 else 0.0,   # 0: the default 1/sqrt(D)
                lse=(k % 6 != 5), kv_heads0=(k % 2 == 1)))
    # Long sequences at D = 64: the runtime's tall tile (TilePolicy.h's
    # lengthTiles, queries and keys both >= 8192).
    if device != "cpu" and 64 in dims:
        longs = LONG_CASES[:1] if quick else LONG_CASES
        for nq, nk, mask, dt, layout in longs:
            cases.append(dict(
                idx=len(cases), B=1, H=2, Nq=nq, Nk=nk, D=64, mask=mask, dtype=dt, layout=layout,
                dist=DISTS[0], scale=0.0, lse=True, kv_heads0=False))
    return cases


def make_gqa_cases(quick, device, first_idx):
    """The GQA sweep (see the module doc); indices start at first_idx."""
    if device == "cpu":
        pre_n, dec_nk, spec_nk = [128], [1, 128], [128]
    elif quick:
        pre_n, dec_nk, spec_nk = [128, 1000], [1, 1000], [1000]
    else:
        pre_n, dec_nk, spec_nk = [128, 1000, 4096], [1, 1000, 4096, 8192], [1000, 4096, 8192]
    small = quick or device == "cpu"
    plan = []   # (kind, B, H, Hkv, Nq, Nk, mask)
    for n in pre_n:
        hks = GQA_HK_SUB if small or n >= 4096 else GQA_HK_ALL
        b = 1 if n >= 4096 else 2 if n >= 1000 else 3
        for mask in ("none", "causal"):
            plan += [("prefill", b, h, hkv, n, n, mask) for h, hkv in hks]
    n_br = pre_n[len(pre_n) // 2]
    plan += [("prefill", 2, h, hkv, n_br, n_br, "bottom_right") for h, hkv in GQA_HK_BR]
    j = 0
    for nk in dec_nk:
        for h, hkv in (GQA_HK_SUB if small or nk == 1 else GQA_HK_ALL):
            plan.append(("decode", [4, 2, 1, 3][j % 4], h, hkv, 1, nk, GQA_DECODE_MASKS[j % len(GQA_DECODE_MASKS)]))
            j += 1
    j = 0
    for nk in spec_nk:
        for h, hkv in GQA_HK_SPEC:
            plan.append(("specdec", 2, h, hkv, 4, nk, GQA_SPEC_MASKS[j % len(GQA_SPEC_MASKS)]))
            j += 1
    cases = []
    for i, (kind, b, h, hkv, nq, nk, mask) in enumerate(plan):
        d = GQA_DIMS[i % len(GQA_DIMS)]
        cases.append(dict(
            idx=first_idx + i, gqa=True, kind=kind, B=b, H=h, Hkv=hkv, Nq=nq, Nk=nk, D=d, mask=mask,
            dtype=DTYPES[i % 2], layout=LAYOUTS[(i // 2) % 2], dist=DISTS[1 if i % 5 == 4 else 0],
            scale=(0.7 / math.sqrt(d)) if i % 6 == 3 else 0.0,
            lse=(i % 8 != 7), kv_heads0=(h == hkv and i % 2 == 1)))
    return cases


def case_name(c):
    if c.get("gqa"):
        head = (f"#{c['idx']} gqa-{c['kind']} B={c['B']} H={c['H']} Hkv={c['Hkv']} (G={c['H'] // c['Hkv']}) "
                f"Nq={c['Nq']} Nk={c['Nk']}")
    else:
        head = f"#{c['idx']} B={c['B']} H={c['H']} Nq={c['Nq']} Nk={c['Nk']}"
    return (f"{head} D={c['D']} {c['dtype']} "
            f"{c['mask']} {c['layout']} {c['dist']}" + (f" scale={c['scale']:.4g}" if c['scale'] else "")
            + ("" if c["lse"] else " no-lse") + (" kv_heads=0" if c["kv_heads0"] else ""))


def visible(torch, mask, nq, nk, device):
    if mask == "none":
        return None
    i = torch.arange(nq, device=device)[:, None]
    j = torch.arange(nk, device=device)[None, :]
    return j <= i if mask == "causal" else j <= i + (nk - nq)


def reference(torch, q, k, v, mask, scale):
    """float64 O (B,H,Nq,D) and LSE (B,H,Nq); fully masked rows: O = 0, LSE = -inf.
    k, v may have Hkv < H heads (H % Hkv == 0): query head h reads K/V head
    h // (H / Hkv), i.e. K/V repeated along heads with repeat_interleave."""
    q64, k64, v64 = q.double(), k.double(), v.double()
    if k.shape[1] != q.shape[1]:
        g = q.shape[1] // k.shape[1]
        k64, v64 = k64.repeat_interleave(g, dim=1), v64.repeat_interleave(g, dim=1)
    s = torch.matmul(q64, k64.transpose(-1, -2)) * scale
    vis = visible(torch, mask, q.shape[2], k.shape[2], q.device)
    if vis is not None:
        s = s.masked_fill(~vis, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    del s
    l = p.sum(dim=-1, keepdim=True)
    o = torch.matmul(p, v64) / torch.where(l > 0, l, torch.ones_like(l))
    lse = torch.where(l > 0, m + torch.log(l), torch.full_like(l, float("-inf"))).squeeze(-1)
    return o, lse


def rel_err(torch, x, ref):
    ref = ref.double()  # a no-op for the float64 reference
    diff = torch.linalg.vector_norm((x.double() - ref).flatten())
    den = torch.linalg.vector_norm(ref.flatten())
    return float(diff / den) if float(den) > 0 else float(diff)


def first_line(ex, n=80):
    lines = str(ex).strip().splitlines()
    return (lines[0] if lines else type(ex).__name__)[:n]


def sdpa_errors(torch, q, k, v, mask, scale, ref_o):
    """{backend: (error or None, note)} for torch SDPA's cuDNN and flash backends.
    With Hkv < H heads in k, v each backend is called with enable_gqa=True; if it
    refuses, again with K/V expanded to H heads (note "expanded K/V: why")."""
    import torch.nn.functional as F
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {"cudnn": (None, "torch lacks torch.nn.attention"), "flash": (None, "torch lacks torch.nn.attention")}
    nq, nk = q.shape[2], k.shape[2]
    gqa = k.shape[1] != q.shape[1]
    expanded = []

    def kv_expanded():
        if not expanded:
            g = q.shape[1] // k.shape[1]
            expanded.append((k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)))
        return expanded[0]

    out = {}
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        if mask == "bottom_right" and nq != nk and name != "flash":
            out[name] = (None, "no bottom-right mask")
            continue

        def call(kk, vv, native_gqa):
            if mask == "bottom_right" and nq != nk:
                # FlashAttention-2 aligns its causal mask bottom-right; call the op
                # directly (the CausalBias route may silently fall back to math).
                # FA2 itself takes K/V with fewer heads (H % Hkv == 0).
                return torch.ops.aten._scaled_dot_product_flash_attention(
                    q, kk, vv, 0.0, True, False, scale=scale)[0]
            kw = {"enable_gqa": True} if native_gqa else {}
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, kk, vv, is_causal=(mask != "none"), scale=scale, **kw)

        note = ""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    o = call(k, v, gqa)
                except (RuntimeError, ValueError, TypeError) as ex:
                    if not gqa:
                        raise
                    note = "expanded K/V: " + first_line(ex, 60)
                    kk, vv = kv_expanded()
                    o = call(kk, vv, False)
            e = rel_err(torch, o, ref_o)
            out[name] = (e, note) if math.isfinite(e) and e <= BACKEND_SANITY else (None, f"ignored, err={e:.2e}")
        except (RuntimeError, ValueError, TypeError) as ex:
            out[name] = (None, "n/a: " + first_line(ex))
    return out


def make_inputs(torch, c, gen, device):
    """q (B, H, Nq, D), k and v (B, Hkv, Nk, D): logical views of (B,H,N,D) or
    (B,N,H,D) storage."""
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[c["dtype"]]

    def one(n, h):
        shape = (c["B"], h, n, c["D"]) if c["layout"] == "bhnd" else (c["B"], n, h, c["D"])
        x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
        if c["dist"] == "large":
            x = 2.0 + 4.0 * x      # scores of tens to hundreds: very peaked softmax
        x = x.to(dt)
        return x if c["layout"] == "bhnd" else x.transpose(1, 2)

    hkv = c.get("Hkv", c["H"])    # K/V heads (GQA sweep); the main sweep has Hkv = H
    return one(c["Nq"], c["H"]), one(c["Nk"], hkv), one(c["Nk"], hkv), dt


def poisoned_view(torch, c, dt, device, what):
    """A NaN-filled buffer with GUARD elements each side, and the O or LSE view
    (LSE is stored (B, Nq, H) in the bnhd layout, to exercise its strides)."""
    B, H, Nq, D = c["B"], c["H"], c["Nq"], c["D"]
    if what == "lse":
        n, phys = B * H * Nq, ((B, H, Nq) if c["layout"] == "bhnd" else (B, Nq, H))
        dtype = torch.float32
    else:
        n, phys = B * H * Nq * D, ((B, H, Nq, D) if c["layout"] == "bhnd" else (B, Nq, H, D))
        dtype = dt
    buf = torch.full((GUARD + n + GUARD,), float("nan"), dtype=dtype, device=device)
    view = buf[GUARD:GUARD + n].view(phys)
    return buf, (view if c["layout"] == "bhnd" else view.transpose(1, 2))


def run_case(torch, lib, c, seed, device, tiles=(0, 0)):
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    q, k, v, dt = make_inputs(torch, c, gen, device)
    scale = c["scale"] if c["scale"] else 1.0 / math.sqrt(c["D"])
    o_buf, o = poisoned_view(torch, c, dt, device, "o")
    l_buf, lse = poisoned_view(torch, c, dt, device, "lse") if c["lse"] else (None, None)
    stream = torch.cuda.current_stream().cuda_stream if device == "cuda" else None
    st, msg = lib.forward(q, k, v, o, lse, c["dtype"], c["mask"], c["scale"], stream=stream,
                          device=aj.DEVICE_CUDA if device == "cuda" else aj.DEVICE_HOST,
                          kv_heads=0 if c["kv_heads0"] else None, tiles=tiles)
    res = dict(name=case_name(c), seed=seed)
    if c.get("gqa"):
        res.update(sweep="gqa", H=c["H"], Hkv=c["Hkv"])
    if st != aj.ATTN_OK:
        res["fail"] = "attn_forward " + msg
        return res
    ref_o, ref_lse = reference(torch, q, k, v, c["mask"], scale)
    base = sdpa_errors(torch, q, k, v, c["mask"], scale, ref_o) if device == "cuda" else {}
    if device == "cuda":
        torch.cuda.synchronize()
    fails = []

    bad = int((~torch.isfinite(o)).sum())
    if bad:
        fails.append(f"{bad} of {o.numel()} O elements NaN/inf (unwritten or overflow)")
    for name, buf, n in (("O", o_buf, o.numel()), ("LSE", l_buf, lse.numel() if lse is not None else 0)):
        if buf is not None and not (torch.isnan(buf[:GUARD]).all() and torch.isnan(buf[GUARD + n:]).all()):
            fails.append(f"wrote outside {name} (guard elements changed)")

    masked_rows = torch.isinf(ref_lse)                                  # (B, H, Nq)
    if bool(masked_rows.any()):
        if bool((o[masked_rows] != 0).any()):
            fails.append("fully masked rows: O != 0")
        if lse is not None and not bool((lse[masked_rows] == float("-inf")).all()):
            fails.append("fully masked rows: LSE != -inf")

    err = rel_err(torch, o, ref_o)
    err_round = rel_err(torch, ref_o.to(dt), ref_o)
    usable = [e for e, _ in base.values() if e is not None]
    floor = 2 * err_round if o.numel() < SMALL_OUTPUT else 0.0
    if usable:
        tol, tol_from = 1.25 * max(usable), "sdpa"
    else:
        tol, tol_from = FIXED_TOL[c["dtype"]], "fixed"
    if floor > tol:
        tol, tol_from = floor, "round"
    if not (err <= tol):   # NaN fails here too
        fails.append(f"rel err {err:.3e} > tol {tol:.3e}")

    lse_err = None
    if lse is not None:
        live = ~masked_rows
        if bool(live.any()):
            d = (lse[live].double() - ref_lse[live]).abs()
            lim = 1e-3 + 3e-5 * ref_lse[live].abs()
            lse_err = float(d.max()) if bool(torch.isfinite(d).all()) else float("nan")
            if not bool((d <= lim).all()):
                fails.append(f"LSE error {lse_err:.3e} over 1e-3 + 3e-5|ref|")
    res.update(err=err, tol=tol, tol_from=tol_from, err_round=err_round, lse_err=lse_err,
               sdpa={k_: {"err": e, "note": n} for k_, (e, n) in base.items()})
    if fails:
        res["fail"] = "; ".join(fails)
    return res


def fmt_base(base):
    parts = []
    for name, b in base.items():
        if b["err"] is not None:
            parts.append(f"{name} {b['err']:.2e}" + (" (expanded K/V)" if b["note"].startswith("expanded") else ""))
        else:
            parts.append(f"{name} {b['note']}")
    return ", ".join(parts)


def main():
    args = parse_args()
    tiles = tuple(int(x) for x in args.tiles.split(",")) if args.tiles else (0, 0)
    # Indices of the GQA sweep continue after the main sweep's whether or not
    # that runs, so that --seed S --only I names the same case either way.
    main_cases = make_cases(args.quick, args.device, head_dims(args))
    gqa_cases = make_gqa_cases(args.quick, args.device, len(main_cases))
    cases = ([] if args.gqa else main_cases) + ([] if args.no_gqa else gqa_cases)
    cases = aj.select_cases(cases, args, case_name)
    if cases is None:
        return 0
    try:
        import torch
    except ImportError as ex:
        print(f"SKIP: torch not importable ({ex})")
        return 77
    if args.device == "cuda" and not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    if not args.lib or not os.path.exists(args.lib):
        print(f"error: libattn-jit.so not found (--lib or ATTN_JIT_LIB): {args.lib}", file=sys.stderr)
        return 2
    lib = aj.AttnJit(args.lib)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    dev_name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu (host path)"
    print(f"# test_attention: attn-jit {lib.version()} from {args.lib}; torch {torch.__version__}; "
          f"device {dev_name}; seed {seed}; {len(cases)} cases; "
          f"ATTN_JIT_CACHE_DIR={os.environ.get('ATTN_JIT_CACHE_DIR', '(unset)')}", flush=True)
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False   # the reference is float64 anyway

    jf = open(args.json, "a") if args.json else None
    passed, failed, skipped, failures, ratios = 0, 0, 0, [], []
    gqa_counts = {"pass": 0, "fail": 0, "unsupported": 0}
    t_start = time.time()
    for c in cases:
        if args.time_limit and time.time() - t_start > args.time_limit:
            skipped += 1
            continue
        t0 = time.time()
        case_seed = seed + c["idx"]
        try:
            res = run_case(torch, lib, c, case_seed, args.device, tiles)
        except Exception as ex:  # noqa: BLE001 - one case must not stop the sweep
            res = dict(name=case_name(c), seed=case_seed, fail=f"exception: {type(ex).__name__}: {ex}")
        dt = time.time() - t0
        ok = "fail" not in res
        passed += ok
        failed += not ok
        if c.get("gqa"):
            gqa_counts["pass" if ok else "fail"] += 1
            gqa_counts["unsupported"] += (not ok) and "UNSUPPORTED" in res["fail"]
        line = f"{'PASS' if ok else 'FAIL'} {res['name']}"
        if "err" in res:
            line += f" err={res['err']:.3e} tol={res['tol']:.3e}({res['tol_from']})"
            if res["sdpa"]:
                line += f" [{fmt_base(res['sdpa'])}]"
            if res["lse_err"] is not None:
                line += f" lse_err={res['lse_err']:.1e}"
        line += f" {dt:.2f}s"
        usable = [b["err"] for b in res.get("sdpa", {}).values() if b["err"] is not None]
        if "err" in res and usable and max(usable) > 0:
            ratios.append((res["err"] / max(usable), res["name"]))
        if not ok:
            line += f"  <- {res['fail']}"
            failures.append(f"{res['name']} (seed {case_seed}): {res['fail']}")
        print(line, flush=True)
        if jf:
            res.update(idx=c["idx"], ok=ok, seconds=dt)
            jf.write(json.dumps(res) + "\n")
        if not ok and "CUDA error" in res["fail"]:
            print("# the CUDA context is unusable after this error; stopping", flush=True)
            skipped += len(cases) - (passed + failed + skipped)
            break
    if jf:
        jf.close()
    if ratios:
        worst = max(ratios)
        print(f"# largest err / max(cuDNN, flash err) over {len(ratios)} cases with a baseline: "
              f"{worst[0]:.2f} ({worst[1]})")
    if gqa_counts["pass"] + gqa_counts["fail"]:
        print(f"# gqa sweep: {gqa_counts['pass']} passed, {gqa_counts['fail']} failed"
              + (f" ({gqa_counts['unsupported']} refused by the runtime: UNSUPPORTED)"
                 if gqa_counts["unsupported"] else ""))
    print(f"# {time.time() - t_start:.1f}s; runtime stats: {lib.stats()}")
    if failures:
        print("# failures:")
        for f in failures:
            print("#   " + f)
    if skipped:
        print(f"# {skipped} cases not run (time limit or aborted): the sweep is incomplete")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed or skipped else 0


if __name__ == "__main__":
    sys.exit(main())
