#!/usr/bin/env python3
"""Decode over a paged K/V cache: attn-jit's attn_forward_paged against the device's
copy bandwidth and torch SDPA (cuDNN, FA2) on the equivalent contiguous shape, one GPU run.

    ATTN_JIT_LIB=<bundle>/lib/libattn-jit.so PYTHONPATH=<bundle>/python \\
        python3 tools/device/bench_paged.py [--batch 1,8,64] [--context 1k,4k,8k,32k,128k]
        [--pages 16,64] [--queries 1] [--splits auto,1] [--old OLD/lib/libattn-jit.so]
        [--reps 20] [--warmup 5] [--json FILE]

Shape (issue 15): decode (one query per sequence; --queries N: N each, speculative
decoding), B in {1, 8, 64}, Hq = 32, Hkv = 8, D = 128, bf16, every sequence with
`context` keys, pages of 16 and 64 rows shuffled randomly in memory (vLLM's
(num_pages, page_size, Hkv, D) caches). The runtime packs the 4 query heads of each
K/V head into one query tile when 4 * N fits it (packed GQA: K/V read once per group).
Timed with CUDA events (sdpa_anchors.time_events: median of --reps after --warmup):
  * attn-jit P=16 / P=64   attn_forward_paged, queries packed by cu_seqlens_q, with
                           split-KV's count chosen by the runtime (auto,
                           attn_set_num_splits(0)) and without it (no split, 1);
                           --splits lists the counts to time (auto, 1 or a count:
                           rows "s=N", e.g. --splits auto,16 to compare the auto
                           choice with a forced count at B = 1);
                           with --old, rows "old P=..." of a second build of the
                           library in the same process (ctypes: each its own handle,
                           as ab_bench.py), e.g. the bundle before packed GQA;
  * sdpa cudnn / sdpa fa2  torch SDPA with that backend on contiguous (B, H, 1, D)
                           queries over (B, Hkv, context, D) keys, enable_gqa
                           (a backend that refuses the shape is reported as such).
K/V GB/s = 2 * B * context * Hkv * D * 2 bytes / time, next to the bandwidth of a
device-to-device copy of 1 GiB measured in the same run (ab_bench.copy_bandwidth: read
+ written bytes / time). The issue's targets: >= 80 % of the copy at B = 1, 128k (needs
split-KV, issue 15 item 3) and >= 85 % at B = 64, 8k.

Checks: every attn-jit output is compared with SDPA's (the default backend) on the
contiguous shape before timing; a relative error over 2e-2 marks the row WRONG.
Combinations whose caches would exceed --max-gib (default 40 GiB for the paged and the
contiguous copy together) are skipped and listed. Prints a markdown table.
Exit 0 done (WRONG rows and failures are in the table), 1 attn-jit failed on every
shape, 77 no torch / GPU.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "gpu"))
sys.path.insert(0, HERE)

H, HKV, D = 32, 8, 128
ELEMENT_BYTES = 2  # bf16


def sizes(text):
    """'1k,128k,64' -> [1024, 131072, 64]."""
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        out.append(int(part[:-1]) * 1024 if part.endswith("k") else int(part))
    return out


def split_label(count):
    """The method suffix of a split-KV count: auto (0), no split (1), s=N."""
    return {0: "auto", 1: "no split"}.get(count, f"s={count}")


def paged_inputs(torch, k, v, page, seed):
    """The contiguous (B, Hkv, N, D) k, v as caches of `page`-row pages in a random
    order: (k_cache, v_cache, block_table (B, N / page) int32)."""
    B, _, N, _ = k.shape
    per_seq = (N + page - 1) // page
    num_pages = B * per_seq
    order = torch.randperm(num_pages, generator=torch.Generator().manual_seed(seed)).to("cuda")
    table = order.view(B, per_seq).to(torch.int32)
    k_cache = torch.empty(num_pages, page, HKV, D, device="cuda", dtype=k.dtype)
    v_cache = torch.empty_like(k_cache)
    pad = per_seq * page - N
    for src, dst in ((k, k_cache), (v, v_cache)):
        rows = src.transpose(1, 2)                                   # (B, N, Hkv, D)
        if pad:
            rows = torch.cat([rows, rows.new_zeros(B, pad, HKV, D)], 1)
        dst[table.view(-1).long()] = rows.reshape(num_pages, page, HKV, D)
    return k_cache, v_cache, table


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", default="1,8,64")
    ap.add_argument("--context", default="1k,4k,8k,32k,128k")
    ap.add_argument("--pages", default="16,64")
    ap.add_argument("--queries", type=int, default=1, help="queries per sequence (1: decode)")
    ap.add_argument("--splits", default="auto,1",
                    help="split-KV counts to time, comma-separated: auto, 1 (no split) or a count")
    ap.add_argument("--tiles", default="0x0",
                    help="block_m x block_n of attn-jit's calls, e.g. 0x0,64x64 (0x0: the runtime's tiles; "
                         "rows of other tiles are labelled with them)")
    ap.add_argument("--old", default="", help="a second libattn-jit.so, timed next to ATTN_JIT_LIB's")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-gib", type=float, default=40.0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    tile_list = []
    for part in args.tiles.split(","):
        try:
            m, n = (int(x) for x in part.strip().lower().split("x"))
        except ValueError:
            ap.error(f"--tiles: {part!r} is not MxN")
        tile_list.append((m, n))
    split_counts = []
    for part in args.splits.split(","):
        part = part.strip().lower()
        try:
            count = 0 if part == "auto" else int(part)
        except ValueError:
            count = -1
        if count < 0:
            ap.error(f"--splits: {part} is not auto or a count >= 1")
        split_counts.append((split_label(count), count))
    from attn_jit_ctypes import torch_on_cuda
    torch = torch_on_cuda()
    if torch is None:
        return 77
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from ab_bench import copy_bandwidth
    from attn_jit_ctypes import ATTN_OK, AttnJit, default_lib_path, start_library
    from sdpa_anchors import time_events
    libs = [("attn-jit", AttnJit(default_lib_path()))] + ([("old", start_library(args.old, {}))] if args.old else [])
    for label, lib in libs:
        if not hasattr(lib.lib, "attn_set_num_splits"):
            print(f"{label} library has no attn_set_num_splits (before split-KV)")
            return 1
    NQ = args.queries
    stream = torch.cuda.current_stream().cuda_stream
    copy = copy_bandwidth(torch, args.warmup, args.reps)
    backends = {"sdpa cudnn": SDPBackend.CUDNN_ATTENTION, "sdpa fa2": SDPBackend.FLASH_ATTENTION}
    rows, skipped, ok_runs = [], [], 0
    for B in sizes(args.batch):
        for N in sizes(args.context):
            kv_bytes = 2 * B * N * HKV * D * ELEMENT_BYTES
            if 2 * kv_bytes > args.max_gib * (1 << 30):
                skipped.append(f"B={B} context={N}: {2 * kv_bytes / (1 << 30):.0f} GiB")
                continue
            g = torch.Generator(device="cuda").manual_seed(args.seed)
            q = torch.randn(B, NQ, H, D, device="cuda", dtype=torch.bfloat16, generator=g)  # packed (B·NQ, H, D)
            k = torch.randn(B, HKV, N, D, device="cuda", dtype=torch.bfloat16, generator=g)
            v = torch.randn(B, HKV, N, D, device="cuda", dtype=torch.bfloat16, generator=g)
            q4 = q.transpose(1, 2)                                                         # (B, H, NQ, D)
            # Bottom-right causal for several queries (the last sees every key).
            mask = "none" if NQ == 1 else "bottom_right"
            sdpa_mask = None if NQ == 1 else (torch.arange(N, device="cuda")[None, :]
                                              <= torch.arange(NQ, device="cuda")[:, None] + N - NQ)
            ref = F.scaled_dot_product_attention(q4, k, v, attn_mask=sdpa_mask, enable_gqa=True).float()

            def record(method, ms, note=""):
                gbps = kv_bytes / (ms * 1e-3) / 1e9 if ms else None
                rows.append(dict(B=B, context=N, method=method, ms=ms, gbps=gbps,
                                 of_copy=gbps / copy["gbps"] if gbps else None, note=note))

            for page in sizes(args.pages):
                k_cache, v_cache, table = paged_inputs(torch, k, v, page, args.seed)
                qp = q.view(B * NQ, H, D)
                o = torch.full_like(qp, float("nan"))
                cuq = torch.arange(0, B * NQ + 1, NQ, dtype=torch.int32, device="cuda")
                used = torch.full((B,), N, dtype=torch.int32, device="cuda")

                for (name, lib), tiles in [(nl, t) for nl in libs for t in tile_list]:
                    if tiles != (0, 0):
                        name = f"{name} {tiles[0]}x{tiles[1]}"

                    def call():
                        return lib.forward_paged(qp, k_cache, v_cache, o, None, cuq, NQ, table, used, "bf16",
                                                 mask, stream=stream, tiles=tiles)

                    def paged(_):
                        return call()[0]
                    # Split-KV: the runtime's choice (auto) against none.
                    for label, splits in split_counts:
                        method = f"{name} P={page} {label}"
                        lib.set_num_splits(splits)
                        o.fill_(float("nan"))
                        status, msg = call()
                        torch.cuda.synchronize()
                        if status != ATTN_OK:
                            record(method, None, f"FAILED: {msg}")
                            continue
                        got = o.view(B, NQ, H, D).transpose(1, 2).float()
                        err = float((got - ref).norm() / ref.norm())
                        ms = time_events(torch, paged, args.warmup, args.reps)[0]
                        ok_runs += 1
                        record(method, ms, f"rel err {err:.1e}" + (" WRONG" if not err <= 2e-2 else ""))
                    lib.set_num_splits(0)
                del k_cache, v_cache
            for name, backend in backends.items():
                def sdpa(_):
                    F.scaled_dot_product_attention(q4, k, v, attn_mask=sdpa_mask, enable_gqa=True)
                try:
                    with sdpa_kernel(backend):
                        record(name, time_events(torch, sdpa, args.warmup, args.reps)[0])
                except RuntimeError as ex:
                    record(name, None, "refused: " + str(ex).splitlines()[0][:80])
            del q, k, v
            torch.cuda.empty_cache()

    print(f"\nPaged decode, {torch.cuda.get_device_name()}: H={H} Hkv={HKV} D={D} bf16, {NQ} quer"
          f"{'y' if NQ == 1 else 'ies'} per sequence; median of {args.reps} after {args.warmup} warm-ups; d2d copy of 1 GiB "
          f"{copy['gbps']:.0f} GB/s\n")
    print("| B | context | method | ms | K/V GB/s | x copy | notes |")
    print("|---:|---:|---|---:|---:|---:|---|")
    for r in rows:
        ms = f"{r['ms']:.3f}" if r["ms"] else "-"
        gbps = f"{r['gbps']:.0f}" if r["gbps"] else "-"
        ratio = f"{r['of_copy']:.2f}" if r["of_copy"] else "-"
        print(f"| {r['B']} | {r['context'] // 1024}k | {r['method']} | {ms} | {gbps} | {ratio} | {r['note']} |")
    for s in skipped:
        print(f"skipped (over --max-gib): {s}")
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(dict(kind="copy_1GiB", **copy)) + "\n")
            for r in rows:
                f.write(json.dumps(dict(r, tool="bench_paged")) + "\n")
    return 0 if ok_runs else 1


if __name__ == "__main__":
    sys.exit(main())
