#!/usr/bin/env python3
"""attn-jit variable-length batches (attn_forward_varlen) against float64, on the GPU.

Run on the GPU machine:  ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so python3 test_varlen.py [--quick]
(or --lib PATH). Exit 0 all passed, 1 a case failed, 2 usage error, 77 "SKIP: ..."
when torch or a GPU is missing.

Cases: bf16 and f16, D in {64, 128}, masks none / causal (top-left) / bottom_right,
(H, Hkv) in {(8, 8), (8, 2), (32, 8)} (GQA), a ragged batch per case: B random
lengths in 1..5000 (--quick: 1..1000) with some 0 and 1 on either side, Nq_b != Nk_b
(chunked prefill: few queries over many keys; and more queries than keys), plus one
window variant case. Q, K, V packed as (total, H, D) with cu_seqlens int32 on the GPU.
Packed GQA heads (the runtime packs a call when H / Hkv * max_seqlen_q fits one query
tile): decode batches of B = 8 with 0-4 queries a sequence (some 0 and 1) over keys
up to 8k (--quick: 2k), groups of 2, 4 and 8 and MQA, (H, Hkv) in {(8, 4), (32, 8),
(32, 4), (8, 1)}, each mask, and a window case.

Per case:
  * O (total_q, H, D) and LSE (H, total_q) live inside larger buffers poisoned with
    NaN, and the packed rows end past the last sequence: every row of a sequence
    must be written, the guard and the rows of no sequence must stay NaN.
  * The packed K/V rows past the last sequence are NaN, and in the isolation cases
    ("nan-odd") so are the keys and values of every odd sequence: a tile reads no
    row of another sequence into the result (a NaN there would spread through
    P·V even where P = 0), so the even sequences must still pass.
  * Reference: float64 per sequence, independently of attn-jit.
  * O tolerance: rel = ||O - ref|| / ||ref|| over the rows that see a key must be
    <= 1.25 * err_sdpa, the same measure of torch SDPA run per sequence on the
    equivalent contiguous (1, H, Nq_b, D) inputs (the padded batch without its
    padding), with at least 2 * err_round (rounding the exact result) and, if SDPA
    refuses every sequence, FIXED = 1e-2 (bf16) / 2e-3 (f16).
  * Rows that see no key (bottom_right with Nq_b > Nk_b, Nk_b = 0): O = 0 and
    LSE = -inf exactly. LSE elsewhere: |lse - ref| <= 1e-3 + 3e-5 |ref|.
"""
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attn_jit_ctypes as aj  # noqa: E402

FIXED_TOL = {"bf16": 1e-2, "f16": 2e-3}
GUARD = 512
HEADS = [(8, 8), (8, 2), (32, 8)]
MASKS = ["none", "causal", "bottom_right"]
# Packed GQA decoding: groups of 2, 4 and 8, and multi-query attention.
PACKED_HEADS = [(8, 4), (32, 8), (32, 4), (8, 1)]


def make_cases(quick):
    cases = []
    for dtype in ("bf16", "f16"):
        for d in (64, 128):
            for mi, mask in enumerate(MASKS):
                for hi, (h, hkv) in enumerate(HEADS):
                    if quick and (hi + mi) % 3 != 0:
                        continue
                    cases.append(dict(idx=len(cases), dtype=dtype, D=d, mask=mask, H=h, Hkv=hkv,
                                      B=16 if quick else 12, window=None))
    for dtype in ("bf16", "f16"):
        cases.append(dict(idx=len(cases), dtype=dtype, D=128, mask="bottom_right", H=8, Hkv=2,
                          B=8, window=(256, -1)))
    # Isolation: the odd sequences' K/V are NaN; each D's TMA and cp.async kernels.
    for d, mask in ((128, "none"), (64, "causal"), (96, "bottom_right")):
        cases.append(dict(idx=len(cases), dtype="bf16", D=d, mask=mask, H=8, Hkv=2, B=12,
                          window=None, nan_odd=True))
    for dtype in ("bf16", "f16"):
        for hi, (h, hkv) in enumerate(PACKED_HEADS):
            for mi, mask in enumerate(MASKS):
                if quick and (hi + mi) % 3 != 0:
                    continue
                cases.append(dict(idx=len(cases), dtype=dtype, D=128, mask=mask, H=h, Hkv=hkv, B=8,
                                  window=None, decode=True))
        cases.append(dict(idx=len(cases), dtype=dtype, D=128, mask="bottom_right", H=32, Hkv=8, B=8,
                          window=(256, -1), decode=True))
    return cases


