#!/usr/bin/env python3
"""attn-jit's attention variants against torch FlexAttention and float64, on the GPU.

On the GPU machine, with the bundle (the package in BUNDLE/python loads
BUNDLE/lib/libattn-jit.so):
    PYTHONPATH=BUNDLE/python python3 tests/gpu/test_variants.py [--quick] [--full]
        [--filter S] [--seed S --only I] [--time-limit S] [--list]
Exit 0 all passed, 1 a case failed, 77 ("SKIP: ...") without torch, FlexAttention
or a GPU.

Cases: every variant alone (window, prefix-LM (with its causal mask),
document, ALiBi, bias, softcap) and the combinations causal+window,
window+softcap, document+causal, prefix-LM+window, ALiBi+causal,
bias+softcap, all together, and bottom-right causal with a window (alone,
with ALiBi, and with Nq > Nk: rows that see no key). Each gets four cases
whose (dtype, layout, D) are the four of a half fraction of {bf16, fp16} x
{(B, H, N, D), (B, N, H, D) seen through transposed strides} x {64, 128}
(each pair of factors meets once; --head-dims D1,D2 replaces 64 and 128,
e.g. 96,112 for the producer kernels of the other head dims); shapes rotate over N not a multiple of
any tile and Nq != Nk both ways, K/V heads over H (MHA), H / 4 and 1 (GQA,
MQA). --full runs the whole product (x2 the shapes), --quick one case per
variant. Inputs are fresh random numbers per case (the base seed is printed;
case I uses seed + I).

Per case:
  * attn-jit through attn_jit.attention (the package: its torch path, the
    variant keywords; the outputs it allocates are NaN-filled first), or for
    the bottom-right mask, which the package has no keyword for, attn_forward
    through tests/gpu/attn_jit_ctypes.py into NaN-filled O and LSE;
  * FlexAttention: torch.compile(flex_attention) with a score_mod and a
    mask_mod written from the same semantics (block mask of Q_LEN = Nq,
    KV_LEN = Nk), the same inputs;
  * reference: float64 on the GPU from the same (rounded) inputs, chunked
    over heads.
  Errors against the reference: max |O - ref| ("abs") and ||O - ref|| / ||ref||
  ("rel"). Pass when, for both measures, attn-jit's error <= 1.25 x Flex's
  + 1e-6, or at most the floor: 1.5 x (abs), 2 x (rel) the error of rounding
  the exact result to the dtype (what the best possible kernel gets; the
  max-abs measure is decided by a single element and would otherwise fail a
  kernel whose largest error lands one binade higher); every O element
  finite; rows that see no key O = 0 and LSE = -inf; LSE within
  1e-3 + 3e-5 |ref|.
Also: torch.library.opcheck of attn_jit::attention with the variant
arguments, and a function calling attn_jit.attention with variants under
torch.compile(fullgraph=True) equal to eager.
Prints a table last.
"""
import argparse
import math
import os
import random
import sys
import time
import warnings
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from torch_and_package import NO_TORCH, attn_jit, torch  # noqa: E402,F401
import attn_jit_ctypes as aj  # noqa: E402

ABS_FLOOR = 1e-6
FACTOR = 1.25
DESIGN = [("bf16", "bhnd", 0), ("bf16", "bnhd", 1), ("f16", "bhnd", 1), ("f16", "bnhd", 0)]   # D: an index
HEAD_DIMS = (64, 128)
# (B, Nq, Nk): N no multiple of 64 or 128, Nq != Nk both ways
SHAPES = [(2, 1000, 1000), (1, 777, 1333), (2, 1333, 777), (1, 333, 333)]
HEADS = [(8, 8), (8, 2), (16, 4), (8, 1)]     # (H, Hkv)

