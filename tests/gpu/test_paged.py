#!/usr/bin/env python3
"""attn-jit over a paged K/V cache (attn_forward_paged) against float64, on the GPU.

Run on the GPU machine:
  ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so PYTHONPATH=<bundle>/python python3 test_paged.py [--quick]
(or --lib PATH). Exit 0 all passed, 1 a case failed, 2 usage error, 77 "SKIP: ..."
when torch or a GPU is missing.

Cases: bf16 and f16, D in {64, 128}, page sizes 16 (a K/V tile spans several pages),
64 and 256, masks none / causal (top-left) / bottom_right, (H, Hkv) in {(8, 2),
(32, 8)} (GQA), plus window + ALiBi + softcap cases. Each case is a ragged batch of
B sequences: key counts random in 1..5000 (--quick: 1..1000) with some 1, queries
packed by cu_seqlens_q: decode (1), a few, or a chunk of up to 300 (chunked prefill);
and decode batches of B in {1, 3} with keys up to 32k (--quick: 4k), where auto splits.
Packed GQA heads (the runtime packs a call when H / Hkv * max_seqlen_q fits one query
tile): the decode batches, and speculative-decoding batches of B = 6 with 1-4 queries
a sequence (some 1) over keys up to 8k (--quick: 2k), groups of 2, 4 and 8 and MQA,
(H, Hkv) in {(8, 4), (32, 8), (32, 4), (8, 1)}, masks none and bottom_right.
Every case runs with split-KV forced through attn_set_num_splits: 1 (never), 2, 7
and 0 (auto: the runtime's choice from the shape and the SM count).

Per case:
  * The caches (num_pages, page_size, Hkv, D) hold each sequence's keys in pages
    shuffled randomly in memory (a random permutation of the pages), with spare
    pages; every cache row no sequence uses (spare pages, the tail of each last
    page) is NaN, and block-table entries past a sequence's pages are a page
    number out of range, so a row gathered from a wrong page or a table entry
    that should not be read shows up as NaN or as an error.
  * O (total_q, H, D) and LSE (H, total_q) live inside larger buffers poisoned
    with NaN, with packed rows past the last sequence: every row of a sequence
    must be written, the guards and the rows of no sequence must stay NaN.
  * Reference: float64 per sequence from its contiguous keys, independently of
    attn-jit; the error is compared with torch SDPA's on the same contiguous
    (1, H, Nq_b, D) inputs (test_varlen.sequence_terms): rel err <= 1.25x SDPA's,
    at least 2x the rounding of the exact result; LSE within 1e-3 + 3e-5 |ref|.
"""
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attn_jit_ctypes as aj  # noqa: E402
from test_varlen import Errors, PoisonedOutputs, sequence_terms  # noqa: E402

HEADS = [(8, 2), (32, 8)]
# Packed GQA decoding: groups of 2, 4 and 8, and multi-query attention.
PACKED_HEADS = [(8, 4), (32, 8), (32, 4), (8, 1)]
MASKS = ["none", "causal", "bottom_right"]
PAGE_SIZES = [16, 64, 256]
SPLITS = [1, 2, 7, 0]  # attn_set_num_splits: never, forced 2 and 7, 0 auto
# A block-table entry past a sequence's pages: never a page.
UNUSED_ENTRY = 1 << 30