def case_name(c):
    return (f"#{c['idx']} B={c['B']} H={c['H']} Hkv={c['Hkv']} D={c['D']} {c['dtype']} {c['mask']}"
            + (f" window={c['window']}" if c["window"] else "") + (" decode" if c.get("decode") else "")
            + (" nan-odd" if c.get("nan_odd") else ""))


def lengths(rng, B, quick):
    """(lens_q, lens_k): random in 1..5000 (1..1000), some 0 and 1, Nq_b != Nk_b."""
    top = 1000 if quick else 5000
    lq, lk = [], []
    for b in range(B):
        kind = b % 6
        if kind == 0:
            lq.append(rng.choice([0, 1])), lk.append(rng.randint(1, top))
        elif kind == 1:
            lq.append(rng.randint(1, top)), lk.append(rng.choice([0, 1]))
        elif kind == 2:   # chunked prefill: a chunk of queries over a long context
            n = rng.randint(2, top)
            lq.append(rng.randint(1, n)), lk.append(n)
        elif kind == 3:   # more queries than keys
            n = rng.randint(2, top)
            lq.append(n), lk.append(rng.randint(1, n))
        else:
            lq.append(rng.randint(1, top)), lk.append(rng.randint(1, top))
    return lq, lk


def decode_lengths(rng, B, quick):
    """(lens_q, lens_k) of a (speculative) decode batch: 0-4 queries each (the
    first 0, the second 1, the third 4), keys random up to 8k (--quick: 2k)."""
    top = 2048 if quick else 8192
    lq = [0, 1, 4] + [rng.randint(1, 4) for _ in range(B - 3)]
    return lq, [rng.randint(1, top) for _ in lq]


def seen_mask(torch, mask, window, nq, nk, device):
    i = torch.arange(nq, device=device)[:, None]
    j = torch.arange(nk, device=device)[None, :]
    vis = torch.ones(nq, nk, dtype=torch.bool, device=device)
    diag = i + (nk - nq if mask == "bottom_right" else 0)
    if mask != "none":
        vis &= j <= diag
    if window is not None:
        left, right = window
        if left >= 0:
            vis &= j >= diag - left
        if right >= 0:
            vis &= j <= diag + right
    return vis


def sequence_terms(torch, qs, kb, vb, got, got_lse, mask, window, scale, dt):
    """One sequence: queries qs (H, nq, D), its keys and values kb, vb (Hkv, nk, D),
    attn-jit's got (H, nq, D) and got_lse (H, nq) in float64. Returns (terms, failure):
    the squared-error sums of attn-jit (num) and of torch SDPA on the same contiguous
    inputs (num_sdpa; sdpa_ok False if it refused them), of the reference (den) and of
    its rounding (den_round) over the rows that see a key, and the LSE error; failure
    is a message when a row was not written or a row with no key is not O = 0,
    LSE = -inf."""
    nq, nk = qs.shape[1], kb.shape[1]
    dev = qs.device
    g = qs.shape[0] // kb.shape[0]
    ks = kb.repeat_interleave(g, 0)
    vs = vb.repeat_interleave(g, 0)
    vis = seen_mask(torch, mask, window, nq, nk, dev)
    s = torch.matmul(qs.double(), ks.double().transpose(-1, -2)) * scale
    s = s.masked_fill(~vis, float("-inf"))
    any_key = vis.any(-1)                                     # (nq,)
    # (amax refuses an empty row: a sequence with no keys)
    m = s.amax(-1, keepdim=True) if nk > 0 else s.new_full((*s.shape[:-1], 1), float("-inf"))
    p = torch.where(any_key[None, :, None], torch.exp(s - m.clamp_min(-1e300)), torch.zeros_like(s))
    l = p.sum(-1, keepdim=True)
    ref = torch.where(l > 0, torch.matmul(p, vs.double()) / l.clamp_min(1e-300), torch.zeros_like(l))
    ref_lse = torch.where(l[..., 0] > 0, m[..., 0] + torch.log(l[..., 0].clamp_min(1e-300)),
                          torch.full_like(l[..., 0], float("-inf")))
    terms = dict(num=0.0, den=0.0, den_round=0.0, num_sdpa=0.0, sdpa_ok=True, lse_err=0.0)
    if torch.isnan(got).any() or torch.isnan(got_lse).any():
        return terms, "NaN in O or LSE (a row not written)"
    empty = ~any_key
    if empty.any():
        if (got[:, empty] != 0).any() or not torch.isneginf(got_lse[:, empty]).all():
            return terms, "rows with no key must give O = 0, LSE = -inf"
    rows = any_key
    if not rows.any():
        return terms, None
    terms["num"] = float(((got - ref)[:, rows] ** 2).sum())
    terms["den"] = float((ref[:, rows] ** 2).sum())
    terms["den_round"] = float(((ref.to(dt).double() - ref)[:, rows] ** 2).sum())
    terms["lse_err"] = float(((got_lse - ref_lse)[:, rows].abs() - 3e-5 * ref_lse[:, rows].abs()).max())
    # torch SDPA on the equivalent contiguous sequence (no padding).
    try:
        qs1, ks1, vs1 = (t.unsqueeze(0).contiguous() for t in (qs, kb, vb))
        kw = dict(scale=scale, enable_gqa=True)
        if mask == "causal" and window is None:
            out = torch.nn.functional.scaled_dot_product_attention(qs1, ks1, vs1, is_causal=True, **kw)
        elif mask == "none" and window is None:
            out = torch.nn.functional.scaled_dot_product_attention(qs1, ks1, vs1, **kw)
        else:
            out = torch.nn.functional.scaled_dot_product_attention(qs1, ks1, vs1, attn_mask=vis, **kw)
        out = out[0].double()
        terms["num_sdpa"] = float(((out - ref)[:, rows] ** 2).sum())
    except Exception:  # noqa: BLE001 - a backend that refuses the shape
        terms["sdpa_ok"] = False
    return terms, None


