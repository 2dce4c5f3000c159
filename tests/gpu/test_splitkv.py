#!/usr/bin/env python3
"""attn-jit split-KV (flash-decoding) against float64, on the GPU.

Run on the GPU machine:  ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so python3 test_splitkv.py [--quick]
(or --lib PATH). Exit 0 all passed, 1 a case failed, 2 usage error, 77 "SKIP: ..."
when torch or a GPU is missing.

Each case runs one decode shape with the split count forced through
attn_set_num_splits: 1 (never split), 2, 7 and 0 (auto: the runtime's choice from the
shape and the SM count). Shapes: bf16 and f16, D in {64, 128}, (H, Hkv) in {(32, 8),
(8, 8), (8, 1)} (GQA, MHA, MQA), B in {1, 3}, Nq in {1, 2, 4}, Nk in {1, 1000, 5000}
(--quick: fewer), masks none and bottom_right (decode: the last query sees every key;
with Nq > Nk some rows see none). Plus a ragged variable-length decode batch (Nq_b
in 1..4, Nk_b in 0..5000) per count. Contiguous (B, H, N, D) inputs on fresh random
data per case.

Per case:
  * O and LSE live inside larger buffers poisoned with NaN: every row must be
    written, the guard bytes must stay NaN.
  * Reference: float64, independently of attn-jit.
  * O: rel = ||O - ref|| / ||ref|| over the rows that see a key must be <= 1.25 *
    err_sdpa (torch SDPA on the same inputs, enable_gqa), at least 2 * err_round
    (rounding the exact result); FIXED = 1e-2 (bf16) / 2e-3 (f16) if SDPA refuses.
  * Rows that see no key: O = 0 and LSE = -inf exactly. LSE elsewhere: |lse - ref|
    <= 1e-3 + 3e-5 |ref|.
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
SPLITS = [1, 2, 7, 0]  # 0: auto
HEADS = [(32, 8), (8, 8), (8, 1)]


def make_cases(quick):
    cases = []
    for dtype in ("bf16", "f16"):
        for d in (64, 128):
            for hi, (h, hkv) in enumerate(HEADS):
                for b in (1, 3):
                    for nq in (1, 2, 4):
                        for nk in (1, 1000, 5000):
                            for mask in ("none", "bottom_right"):
                                if quick and (hi + nq + nk + (mask == "none") + b) % 4 != 0:
                                    continue
                                for splits in SPLITS:
                                    cases.append(dict(idx=len(cases), kind="dense", dtype=dtype, D=d, H=h,
                                                      Hkv=hkv, B=b, Nq=nq, Nk=nk, mask=mask, splits=splits))
    for dtype in ("bf16", "f16"):
        for splits in SPLITS:
            cases.append(dict(idx=len(cases), kind="varlen", dtype=dtype, D=128, H=32, Hkv=8, B=9, Nq=4,
                              Nk=5000, mask="bottom_right", splits=splits))
    return cases


def case_name(c):
    s = "auto" if c["splits"] == 0 else c["splits"]
    return (f"#{c['idx']} {c['kind']} B={c['B']} H={c['H']} Hkv={c['Hkv']} Nq={c['Nq']} Nk={c['Nk']} "
            f"D={c['D']} {c['dtype']} {c['mask']} splits={s}")


def reference(torch, q, k, v, mask, scale):
    """q (H, nq, D), k, v (Hkv, nk, D) -> float64 O (H, nq, D), LSE (H, nq), rows
    that see a key (nq,)."""
    H, nq, _ = q.shape
    nk = k.shape[1]
    g = H // k.shape[0]
    kd = k.double().repeat_interleave(g, 0)
    vd = v.double().repeat_interleave(g, 0)
    i = torch.arange(nq, device=q.device)[:, None]
    j = torch.arange(nk, device=q.device)[None, :]
    vis = torch.ones(nq, nk, dtype=torch.bool, device=q.device)
    if mask == "bottom_right":
        vis &= j <= i + nk - nq
    s = torch.matmul(q.double(), kd.transpose(-1, -2)) * scale
    s = s.masked_fill(~vis, float("-inf"))
    any_key = vis.any(-1)
    m = s.amax(-1, keepdim=True) if nk > 0 else s.new_full((H, nq, 1), float("-inf"))
    p = torch.where(any_key[None, :, None], torch.exp(s - m.clamp_min(-1e300)), torch.zeros_like(s))
    l = p.sum(-1, keepdim=True)
    ref = torch.where(l > 0, torch.matmul(p, vd) / l.clamp_min(1e-300), torch.zeros_like(l))
    ref_lse = torch.where(l[..., 0] > 0, m[..., 0] + torch.log(l[..., 0].clamp_min(1e-300)),
                          torch.full_like(l[..., 0], float("-inf")))
    return ref, ref_lse, any_key, vis


class Acc:
    """Error sums over the rows that see a key, and the checks of the others."""

    def __init__(self):
        self.num = self.den = self.num_sdpa = self.den_round = 0.0
        self.sdpa_ok = True
        self.lse_err = 0.0
        self.fail = None

    def add(self, torch, got, got_lse, ref, ref_lse, rows, dt, sdpa_out, what):
        if torch.isnan(got).any() or torch.isnan(got_lse).any():
            self.fail = self.fail or f"{what}: NaN in O or LSE (a row not written)"
            return
        empty = ~rows
        if empty.any() and ((got[:, empty] != 0).any() or not torch.isneginf(got_lse[:, empty]).all()):
            self.fail = self.fail or f"{what}: rows with no key must give O = 0, LSE = -inf"
            return
        if not rows.any():
            return
        self.num += float(((got - ref)[:, rows] ** 2).sum())
        self.den += float((ref[:, rows] ** 2).sum())
        self.den_round += float(((ref.to(dt).double() - ref)[:, rows] ** 2).sum())
        self.lse_err = max(self.lse_err, float(((got_lse - ref_lse)[:, rows].abs()
                                                - 3e-5 * ref_lse[:, rows].abs()).max()))
        if sdpa_out is None:
            self.sdpa_ok = False
        else:
            self.num_sdpa += float(((sdpa_out.double() - ref)[:, rows] ** 2).sum())

    def verdict(self, res, dtype):
        if self.fail:
            res["fail"] = self.fail
            return res
        err = math.sqrt(self.num / self.den) if self.den > 0 else 0.0
        err_round = math.sqrt(self.den_round / self.den) if self.den > 0 else 0.0
        if self.sdpa_ok and self.den > 0:
            err_sdpa = math.sqrt(self.num_sdpa / self.den)
            tol, tol_from = max(1.25 * err_sdpa, 2 * err_round), f"1.25x sdpa {err_sdpa:.2e}"
        else:
            tol, tol_from = FIXED_TOL[dtype], "fixed"
        res.update(err=err, tol=tol, tol_from=tol_from, lse_err=self.lse_err)
        if not err <= tol:
            res["fail"] = f"rel err {err:.3e} > tol {tol:.3e} ({tol_from})"
        elif self.lse_err > 1e-3:
            res["fail"] = f"LSE error {self.lse_err:.2e} > 1e-3 + 3e-5 |ref|"
        return res


def sdpa(torch, q, k, v, vis, mask, scale):
    """torch SDPA on (1, H, nq, D) / (1, Hkv, nk, D), or None if it refuses."""
    try:
        kw = dict(scale=scale, enable_gqa=True)
        if mask == "none":
            out = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], **kw)
        else:
            out = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=vis, **kw)
        return out[0]
    except Exception:  # noqa: BLE001 - a backend that refuses the shape
        return None


def poisoned(torch, n, dt, dev):
    buf = torch.full((n + 2 * GUARD,), float("nan"), device=dev, dtype=dt)
    return buf, buf[GUARD:GUARD + n]


def guards_ok(torch, *bufs):
    return all(torch.isnan(b[:GUARD]).all() and torch.isnan(b[-GUARD:]).all() for b in bufs)


def run_dense(torch, lib, c, seed):
    dev = "cuda"
    gen = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    B, H, Hkv, Nq, Nk, D = c["B"], c["H"], c["Hkv"], c["Nq"], c["Nk"], c["D"]
    q = torch.randn(B, H, Nq, D, device=dev, generator=gen).to(dt)
    k = torch.randn(B, Hkv, Nk, D, device=dev, generator=gen).to(dt)
    v = torch.randn(B, Hkv, Nk, D, device=dev, generator=gen).to(dt)
    o_buf, o_flat = poisoned(torch, B * H * Nq * D, dt, dev)
    lse_buf, lse_flat = poisoned(torch, B * H * Nq, torch.float32, dev)
    o, lse = o_flat.view(B, H, Nq, D), lse_flat.view(B, H, Nq)
    scale = 1 / math.sqrt(D)
    lib.set_num_splits(c["splits"])
    status, msg = lib.forward(q, k, v, o, lse, c["dtype"], c["mask"], stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    res = dict(name=case_name(c))
    if status != aj.ATTN_OK:
        res["fail"] = msg
        return res
    acc = Acc()
    for b in range(B):
        ref, ref_lse, rows, vis = reference(torch, q[b], k[b], v[b], c["mask"], scale)
        acc.add(torch, o[b].double(), lse[b].double(), ref, ref_lse, rows, dt,
                sdpa(torch, q[b], k[b], v[b], vis, c["mask"], scale), f"batch {b}")
    if not guards_ok(torch, o_buf, lse_buf):
        res["fail"] = "written outside O or LSE"
        return res
    return acc.verdict(res, c["dtype"])


def run_varlen(torch, lib, c, seed):
    dev = "cuda"
    rng = random.Random(seed)
    gen = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    H, Hkv, D = c["H"], c["Hkv"], c["D"]
    lq = [rng.randint(1, c["Nq"]) for _ in range(c["B"])]
    lk = [rng.randint(1, c["Nk"]) for _ in range(c["B"])]
    lk[1] = 0  # a sequence with no keys
    cu_q, cu_k = [0], [0]
    for a, b in zip(lq, lk):
        cu_q.append(cu_q[-1] + a)
        cu_k.append(cu_k[-1] + b)
    tq, tk = cu_q[-1] + 3, cu_k[-1] + 2  # packed rows past the last sequence
    q = torch.randn(tq, H, D, device=dev, generator=gen).to(dt)
    k = torch.randn(tk, Hkv, D, device=dev, generator=gen).to(dt)
    v = torch.randn(tk, Hkv, D, device=dev, generator=gen).to(dt)
    o_buf, o_flat = poisoned(torch, tq * H * D, dt, dev)
    lse_buf, lse_flat = poisoned(torch, H * tq, torch.float32, dev)
    o, lse = o_flat.view(tq, H, D), lse_flat.view(H, tq)
    cuq = torch.tensor(cu_q, dtype=torch.int32, device=dev)
    cuk = torch.tensor(cu_k, dtype=torch.int32, device=dev)
    scale = 1 / math.sqrt(D)
    lib.set_num_splits(c["splits"])
    status, msg = lib.forward_varlen(q, k, v, o, lse, cuq, cuk, max(lq), max(lk), c["dtype"], c["mask"],
                                     stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    res = dict(name=case_name(c) + f" lens_k={lk}")
    if status != aj.ATTN_OK:
        res["fail"] = msg
        return res
    acc = Acc()
    for b in range(len(lq)):
        qs = q[cu_q[b]:cu_q[b + 1]].transpose(0, 1)
        ks = k[cu_k[b]:cu_k[b + 1]].transpose(0, 1)
        vs = v[cu_k[b]:cu_k[b + 1]].transpose(0, 1)
        ref, ref_lse, rows, vis = reference(torch, qs, ks, vs, c["mask"], scale)
        out = sdpa(torch, qs.contiguous(), ks.contiguous(), vs.contiguous(), vis, c["mask"], scale) \
            if rows.any() else None
        acc.add(torch, o[cu_q[b]:cu_q[b + 1]].transpose(0, 1).double(), lse[:, cu_q[b]:cu_q[b + 1]].double(),
                ref, ref_lse, rows, dt, out, f"sequence {b}")
    if not guards_ok(torch, o_buf, lse_buf) or not (torch.isnan(o[cu_q[-1]:]).all()
                                                    and torch.isnan(lse[:, cu_q[-1]:]).all()):
        res["fail"] = "written outside the sequences' rows"
        return res
    return acc.verdict(res, c["dtype"])


def main():
    args = aj.parse_case_args(__doc__, "fewer shapes")
    cases = aj.select_cases(make_cases(args.quick), args, case_name)
    if cases is None:
        return 0
    opened = aj.open_for_cases(args, f"test_splitkv, {len(cases)} cases")
    if isinstance(opened, int):
        return opened
    torch, lib, seed = opened
    if not hasattr(lib.lib, "attn_set_num_splits"):
        print(f"error: {args.lib} has no attn_set_num_splits (a library before split-KV)", file=sys.stderr)
        return 2

    def run(c, case_seed):
        return (run_dense if c["kind"] == "dense" else run_varlen)(torch, lib, c, case_seed)
    failed = aj.run_cases(cases, run, case_name, seed)
    lib.set_num_splits(0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