def make_cases(quick):
    cases = []

    def add(**c):
        for splits in SPLITS:
            cases.append(dict(idx=len(cases), splits=splits, **c))
    for dtype in ("bf16", "f16"):
        for d in (64, 128):
            for pi, page in enumerate(PAGE_SIZES):
                for mi, mask in enumerate(MASKS):
                    if quick and (pi + mi) % 3 != 0:
                        continue
                    h, hkv = HEADS[(pi + mi) % 2]
                    add(dtype=dtype, D=d, page=page, mask=mask, H=h, Hkv=hkv, B=12, variants=False, decode=False)
    for dtype in ("bf16", "f16"):
        for page in (16, 64):
            add(dtype=dtype, D=128, page=page, mask="bottom_right", H=32, Hkv=8, B=8, variants=True, decode=False)
    # Decode of few long sequences: the grid cannot fill the GPU, so auto splits.
    for dtype in ("bf16", "f16"):
        for page in PAGE_SIZES:
            for b in (1, 3):
                add(dtype=dtype, D=128, page=page, mask="bottom_right", H=32, Hkv=8, B=b, variants=False,
                    decode=True)
    # Speculative decoding with packed heads: 1-4 queries a sequence.
    for dtype in ("bf16", "f16"):
        for hi, (h, hkv) in enumerate(PACKED_HEADS):
            for page in (16, 64):
                mask = MASKS[0] if (hi + page // 16) % 2 else "bottom_right"
                add(dtype=dtype, D=128, page=page, mask=mask, H=h, Hkv=hkv, B=6, variants=False, decode="spec")
    return cases


def case_name(c):
    s = "auto" if c["splits"] == 0 else c["splits"]
    return (f"#{c['idx']} B={c['B']} H={c['H']} Hkv={c['Hkv']} D={c['D']} P={c['page']} {c['dtype']} "
            f"{c['mask']}" + (" window+alibi+softcap" if c["variants"] else "")
            + {False: "", True: " decode", "spec": " spec-decode"}[c["decode"]] + f" splits={s}")


def decode_lengths(rng, B, quick):
    """(lens_q, lens_k) of a decode batch: one query each, keys random up to
    32k (--quick: 4k), the first sequence the longest."""
    top = 4096 if quick else 32768
    lk = [top] + [rng.randint(1, top) for _ in range(B - 1)]
    return [1] * B, lk


def spec_decode_lengths(rng, B, quick):
    """(lens_q, lens_k) of a speculative-decoding batch: 1-4 queries each (the
    first 1, the second 4), keys random up to 8k (--quick: 2k), at least as many
    as the queries."""
    top = 2048 if quick else 8192
    lq = [1, 4] + [rng.randint(1, 4) for _ in range(B - 2)]
    return lq, [rng.randint(n, top) for n in lq]


def lengths(rng, B, quick):
    """(lens_q, lens_k): keys random in 1..5000 (1..1000) with some 1; queries
    1 (decode), a few, or a chunk of up to 300 (chunked prefill)."""
    top = 1000 if quick else 5000
    lq, lk = [], []
    for b in range(B):
        nk = 1 if b % 5 == 1 else rng.randint(1, top)
        kind = b % 3
        nq = 1 if kind == 0 else rng.randint(1, 8) if kind == 1 else rng.randint(1, 300)
        lq.append(nq)
        lk.append(nk)
    return lq, lk


# The variants case: a window of 300 keys to the left of the diagonal, ALiBi
# and a softcap; the reference applies them in attn_jit.h's order.
WINDOW, SOFTCAP = (300, -1), 5.0


def alibi_slopes(torch, H, dev):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], dtype=torch.float32, device=dev)