class PoisonedOutputs:
    """O (total_q, H, D) and LSE (H, total_q) inside larger buffers, all NaN."""

    def __init__(self, torch, tq, H, D, dt, dev):
        self.o_buf = torch.full((tq * H * D + 2 * GUARD,), float("nan"), device=dev, dtype=dt)
        self.lse_buf = torch.full((H * tq + 2 * GUARD,), float("nan"), device=dev, dtype=torch.float32)
        self.o = self.o_buf[GUARD:GUARD + tq * H * D].view(tq, H, D)
        self.lse = self.lse_buf[GUARD:GUARD + H * tq].view(H, tq)

    def untouched_from(self, torch, row):
        """Whether the guards and the packed rows from `row` on are still NaN."""
        o_buf, lse_buf = self.o_buf, self.lse_buf
        return bool(torch.isnan(o_buf[:GUARD]).all() and torch.isnan(o_buf[-GUARD:]).all()
                    and torch.isnan(lse_buf[:GUARD]).all() and torch.isnan(lse_buf[-GUARD:]).all()
                    and torch.isnan(self.o[row:]).all() and torch.isnan(self.lse[:, row:]).all())


class Errors:
    """The sequences' sequence_terms summed, and the verdict on them."""

    def __init__(self):
        self.num = self.den = self.den_round = self.num_sdpa = self.lse_err = 0.0
        self.sdpa_ok = True

    def add(self, terms):
        for name in ("num", "den", "den_round", "num_sdpa"):
            setattr(self, name, getattr(self, name) + terms[name])
        self.sdpa_ok &= terms["sdpa_ok"]
        self.lse_err = max(self.lse_err, terms["lse_err"])

    def verdict(self, res, dtype):
        """Sets err, tol, tol_from, lse_err of res, and fail if over them."""
        den = self.den
        err = math.sqrt(self.num / den) if den > 0 else 0.0
        err_round = math.sqrt(self.den_round / den) if den > 0 else 0.0
        if self.sdpa_ok and den > 0:
            err_sdpa = math.sqrt(self.num_sdpa / den)
            tol, tol_from = max(1.25 * err_sdpa, 2 * err_round), f"1.25x sdpa {err_sdpa:.2e}"
        else:
            tol, tol_from = FIXED_TOL[dtype], "fixed"
        res.update(err=err, tol=tol, tol_from=tol_from, lse_err=self.lse_err)
        if not err <= tol:
            res["fail"] = f"rel err {err:.3e} > tol {tol:.3e} ({tol_from})"
        elif self.lse_err > 1e-3:
            res["fail"] = f"LSE error {self.lse_err:.2e} > 1e-3 + 3e-5 |ref|"


