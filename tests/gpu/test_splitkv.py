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
  * Reference: float64, independently of attn-jit (test_varlen's sequence_terms,
    shared with test_paged).
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
from test_varlen import Errors, PoisonedOutputs, check_packed, packed_inputs, sequence_terms  # noqa: E402

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


def run_dense(torch, lib, c, seed):
    dev = "cuda"
    gen = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    B, H, Hkv, Nq, Nk, D = c["B"], c["H"], c["Hkv"], c["Nq"], c["Nk"], c["D"]
    q = torch.randn(B, H, Nq, D, device=dev, generator=gen).to(dt)
    k = torch.randn(B, Hkv, Nk, D, device=dev, generator=gen).to(dt)
    v = torch.randn(B, Hkv, Nk, D, device=dev, generator=gen).to(dt)
    # (B, H, Nq, D) and (B, H, Nq) in the poisoned buffers of B * Nq packed rows
    outputs = PoisonedOutputs(torch, B * Nq, H, D, dt, dev)
    o, lse = outputs.o.view(B, H, Nq, D), outputs.lse.view(B, H, Nq)
    scale = 1 / math.sqrt(D)
    lib.set_num_splits(c["splits"])
    status, msg = lib.forward(q, k, v, o, lse, c["dtype"], c["mask"], stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    res = dict(name=case_name(c))
    if status != aj.ATTN_OK:
        res["fail"] = msg
        return res
    errors = Errors()
    for b in range(B):
        terms, failure = sequence_terms(torch, q[b], k[b], v[b], o[b].double(), lse[b].double(), c["mask"], None,
                                        scale, dt)
        if failure:
            res["fail"] = f"batch {b}: {failure}"
            return res
        errors.add(terms)
    if not outputs.untouched_from(torch, B * Nq):
        res["fail"] = "written outside O or LSE"
        return res
    errors.verdict(res, c["dtype"])
    return res


def run_varlen(torch, lib, c, seed):
    dev = "cuda"
    rng = random.Random(seed)
    gen = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    H, Hkv, D = c["H"], c["Hkv"], c["D"]
    lq = [rng.randint(1, c["Nq"]) for _ in range(c["B"])]
    lk = [rng.randint(1, c["Nk"]) for _ in range(c["B"])]
    lk[1] = 0  # a sequence with no keys
    q, k, v, outputs, cu_q, cu_k = packed_inputs(torch, gen, lq, lk, H, Hkv, D, dt, pad_q=3, pad_k=2)
    o, lse = outputs.o, outputs.lse
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
    return check_packed(torch, res, q, k, v, outputs, cu_q, cu_k, c["mask"], None, scale, c["dtype"])


def run_case(torch, lib, c, seed):
    return (run_dense if c["kind"] == "dense" else run_varlen)(torch, lib, c, seed)


def main():
    return aj.drive(__doc__, "fewer shapes", "test_splitkv", make_cases, case_name, run_case,
                    needs=("attn_set_num_splits",))


if __name__ == "__main__":
    sys.exit(main())