# name -> (mask, parameters(H, Nq, Nk, gen) -> dict of the variant; None: drawn per case)
VARIANTS = {
    "window": ("none", dict(window=(96, 32))),
    "prefix_lm": ("causal", dict(prefix_len="Nk/4")),
    "document": ("none", dict(document_ids=6)),
    "alibi": ("none", dict(alibi_slopes=True)),
    "bias": ("none", dict(bias=True)),
    "softcap": ("none", dict(softcap=2.0)),
    "causal+window": ("causal", dict(window=(255, 0))),
    "window+softcap": ("none", dict(window=(128, 64), softcap=5.0)),
    "document+causal": ("causal", dict(document_ids=8)),
    "prefix_lm+window": ("causal", dict(prefix_len="Nk/8", window=(200, 0))),
    "alibi+causal": ("causal", dict(alibi_slopes=True)),
    "bias+softcap": ("none", dict(bias=True, softcap=10.0)),
    "all": ("causal", dict(window=(300, 0), prefix_len="Nk/8", softcap=20.0, alibi_slopes=True, bias=True,
                           document_ids=3)),
    "bottom_right+window": ("bottom_right", dict(window=(127, 0))),
    "bottom_right+window+alibi": ("bottom_right", dict(window=(63, 0), alibi_slopes=True)),
}
DIST_SCALE = {"softcap": 2.0, "window+softcap": 2.0, "bias+softcap": 2.0}   # larger scores: the cap matters


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="one case per variant")
    g.add_argument("--full", action="store_true", help="every dtype x layout x D x 2 shapes per variant")
    ap.add_argument("--only", default="", help="comma-separated case indices")
    ap.add_argument("--filter", default="", help="run cases whose name contains this")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; later cases are skipped")
    ap.add_argument("--no-extras", action="store_true", help="leave out opcheck and torch.compile")
    ap.add_argument("--head-dims", default=",".join(map(str, HEAD_DIMS)),
                    help="the design's two head dims (one: both the same)")
    ap.add_argument("--list", action="store_true")
    return ap.parse_args()


def make_cases(quick, full, head_dims=HEAD_DIMS):
    dims = (tuple(head_dims) * 2)[:2]
    cases = []
    for vi, (name, (mask, params)) in enumerate(VARIANTS.items()):
        if full:
            combos = [(dt, lay, d) for dt in ("bf16", "f16") for lay in ("bhnd", "bnhd") for d in dims
                      for _ in range(2)]
        else:
            combos = [(dt, lay, dims[i]) for dt, lay, i in (DESIGN[(vi + r) % 4] for r in range(1 if quick else 4))]
        for r, (dt, lay, d) in enumerate(combos):
            B, Nq, Nk = SHAPES[(vi + r) % len(SHAPES)]
            if mask == "bottom_right":   # Nq < Nk (a cache), Nq > Nk (rows that see nothing)
                B, Nq, Nk = [(1, 777, 1333), (2, 1333, 777), (2, 1000, 1000)][r % 3]
            H, Hkv = HEADS[(vi * 3 + r) % len(HEADS)]
            cases.append(dict(idx=len(cases), variant=name, mask=mask, params=params, dtype=dt, layout=lay, D=d,
                              B=B, H=H, Hkv=Hkv, Nq=Nq, Nk=Nk, scale_x=DIST_SCALE.get(name, 1.0),
                              bias_t=(r % 2 == 1)))
    return cases


def case_name(c):
    return (f"#{c['idx']} {c['variant']} B={c['B']} H={c['H']} Hkv={c['Hkv']} Nq={c['Nq']} Nk={c['Nk']} "
            f"D={c['D']} {c['dtype']} {c['layout']}")


# --- the variant of a case ------------------------------------------------------