def packed_inputs(torch, gen, lq, lk, H, Hkv, D, dt, pad_q=5, pad_k=3):
    """Random packed Q (total_q, H, D), K and V (total_k, Hkv, D) of sequences of
    lq queries and lk keys, with pad_q / pad_k rows of no sequence after them; the
    poisoned outputs; the offsets cu_q, cu_k (lists)."""
    cu_q, cu_k = [0], [0]
    for a, b in zip(lq, lk):
        cu_q.append(cu_q[-1] + a)
        cu_k.append(cu_k[-1] + b)
    tq, tk = cu_q[-1] + pad_q, cu_k[-1] + pad_k
    dev = gen.device
    q = torch.randn(tq, H, D, device=dev, generator=gen).to(dt)
    k = torch.randn(tk, Hkv, D, device=dev, generator=gen).to(dt)
    v = torch.randn(tk, Hkv, D, device=dev, generator=gen).to(dt)
    k[cu_k[-1]:] = float("nan")   # rows of no sequence: never read into a result
    v[cu_k[-1]:] = float("nan")
    return q, k, v, PoisonedOutputs(torch, tq, H, D, dt, dev), cu_q, cu_k


def run_case(torch, lib, c, seed):
    dev = "cuda"
    rng = random.Random(seed)
    gen = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    H, Hkv, D = c["H"], c["Hkv"], c["D"]
    lq, lk = (decode_lengths if c.get("decode") else lengths)(rng, c["B"], c.get("quick", False))
    q, k, v, outputs, cu_q, cu_k = packed_inputs(torch, gen, lq, lk, H, Hkv, D, dt)
    skip = set()
    if c.get("nan_odd"):
        skip = set(range(1, len(lq), 2))
        for b in skip:
            k[cu_k[b]:cu_k[b + 1]] = float("nan")
            v[cu_k[b]:cu_k[b + 1]] = float("nan")
    o, lse = outputs.o, outputs.lse
    cuq = torch.tensor(cu_q, dtype=torch.int32, device=dev)
    cuk = torch.tensor(cu_k, dtype=torch.int32, device=dev)
    variant = aj.make_variant(window=c["window"]) if c["window"] else None
    scale = 1 / math.sqrt(D)
    status, msg = lib.forward_varlen(q, k, v, o, lse, cuq, cuk, max(lq), max(lk), c["dtype"], c["mask"],
                                     stream=torch.cuda.current_stream().cuda_stream, variant=variant)
    torch.cuda.synchronize()
    res = dict(name=case_name(c) + f" total_q={cu_q[-1]} total_k={cu_k[-1]}", seed=seed)
    if status != aj.ATTN_OK:
        res["fail"] = msg
        return res
    return check_packed(torch, res, q, k, v, outputs, cu_q, cu_k, c["mask"], c["window"], scale, c["dtype"],
                        skip)


def check_packed(torch, res, q, k, v, outputs, cu_q, cu_k, mask, window, scale, dtype, skip=()):
    """The verdict on a packed call's outputs (PoisonedOutputs) into res: each
    sequence with queries but not in `skip` by sequence_terms, the rows of no
    sequence untouched."""
    dt = q.dtype
    o, lse = outputs.o, outputs.lse
    errors = Errors()
    for b in range(len(cu_q) - 1):
        if cu_q[b + 1] == cu_q[b] or b in skip:
            continue
        qs = q[cu_q[b]:cu_q[b + 1]].transpose(0, 1)            # (H, nq, D)
        kb = k[cu_k[b]:cu_k[b + 1]].transpose(0, 1)            # (Hkv, nk, D)
        vb = v[cu_k[b]:cu_k[b + 1]].transpose(0, 1)
        got = o[cu_q[b]:cu_q[b + 1]].transpose(0, 1).double()
        got_lse = lse[:, cu_q[b]:cu_q[b + 1]].double()
        terms, failure = sequence_terms(torch, qs, kb, vb, got, got_lse, mask, window, scale, dt)
        if failure:
            res["fail"] = f"sequence {b}: {failure}"
            return res
        errors.add(terms)
    if not outputs.untouched_from(torch, cu_q[-1]):
        res["fail"] = "written outside the sequences' rows"
        return res
    errors.verdict(res, dtype)
    return res


def main():
    return aj.drive(__doc__, "lengths up to 1000, fewer cases", "test_varlen", make_cases, case_name, run_case)


if __name__ == "__main__":
    sys.exit(main())