def run_case(torch, lib, c, seed):
    dev = "cuda"
    rng = random.Random(seed)
    gen = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    H, Hkv, D, P = c["H"], c["Hkv"], c["D"], c["page"]
    lengths_of = {False: lengths, True: decode_lengths, "spec": spec_decode_lengths}[c["decode"]]
    lq, lk = lengths_of(rng, c["B"], c.get("quick", False))
    B = len(lq)
    cu_q = [0]
    for n in lq:
        cu_q.append(cu_q[-1] + n)
    tq = cu_q[-1] + 5                                   # packed rows past the last sequence
    pages_of = [(n + P - 1) // P for n in lk]
    max_pages = max(pages_of) + 1                       # a spare column
    num_pages = sum(pages_of) + 7                       # spare pages
    order = torch.randperm(num_pages, generator=torch.Generator().manual_seed(seed)).tolist()
    table = torch.full((B, max_pages + 2), UNUSED_ENTRY, dtype=torch.int32)   # rows of stride max_pages + 2
    k_cache = torch.full((num_pages, P, Hkv, D), float("nan"), device=dev, dtype=dt)
    v_cache = torch.full_like(k_cache, float("nan"))
    keys, values = [], []
    nxt = 0
    for b in range(B):
        kb = torch.randn(lk[b], Hkv, D, device=dev, generator=gen).to(dt)
        vb = torch.randn(lk[b], Hkv, D, device=dev, generator=gen).to(dt)
        keys.append(kb)
        values.append(vb)
        for j in range(pages_of[b]):
            page = order[nxt]
            nxt += 1
            table[b, j] = page
            rows = min(P, lk[b] - j * P)
            k_cache[page, :rows] = kb[j * P:j * P + rows]
            v_cache[page, :rows] = vb[j * P:j * P + rows]
    block_table = table.to(dev)[:, :max_pages]
    q = torch.randn(tq, H, D, device=dev, generator=gen).to(dt)
    outputs = PoisonedOutputs(torch, tq, H, D, dt, dev)
    o, lse = outputs.o, outputs.lse
    cuq = torch.tensor(cu_q, dtype=torch.int32, device=dev)
    used = torch.tensor(lk, dtype=torch.int32, device=dev)
    slopes = alibi_slopes(torch, H, dev)
    variant = aj.make_variant(window=WINDOW, alibi_slopes=slopes, softcap=SOFTCAP) if c["variants"] else None
    scale = 1 / math.sqrt(D)
    lib.set_num_splits(c["splits"])
    status, msg = lib.forward_paged(q, k_cache, v_cache, o, lse, cuq, max(lq), block_table, used, c["dtype"],
                                    c["mask"], stream=torch.cuda.current_stream().cuda_stream, variant=variant)
    torch.cuda.synchronize()
    res = dict(name=case_name(c) + f" total_q={cu_q[-1]} keys={sum(lk)} pages={num_pages}", seed=seed)
    if status != aj.ATTN_OK:
        res["fail"] = msg
        return res
    errors = Errors()
    for b in range(B):
        qs = q[cu_q[b]:cu_q[b + 1]].transpose(0, 1)            # (H, nq, D)
        got = o[cu_q[b]:cu_q[b + 1]].transpose(0, 1).double()
        got_lse = lse[:, cu_q[b]:cu_q[b + 1]].double()
        kb, vb = keys[b].transpose(0, 1), values[b].transpose(0, 1)
        if c["variants"]:
            failure = variant_check(torch, qs, kb, vb, got, got_lse, slopes, scale, res)
            if failure:
                res["fail"] = f"sequence {b}: {failure}"
                return res
            continue
        terms, failure = sequence_terms(torch, qs, kb, vb, got, got_lse, c["mask"], None, scale, dt)
        if failure:
            res["fail"] = f"sequence {b}: {failure}"
            return res
        errors.add(terms)
    if not outputs.untouched_from(torch, cu_q[-1]):
        res["fail"] = "written outside the sequences' rows"
        return res
    if c["variants"]:
        # torch SDPA has no softcap: a fixed bound on the worst sequence.
        fixed = {"bf16": 1e-2, "f16": 2e-3}[c["dtype"]]
        res.update(tol=fixed, tol_from="fixed", err=res.get("err", 0.0), lse_err=res.get("lse_err", 0.0))
        if res["err"] > fixed:
            res["fail"] = f"rel err {res['err']:.3e} > {fixed:.0e} (fixed)"
        elif res["lse_err"] > 1e-3:
            res["fail"] = f"LSE error {res['lse_err']:.2e} > 1e-3 + 3e-5 |ref|"
        return res
    errors.verdict(res, c["dtype"])
    return res


def variant_check(torch, qs, kb, vb, got, got_lse, slopes, scale, res):
    """Window + ALiBi + softcap (bottom-right) in float64: the largest
    relative error of a sequence into res['err'] (max over sequences), the
    LSE error into res['lse_err']; a failure message for an unwritten row."""
    nq, nk = qs.shape[1], kb.shape[1]
    g = qs.shape[0] // kb.shape[0]
    ks = kb.repeat_interleave(g, 0).double()
    vs = vb.repeat_interleave(g, 0).double()
    i = torch.arange(nq, device=qs.device)[:, None]
    j = torch.arange(nk, device=qs.device)[None, :]
    diag = i + nk - nq
    vis = (j <= diag) & (j >= diag - WINDOW[0])
    s = torch.matmul(qs.double(), ks.transpose(-1, -2)) * scale
    s = s + slopes.double()[:, None, None] * (j - i)
    s = SOFTCAP * torch.tanh(s / SOFTCAP)
    s = s.masked_fill(~vis, float("-inf"))
    rows = vis.any(-1)
    if torch.isnan(got).any() or torch.isnan(got_lse).any():
        return "NaN in O or LSE (a row not written)"
    if not rows.any():
        return None
    s, gv, gl = s[:, rows], got[:, rows], got_lse[:, rows]
    m = s.amax(-1, keepdim=True)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    ref = torch.matmul(p, vs) / l
    ref_lse = (m + torch.log(l))[..., 0]
    err = float(((gv - ref) ** 2).sum().sqrt() / (ref ** 2).sum().sqrt())
    res["err"] = max(res.get("err", 0.0), err)
    lse_err = float(((gl - ref_lse).abs() - 3e-5 * ref_lse.abs()).max())
    res["lse_err"] = max(res.get("lse_err", 0.0), lse_err)
    return None


def main():
    return aj.drive(__doc__, "key counts up to 1000, fewer cases", "test_paged", make_cases, case_name, run_case,
                    needs=("attn_set_num_splits",))


if __name__ == "__main__":
    sys.exit(main())