def draw_variant(c, gen):
    """The call's keywords (attn_jit.attention's names, torch tensors on the
    GPU): window, prefix_len, softcap, alibi_slopes, document_ids, bias."""
    H, Nq, Nk = c["H"], c["Nq"], c["Nk"]
    kw = {}
    for key, val in c["params"].items():
        if key == "window" or key == "softcap":
            kw[key] = val
        elif key == "prefix_len":
            kw[key] = Nk // int(val.split("/")[1])
        elif key == "alibi_slopes":
            kw[key] = (2.0 ** (-8.0 * torch.arange(1, H + 1, device="cuda", dtype=torch.float64) / H)).float()
        elif key == "bias":
            if c["bias_t"]:   # a transposed view: strides (1, Nq)
                kw[key] = torch.randn(Nk, Nq, generator=gen, device="cuda").t()
            else:
                kw[key] = torch.randn(Nq, Nk, generator=gen, device="cuda")
        elif key == "document_ids":
            ndocs = val

            def ids(n):
                # sorted ids of ndocs random-length documents
                cuts = torch.sort(torch.randint(0, n + 1, (ndocs - 1,), generator=gen, device="cuda")).values
                return torch.searchsorted(cuts, torch.arange(n, device="cuda"), right=True).to(torch.int32)
            kw[key] = ids(Nq) if Nq == Nk else (ids(Nq), ids(Nk))
    return kw


def doc_pair(kw):
    d = kw.get("document_ids")
    if d is None:
        return None, None
    return d if isinstance(d, tuple) else (d, d)


