#!/usr/bin/env python3
"""Split-KV decoding: attn-jit with the runtime's split count (auto) against no split,
side by side with torch SDPA, as K/V bytes read per second against the device's copy
bandwidth measured in the same run.

    ATTN_JIT_LIB=.../libattn-jit.so python3 tools/device/bench_splitkv.py
        [--reps 50] [--warmup 10] [--contexts 1024,...] [--batches 1,8,64]
        [--splits 16,32] [--json FILE]

Shape (issue 15): decode, one query per sequence, B in {1, 8, 64}, Hq = 32, Hkv = 8,
D = 128, bf16, contiguous (B, H, N, D), context Nk in 1k..128k (--contexts), mask
bottom_right (with Nq = 1 it sees every key). Timed (sdpa_anchors.time_events: CUDA
events, median of --reps after --warmup):
  * attn-jit auto   attn_set_num_splits(0): the count the runtime picks (printed);
  * attn-jit 1      attn_set_num_splits(1): never split;
  * attn-jit s=N    attn_set_num_splits(N) for each N of --splits (none by default):
                    to weigh the auto rule against fixed counts in the same run;
  * sdpa            torch SDPA (its default backend choice: cuDNN / FA2 / efficient),
                    enable_gqa, on the same tensors.
K/V bytes read: 2 * B * Hkv * Nk * D * 2 (each byte of K and V once); GB/s is that over
the median time, "% copy" its share of a 1 GiB device-to-device copy's bandwidth
(read + write bytes over time) measured first. The issue's target: >= 80 % at B = 1,
128k (split-KV) and >= 85 % at B = 64, 8k. A case whose tensors would not fit (B = 64
at 128k needs 8 GiB of K/V) is skipped when allocation fails. Prints a markdown table.
Exit 0 done, 1 attn-jit failed, 77 no torch / GPU.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)

H, HKV, D = 32, 8, 128
COPY_BYTES = 1 << 30


def copy_gbps(torch, time_events, warmup, reps):
    src = torch.randint(0, 255, (COPY_BYTES,), device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    med = time_events(torch, lambda i: dst.copy_(src), warmup, reps)[0]
    del src, dst
    torch.cuda.empty_cache()
    return 2 * COPY_BYTES / (med * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--contexts", default="1024,4096,8192,16384,32768,65536,131072")
    ap.add_argument("--batches", default="1,8,64")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--splits", default="", help="fixed split counts to time beside auto")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    fixed = [int(x) for x in args.splits.split(",") if x]
    from attn_jit_ctypes import torch_on_cuda
    torch = torch_on_cuda()
    if torch is None:
        return 77
    import torch.nn.functional as F
    from attn_jit_ctypes import ATTN_OK, AttnJit, default_lib_path
    from sdpa_anchors import time_events
    lib = AttnJit(default_lib_path())
    if not hasattr(lib.lib, "attn_set_num_splits"):
        print("attn-jit library has no attn_set_num_splits (before split-KV)")
        return 1
    stream = torch.cuda.current_stream().cuda_stream
    copy = copy_gbps(torch, time_events, args.warmup, args.reps)
    g = torch.Generator(device="cuda").manual_seed(args.seed)
    rows = []
    for B in (int(x) for x in args.batches.split(",")):
        for nk in (int(x) for x in args.contexts.split(",")):
            try:
                q = torch.randn(B, H, 1, D, device="cuda", dtype=torch.bfloat16, generator=g)
                k = torch.randn(B, HKV, nk, D, device="cuda", dtype=torch.bfloat16, generator=g)
                v = torch.randn(B, HKV, nk, D, device="cuda", dtype=torch.bfloat16, generator=g)
            except torch.cuda.OutOfMemoryError:
                print(f"skip B={B} Nk={nk}: out of memory")
                torch.cuda.empty_cache()
                continue
            o = torch.empty_like(q)
            lse = torch.empty(B, H, 1, device="cuda", dtype=torch.float32)
            kv_bytes = 2 * B * HKV * nk * D * 2

            def ours(_):
                return lib.forward(q, k, v, o, lse, "bf16", "bottom_right", stream=stream)[0]

            row = dict(B=B, Nk=nk, kv_bytes=kv_bytes)
            counts = [("auto", 0), ("nosplit", 1)] + [(f"s{n}", n) for n in fixed]
            for name, splits in counts:
                lib.set_num_splits(splits)
                if ours(0) != ATTN_OK:
                    print(f"attn-jit failed at B={B} Nk={nk} splits={splits}: {lib.last_error()}")
                    return 1
                ms = time_events(torch, ours, args.warmup, args.reps)[0]
                row[name + "_ms"] = ms
            lib.set_num_splits(0)

            def sdpa(_):
                F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            try:
                row["sdpa_ms"] = time_events(torch, sdpa, args.warmup, args.reps)[0]
            except RuntimeError as ex:
                print(f"SDPA unavailable at B={B} Nk={nk}: {str(ex).splitlines()[0]}")
            rows.append(row)
            del q, k, v, o, lse
            torch.cuda.empty_cache()

    def gbps(row, key):
        return row[key] and row["kv_bytes"] / (row[key] * 1e-3) / 1e9

    print(f"\nSplit-KV decode, {torch.cuda.get_device_name()}: Hq={H} Hkv={HKV} D={D} bf16, Nq=1, "
          f"bottom_right; median of {args.reps} after {args.warmup} warm-ups; device copy "
          f"{copy:.0f} GB/s (1 GiB d2d, read + write)\n")
    print("| B | context | auto ms | auto GB/s | auto % copy | no-split ms | no-split GB/s | "
          "auto / no-split | sdpa ms | sdpa GB/s | auto / sdpa |"
          + "".join(f" s={n} % copy |" for n in fixed))
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(fixed))
    for r in rows:
        a, n = gbps(r, "auto_ms"), gbps(r, "nosplit_ms")
        s = gbps(r, "sdpa_ms") if "sdpa_ms" in r else None
        sdpa_cols = (f"{r['sdpa_ms']:.4f} | {s:.0f} | {a / s:.2f}" if s else "- | - | -")
        print(f"| {r['B']} | {r['Nk']} | {r['auto_ms']:.4f} | {a:.0f} | {100 * a / copy:.1f} | "
              f"{r['nosplit_ms']:.4f} | {n:.0f} | {a / n:.2f} | {sdpa_cols} |"
              + "".join(f" {100 * gbps(r, f's{m}_ms') / copy:.1f} |" for m in fixed))
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(dict(r, copy_gbps=copy, tool="bench_splitkv")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
