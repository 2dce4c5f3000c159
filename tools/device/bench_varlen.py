#!/usr/bin/env python3
"""Variable-length prefill: attn-jit's attn_forward_varlen against the same tokens as
equal-length sequences and against torch SDPA on the padded batch, one GPU run.

    ATTN_JIT_LIB=.../libattn-jit.so python3 tools/device/bench_varlen.py
        [--reps 20] [--warmup 5] [--seed 0] [--json FILE]

Shape (issue 15): 16 requests of random lengths summing to 32768 tokens, H = 32,
Hkv = 8, D = 128, bf16, causal (each request's queries over its own keys, Nq_b =
Nk_b). Timed (sdpa_anchors.time_events: CUDA events, median of --reps after
--warmup):
  * varlen    attn_forward_varlen on the packed (32768, H, D) tensors;
  * equal     attn_forward on the same 32768 tokens as B = 16 sequences of 2048,
              (B, N, H, D) layout, kv_heads = 8;
  * sdpa-pad  torch SDPA (default backend choice, enable_gqa) on the batch padded
              to the longest request, (16, H, max_len, D), is_causal.
TFLOP/s count the useful work of the ragged batch, sum_b 2 * H * N_b^2 * D (causal:
half of 4 H N^2 D), for varlen and sdpa-pad, and of the equal batch (16 * 2048^2)
for equal; the issue's target is varlen >= 0.95x equal. Prints a markdown table.
Exit 0 done, 1 attn-jit failed, 77 no torch / GPU.
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)

REQUESTS, TOKENS, H, HKV, D = 16, 32768, 32, 8, 128


def random_lengths(seed):
    """REQUESTS positive lengths summing to TOKENS (uniform cut points)."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, TOKENS), REQUESTS - 1))
    bounds = [0] + cuts + [TOKENS]
    return [bounds[i + 1] - bounds[i] for i in range(REQUESTS)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    from attn_jit_ctypes import torch_on_cuda
    torch = torch_on_cuda()
    if torch is None:
        return 77
    import torch.nn.functional as F
    from attn_jit_ctypes import ATTN_OK, AttnJit, default_lib_path
    from sdpa_anchors import time_events
    lib = AttnJit(default_lib_path())
    stream = torch.cuda.current_stream().cuda_stream
    lens = random_lengths(args.seed)
    cu = [0]
    for n in lens:
        cu.append(cu[-1] + n)
    g = torch.Generator(device="cuda").manual_seed(args.seed)
    q = torch.randn(TOKENS, H, D, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(TOKENS, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(TOKENS, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g)
    o = torch.empty_like(q)
    lse = torch.empty(H, TOKENS, device="cuda", dtype=torch.float32)
    cuq = torch.tensor(cu, dtype=torch.int32, device="cuda")
    rows = []

    def ragged_flops():
        return sum(2 * H * n * n * D for n in lens)

    def report(name, ms, flops, note=""):
        row = dict(method=name, ms=ms, tflops=flops / (ms * 1e-3) / 1e12, note=note)
        rows.append(row)

    # varlen
    def varlen(_):
        return lib.forward_varlen(q, k, v, o, lse, cuq, cuq, max(lens), max(lens), "bf16", "causal",
                                  stream=stream)[0]
    st = varlen(0)
    if st != ATTN_OK:
        print(f"attn-jit varlen failed: {lib.last_error()}")
        return 1
    report("attn-jit varlen", time_events(torch, varlen, args.warmup, args.reps)[0], ragged_flops(),
           f"{REQUESTS} requests, lengths {min(lens)}..{max(lens)}")

    # The same tokens as equal-length sequences, (B, N, H, D) through strides.
    n_eq = TOKENS // REQUESTS
    qe = q.view(REQUESTS, n_eq, H, D).transpose(1, 2)
    ke = k.view(REQUESTS, n_eq, HKV, D).transpose(1, 2)
    ve = v.view(REQUESTS, n_eq, HKV, D).transpose(1, 2)
    oe = o.view(REQUESTS, n_eq, H, D).transpose(1, 2)
    lse_e = torch.empty(REQUESTS, H, n_eq, device="cuda", dtype=torch.float32)

    def equal(_):
        return lib.forward(qe, ke, ve, oe, lse_e, "bf16", "causal", stream=stream)[0]
    st = equal(0)
    if st != ATTN_OK:
        print(f"attn-jit equal-length failed: {lib.last_error()}")
        return 1
    report("attn-jit equal", time_events(torch, equal, args.warmup, args.reps)[0],
           REQUESTS * 2 * H * n_eq * n_eq * D, f"B={REQUESTS} N={n_eq}")

    # torch SDPA on the padded batch (padding rows are wasted work).
    nmax = max(lens)
    qp = torch.zeros(REQUESTS, H, nmax, D, device="cuda", dtype=torch.bfloat16)
    kp = torch.zeros(REQUESTS, HKV, nmax, D, device="cuda", dtype=torch.bfloat16)
    vp = torch.zeros_like(kp)
    for b, n in enumerate(lens):
        qp[b, :, :n] = q[cu[b]:cu[b + 1]].transpose(0, 1)
        kp[b, :, :n] = k[cu[b]:cu[b + 1]].transpose(0, 1)
        vp[b, :, :n] = v[cu[b]:cu[b + 1]].transpose(0, 1)

    def sdpa(_):
        F.scaled_dot_product_attention(qp, kp, vp, is_causal=True, enable_gqa=True)
    try:
        report("sdpa padded", time_events(torch, sdpa, args.warmup, args.reps)[0], ragged_flops(),
               f"(16, H, {nmax}, D)")
    except RuntimeError as ex:
        print(f"SDPA unavailable: {str(ex).splitlines()[0]}")

    print(f"\nVarlen prefill, {torch.cuda.get_device_name()}: {REQUESTS} requests summing to {TOKENS} "
          f"tokens, H={H} Hkv={HKV} D={D} bf16 causal; median of {args.reps} after {args.warmup} warm-ups\n")
    print("| method | ms | TFLOP/s | x equal | notes |")
    print("|---|---:|---:|---:|---|")
    base = next(r for r in rows if r["method"] == "attn-jit equal")["tflops"]
    for r in rows:
        print(f"| {r['method']} | {r['ms']:.3f} | {r['tflops']:.1f} | {r['tflops'] / base:.2f} | {r['note']} |")
    print(f"\nlengths: {lens}")
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(dict(r, lengths=lens)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