def reference(q, k, v, mask, scale, kw):
    """float64 O (B, H, Nq, D) and LSE (B, H, Nq) of the header's semantics,
    chunked over heads (scores of at most ~256 MB at a time)."""
    B, H, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    g = H // Hkv
    dev = q.device
    i = torch.arange(Nq, device=dev)[:, None]
    j = torch.arange(Nk, device=dev)[None, :]
    shift = Nk - Nq if mask == "bottom_right" else 0
    seen = torch.ones(Nq, Nk, dtype=torch.bool, device=dev)
    if mask != "none":
        causal = j <= i + shift
        if kw.get("prefix_len") is not None:
            causal = causal | (j < kw["prefix_len"])
        seen &= causal
    if kw.get("window") is not None:
        left, right = kw["window"]
        d = j - (i + shift)
        if left is not None and left >= 0:
            seen &= d >= -left
        if right is not None and right >= 0:
            seen &= d <= right
    qd, kd = doc_pair(kw)
    if qd is not None:
        seen &= qd[:, None] == kd[None, :]
    rel = (j - i).double()
    bias = kw["bias"].double() if kw.get("bias") is not None else None
    slopes = kw["alibi_slopes"].double() if kw.get("alibi_slopes") is not None else None
    cap = kw.get("softcap")
    o = torch.empty(B, H, Nq, D, dtype=torch.float64, device=dev)
    lse = torch.empty(B, H, Nq, dtype=torch.float64, device=dev)
    hc = max(1, min(H, (256 << 20) // (8 * Nq * Nk)))
    for b in range(B):
        for h0 in range(0, H, hc):
            hs = torch.arange(h0, min(H, h0 + hc), device=dev)
            qh = q[b, hs].double()
            kh, vh = k[b, hs // g].double(), v[b, hs // g].double()
            s = torch.matmul(qh, kh.transpose(-1, -2)) * scale
            if slopes is not None:
                s += slopes[hs][:, None, None] * rel
            if bias is not None:
                s += bias
            if cap is not None:
                s = cap * torch.tanh(s / cap)
            s = s.masked_fill(~seen, float("-inf"))
            m = s.amax(dim=-1, keepdim=True)
            m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
            p = torch.exp(s - m)
            del s
            l = p.sum(dim=-1, keepdim=True)
            o[b, hs] = torch.matmul(p, vh) / torch.where(l > 0, l, torch.ones_like(l))
            lse[b, hs] = torch.where(l > 0, m + torch.log(l), torch.full_like(l, float("-inf"))).squeeze(-1)
    return o, lse


def flex_mods(mask, Nq, Nk, kw):
    """(score_mod or None, mask_mod or None) of the same semantics."""
    shift = Nk - Nq if mask == "bottom_right" else 0
    slopes, bias, cap = kw.get("alibi_slopes"), kw.get("bias"), kw.get("softcap")
    prefix, window = kw.get("prefix_len"), kw.get("window")
    qd, kd = doc_pair(kw)

    score_mod = None
    if slopes is not None or bias is not None or cap is not None:
        def score_mod(score, b, h, q_idx, kv_idx):
            if slopes is not None:
                score = score + slopes[h] * (kv_idx - q_idx)
            if bias is not None:
                score = score + bias[q_idx, kv_idx]
            if cap is not None:
                score = cap * torch.tanh(score / cap)
            return score

    terms = mask != "none" or window is not None or qd is not None
    mask_mod = None
    if terms:
        def mask_mod(b, h, q_idx, kv_idx):
            ok = kv_idx >= 0
            if mask != "none":
                causal = kv_idx <= q_idx + shift
                if prefix is not None:
                    causal = causal | (kv_idx < prefix)
                ok = ok & causal
            if window is not None:
                left, right = window
                d = kv_idx - (q_idx + shift)
                if left is not None and left >= 0:
                    ok = ok & (d >= -left)
                if right is not None and right >= 0:
                    ok = ok & (d <= right)
            if qd is not None:
                ok = ok & (qd[q_idx] == kd[kv_idx])
            return ok
    return score_mod, mask_mod


# --- running a case ----------------------------------------------------------------


def make_inputs(c, gen):
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[c["dtype"]]

    def one(h, n):
        shape = (c["B"], h, n, c["D"]) if c["layout"] == "bhnd" else (c["B"], n, h, c["D"])
        x = (c["scale_x"] * torch.randn(shape, generator=gen, device="cuda")).to(dt)
        return x if c["layout"] == "bhnd" else x.transpose(1, 2)
    return one(c["H"], c["Nq"]), one(c["Hkv"], c["Nk"]), one(c["Hkv"], c["Nk"]), dt


def nan_allocators():
    """Patches the package's output allocation to NaN-filled tensors (plans
    built meanwhile keep them: the plans are cleared before and after)."""
    from attn_jit import _core, _torch
    real, real_empty = _torch.allocator, _torch.empty

    def allocator(shape, order, like, lse):
        new = real(shape, order, like, lse)
        return lambda: new().fill_(float("nan"))

    def empty(shape, order, like, lse):   # the general path's
        return real_empty(shape, order, like, lse).fill_(float("nan"))
    _core.local.plans.clear()
    return mock.patch.multiple(_torch, allocator=allocator, empty=empty)


def run_jit(c, q, k, v, kw, lib):
    """attn-jit's (O, LSE), or raises."""
    gqa = c["H"] != c["Hkv"]
    if c["mask"] != "bottom_right":
        from attn_jit import _core
        with nan_allocators():
            try:
                return attn_jit.attention(q, k, v, causal=c["mask"] == "causal", enable_gqa=gqa, return_lse=True,
                                          **kw)
            finally:
                _core.local.plans.clear()
    # attn_forward itself: the package has no bottom-right keyword.
    B, H, Nq, D = q.shape
    if c["layout"] == "bhnd":
        o = torch.full((B, H, Nq, D), float("nan"), dtype=q.dtype, device="cuda")
    else:
        o = torch.full((B, Nq, H, D), float("nan"), dtype=q.dtype, device="cuda").transpose(1, 2)
    lse = torch.full((B, H, Nq), float("nan"), dtype=torch.float32, device="cuda")
    qd, kd = doc_pair(kw)
    w = kw.get("window")
    var = aj.make_variant(window=None if w is None else tuple(-1 if x is None else x for x in w),
                          prefix_len=kw.get("prefix_len"), softcap=kw.get("softcap"),
                          alibi_slopes=kw.get("alibi_slopes"), q_doc_ids=qd, kv_doc_ids=kd, bias=kw.get("bias"))
    st, msg = lib.forward(q, k, v, o, lse, c["dtype"], "bottom_right", 0.0,
                          stream=torch.cuda.current_stream().cuda_stream, variant=var)
    if st != aj.ATTN_OK:
        raise RuntimeError("attn_forward " + msg)
    return o, lse


FLEX = {}


def flex_fn():
    if "fn" not in FLEX:
        from torch.nn.attention.flex_attention import flex_attention
        FLEX["fn"] = torch.compile(flex_attention, dynamic=False)
    return FLEX["fn"]


# Flex's default tiles can ask for more shared memory than the chip has (seen
# with a captured bias at D = 64: "No valid triton configs ... out of
# resource"); then smaller ones are tried, and the case notes which.
FLEX_FALLBACKS = [None, {"BLOCK_M": 64, "BLOCK_N": 64}, {"BLOCK_M": 64, "BLOCK_N": 32, "num_stages": 1}]


def flex_with_fallbacks(q, k, v, **kw):
    """(O of the compiled flex_attention(q, k, v, **kw), kernel_options used
    or None)."""
    for i, opts in enumerate(FLEX_FALLBACKS):
        extra = {} if opts is None else {"kernel_options": opts}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                o = flex_fn()(q, k, v, **kw, **extra)
                torch.cuda.synchronize()
                return o, opts
        except Exception as ex:  # noqa: BLE001 - resources: try smaller tiles
            text = str(ex)
            if i + 1 == len(FLEX_FALLBACKS) or not ("out of resource" in text or "No valid triton" in text):
                raise


def run_flex(c, q, k, v, kw, scale):
    """(Flex's O, kernel_options used or None)."""
    from torch.nn.attention.flex_attention import create_block_mask
    score_mod, mask_mod = flex_mods(c["mask"], c["Nq"], c["Nk"], kw)
    block_mask = None
    if mask_mod is not None:
        block_mask = create_block_mask(mask_mod, None, None, c["Nq"], c["Nk"], device="cuda")
    return flex_with_fallbacks(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=scale,
                               enable_gqa=c["H"] != c["Hkv"])


def errors(x, ref):
    d = (x.double() - ref)
    den = float(torch.linalg.vector_norm(ref))
    return float(d.abs().max()), float(torch.linalg.vector_norm(d)) / (den if den > 0 else 1.0)


def run_case(c, seed, lib):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    q, k, v, dt = make_inputs(c, gen)
    kw = draw_variant(c, gen)
    scale = 1.0 / math.sqrt(c["D"])
    res = dict(name=case_name(c), seed=seed)
    ref_o, ref_lse = reference(q, k, v, c["mask"], scale, kw)
    t0 = time.time()
    try:
        o_flex, opts = run_flex(c, q, k, v, kw, scale)
        if opts is not None:
            res["flex_options"] = opts
    except Exception as ex:  # noqa: BLE001 - the case fails, the run goes on
        res["fail"] = f"flex: {type(ex).__name__}: {str(ex).strip().splitlines()[0][:150] if str(ex).strip() else ''}"
        return res
    res["flex_s"] = time.time() - t0
    o, lse = run_jit(c, q, k, v, kw, lib)
    torch.cuda.synchronize()
    fails = []
    bad = int((~torch.isfinite(o)).sum())
    if bad:
        fails.append(f"{bad} of {o.numel()} O elements NaN/inf")
    dead = torch.isinf(ref_lse)
    res["dead_rows"] = int(dead.sum())
    if bool(dead.any()):
        if bool((o[dead] != 0).any()):
            fails.append("rows that see no key: O != 0")
        if not bool((lse[dead] == float("-inf")).all()):
            fails.append("rows that see no key: LSE != -inf")
    ja, jr = errors(o, ref_o)
    fa, fr = errors(o_flex, ref_o)
    ra, rr = errors(ref_o.to(dt), ref_o)
    tol_a = max(FACTOR * fa + ABS_FLOOR, 1.5 * ra)
    tol_r = max(FACTOR * fr + ABS_FLOOR, 2.0 * rr)
    if not ja <= tol_a:
        fails.append(f"max abs err {ja:.3e} > {tol_a:.3e}")
    if not jr <= tol_r:
        fails.append(f"rel err {jr:.3e} > {tol_r:.3e}")
    live = ~dead
    lse_err = None
    if bool(live.any()):
        dl = (lse[live].double() - ref_lse[live]).abs()
        lse_err = float(dl.max()) if bool(torch.isfinite(dl).all()) else float("nan")
        if not bool((dl <= 1e-3 + 3e-5 * ref_lse[live].abs()).all()):
            fails.append(f"LSE error {lse_err:.2e}")
    res.update(jit_abs=ja, flex_abs=fa, round_abs=ra, jit_rel=jr, flex_rel=fr, round_rel=rr, lse_err=lse_err)
    if fails:
        res["fail"] = "; ".join(fails)
    return res


# --- the op: opcheck, torch.compile ------------------------------------------------


def extras():
    """[(name, None or failure)]: opcheck of the op with variant arguments,
    and attn_jit.attention with variants under torch.compile(fullgraph=True)."""
    out = []
    op = torch.ops.attn_jit.attention.default
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    B, H, Hkv, N, D = 2, 4, 2, 200, 64
    q = torch.randn(B, N, H, D, generator=gen, device="cuda").to(torch.bfloat16).transpose(1, 2)
    k, v = (torch.randn(B, Hkv, N, D, generator=gen, device="cuda").to(torch.bfloat16) for _ in range(2))
    slopes = torch.rand(H, generator=gen, device="cuda")
    bias = torch.randn(N, N, generator=gen, device="cuda")
    ids = torch.sort(torch.randint(0, 3, (N,), generator=gen, device="cuda")).values.to(torch.int32)
    try:
        for args in [(q, k, v, True, None, True, True, 63, 0, None, 20.0, slopes, None, None, bias),
                     (q, k, v, True, None, True, False, None, None, 16, None, None, ids, ids, None)]:
            torch.library.opcheck(op, args)
        out.append(("opcheck attn_jit::attention with variants", None))
    except Exception as ex:  # noqa: BLE001
        out.append(("opcheck attn_jit::attention with variants", f"{type(ex).__name__}: {str(ex)[:300]}"))

    def f(q, k, v, slopes, bias, ids):
        o = attn_jit.attention(q, k, v, causal=True, enable_gqa=True, window=(63, 0), alibi_slopes=slopes,
                               bias=bias, softcap=20.0)
        o2 = attn_jit.attention(q, k, v, causal=True, enable_gqa=True, prefix_len=16, document_ids=ids)
        return o * 2 + o2

    name = "torch.compile(fullgraph=True) with variants equals eager"
    try:
        with torch.inference_mode():
            torch._dynamo.reset()
            e = torch._dynamo.explain(f)(q, k, v, slopes, bias, ids)
            if e.graph_break_count:
                raise AssertionError(f"{e.graph_break_count} graph breaks: {e.break_reasons}")
            torch._dynamo.reset()
            yc = torch.compile(f, fullgraph=True)(q, k, v, slopes, bias, ids)
            y = f(q, k, v, slopes, bias, ids)
            if not torch.equal(yc, y):
                raise AssertionError(f"compiled != eager: max diff {float((yc - y).abs().max()):.3e}")
        out.append((name, None))
    except Exception as ex:  # noqa: BLE001
        out.append((name, f"{type(ex).__name__}: {str(ex)[:300]}"))
    return out


def fmt(x, spec=".2e"):
    return format(x, spec) if isinstance(x, float) and math.isfinite(x) else "-"


def main():
    args = parse_args()
    cases = make_cases(args.quick, args.full, [int(d) for d in args.head_dims.split(",") if d])
    cases = aj.select_cases(cases, args, case_name)
    if cases is None:
        return 0
    if NO_TORCH:
        print(f"SKIP: {NO_TORCH}")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: F401
    except ImportError as ex:
        print(f"SKIP: torch has no FlexAttention ({ex})")
        return 77
    # Every case compiles Flex anew (new mods, shapes): never fall back to eager.
    cfg = torch._dynamo.config
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(cfg, name):
            setattr(cfg, name, 4096)
    if hasattr(cfg, "fail_on_recompile_limit_hit"):
        cfg.fail_on_recompile_limit_hit = True
    torch.backends.cuda.matmul.allow_tf32 = False
    lib = aj.AttnJit(attn_jit.library_path())
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    print(f"# test_variants: attn-jit {attn_jit.version()} ({attn_jit.library_path()}); torch {torch.__version__}; "
          f"{torch.cuda.get_device_name()}; seed {seed}; {len(cases)} cases", flush=True)
    rows, failures, skipped = [], [], 0
    t_start = time.time()
    for c in cases:
        if args.time_limit and time.time() - t_start > args.time_limit:
            skipped += 1
            continue
        t0 = time.time()
        try:
            res = run_case(c, seed + c["idx"], lib)
        except Exception as ex:  # noqa: BLE001 - one case must not stop the run
            res = dict(name=case_name(c), seed=seed + c["idx"], fail=f"exception: {type(ex).__name__}: {ex}"[:300])
        res["seconds"] = time.time() - t0
        ok = "fail" not in res
        rows.append(res)
        line = (f"{'PASS' if ok else 'FAIL'} {res['name']} abs {fmt(res.get('jit_abs'))} (flex "
                f"{fmt(res.get('flex_abs'))}) rel {fmt(res.get('jit_rel'))} (flex {fmt(res.get('flex_rel'))}) "
                f"lse {fmt(res.get('lse_err'), '.1e')} {res['seconds']:.1f}s"
                + (f" (Flex kernel_options {res['flex_options']})" if "flex_options" in res else ""))
        if not ok:
            line += f"  <- {res['fail']}"
            failures.append(f"{res['name']} (seed {res['seed']}): {res['fail']}")
        print(line, flush=True)
    extra = [] if args.no_extras else extras()
    for name, fail in extra:
        print(f"{'PASS' if fail is None else 'FAIL'} {name}" + ("" if fail is None else f"  <- {fail}"))
        if fail is not None:
            failures.append(f"{name}: {fail}")

    print()
    print("| case | attn-jit max abs | Flex max abs | ratio | attn-jit rel | Flex rel | ratio | LSE err | dead rows "
          "| result |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for r in rows:
        ra = r["jit_abs"] / r["flex_abs"] if r.get("flex_abs") else None
        rr = r["jit_rel"] / r["flex_rel"] if r.get("flex_rel") else None
        if ra is not None:
            ratios.append((ra, r["name"]))
        print(f"| {r['name']} | {fmt(r.get('jit_abs'))} | {fmt(r.get('flex_abs'))} | {fmt(ra, '.2f')} | "
              f"{fmt(r.get('jit_rel'))} | {fmt(r.get('flex_rel'))} | {fmt(rr, '.2f')} | "
              f"{fmt(r.get('lse_err'), '.1e')} | {r.get('dead_rows', '-')} | "
              f"{'pass' if 'fail' not in r else 'FAIL'} |")
    if ratios:
        worst = max(ratios)
        print(f"\n# largest max-abs ratio attn-jit / Flex: {worst[0]:.2f} ({worst[1]})")
    print(f"# {time.time() - t_start:.1f}s; runtime stats: {attn_jit.stats()}")
    if failures:
        print("# failures:")
        for f in failures:
            print("#   " + f)
    if skipped:
        print(f"# {skipped} cases not run (time limit)")
    n_fail = len(failures)
    n_pass = len(rows) + len(extra) - n_fail
    print(f"{n_pass} passed, {n_fail} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failures or skipped else 0


if __name__ == "__main__":
    sys.exit(main())
