#!/usr/bin/env python3
"""Ring attention (attn_jit.ring) with torch: the torch code path on the CPU
and one GPU with a simulated ring, and on two GPUs over NCCL with timing.

On the GPU machine, with the bundle (ninja -C build bundle):
    PYTHONPATH=B/python python3 tests/gpu/test_ring.py [--quick] [--no-timing] [--ns 131072,262144]
Exit 0 passed, 1 failed, 77 ("SKIP: ...") without torch.

1. torch CPU float32, W = 1..4 simulated ranks (threads), zig-zag and
   contiguous, causal or not, GQA: ring_attention with autograd (CPU
   backward runs in each rank's thread) against float64 autograd, 1e-5
   (docs/testing.md's f32 bound) for O, LSE, dQ, dK, dV.
2. CUDA bf16 and f16, one GPU, W = 2 and 4 simulated ranks: the same code
   (ring_forward / ring_backward) but the P2P calls, against single-GPU
   attn_jit (attention + attention_backward) and float64: each of O, dQ,
   dK, dV within 1.25 x the single GPU's error against float64, LSE within
   that or 1e-3 + 3e-5 |ref|. (Autograd on CUDA runs every backward in one
   device thread: simulated ranks would wait for each other there, so
   ring_attention's autograd is checked at W = 1 on CUDA, at W > 1 on the
   CPU and on two GPUs.)
3. With two or more GPUs (torch.cuda.device_count() >= 2): WORLD = 2
   processes (torch.multiprocessing, NCCL): the same correctness check at
   N = 8192 through ring_attention's autograd and NCCL, then forward +
   backward time, causal, D = 128, for each N of --ns: one GPU (attn_jit on
   the whole sequence), the ring, the ring's compute alone (a communicator
   that sends nothing) and its transfers alone; speed-up = one GPU / ring
   (below the issue's 1.8x: a failure), communication hidden = 1 - (ring -
   compute) / transfers, and each one's peak GPU memory with the longest N
   it extrapolates to (memory is linear in N; an estimate, not a run).
   On one GPU it prints why this part was skipped.
"""
import argparse
import math
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError as ex:
    print(f"SKIP: torch not importable ({ex})")
    sys.exit(77)
try:
    import attn_jit  # after torch: registers the custom op
except ImportError:
    sys.path.append(os.path.join(REPO, "python"))
    import attn_jit
from attn_jit import _ring_torch, ring

NAMES = ("o", "lse", "dq", "dk", "dv")
F32_TOL = 1e-5          # docs/testing.md: f32 on the host
GPU_RATIO = 1.25        # the rule: x the single GPU's error against float64
LSE_ABS, LSE_REL = 1e-3, 3e-5
SPEEDUP_TARGET = 1.8    # the issue's: two GPUs over one, forward + backward


def rel(x, ref):
    ref = ref.double()
    den = float(ref.norm())
    return float((x.double() - ref).norm()) / (den if den > 0 else 1)


def lse_err(x, ref):
    """max |LSE - ref| / (1e-3 + 3e-5 |ref|): <= 1 passes docs/testing.md."""
    ref = ref.double()
    return float(((x.double() - ref).abs() / (LSE_ABS + LSE_REL * ref.abs())).max())


def inputs(B, H, Hkv, N, D, dtype, device, seed):
    g = torch.Generator().manual_seed(seed)
    make = lambda h: torch.randn(B, h, N, D, generator=g).to(device=device, dtype=dtype)  # noqa: E731
    return make(H), make(Hkv), make(Hkv), make(H)   # q, k, v, dO


def reference(q, k, v, do, causal, scale=None):
    """float64 (O, LSE, dQ, dK, dV) by autograd, on q's device."""
    q, k, v = (x.detach().double().requires_grad_() for x in (q, k, v))
    g = q.shape[1] // k.shape[1]
    kr, vr = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = q @ kr.transpose(-1, -2) * (scale or 1 / math.sqrt(q.shape[-1]))
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=s.device).tril(), -math.inf)
    lse = s.logsumexp(-1)
    o = torch.exp(s - lse[..., None]) @ vr
    o.backward(do.double())
    return o.detach(), lse.detach(), q.grad, k.grad, v.grad


def single(q, k, v, do, causal):
    """attn_jit on the whole sequence, one device: (O, LSE, dQ, dK, dV)."""
    gqa = q.shape[1] != k.shape[1]
    o, lse = attn_jit.attention(q, k, v, causal=causal, enable_gqa=gqa, return_lse=True)
    return (o, lse) + tuple(attn_jit.attention_backward(q, k, v, o, lse, do, causal=causal,
                                                        enable_gqa=gqa))


def simulated(world, sharding, causal, q, k, v, do, autograd):
    """The ring over `world` simulated ranks, unsharded: (O, LSE, dQ, dK, dV).
    autograd: through ring_attention and .backward (each rank's thread),
    else ring_forward / ring_backward directly."""
    shards = [[ring.shard(x, r, world, sharding) for x in (q, k, v, do)] for r in range(world)]

    def rank(comm):
        qs, ks, vs, dos = shards[comm.rank]
        if qs.is_cuda:   # a new thread: make q's device (its primary context) current for attn-jit
            torch.cuda.set_device(qs.device)
        if not autograd:
            o, lse = ring.ring_forward(comm, qs, ks, vs, causal=causal, sharding=sharding)
            return (o, lse) + ring.ring_backward(comm, qs, ks, vs, o, lse, dos, causal=causal,
                                                 sharding=sharding)
        qs, ks, vs = (x.clone().requires_grad_() for x in (qs, ks, vs))
        o, lse = ring.ring_attention(qs, ks, vs, causal=causal, sharding=sharding, comm=comm,
                                     return_lse=True)
        o.backward(dos)
        return o.detach(), lse, qs.grad, ks.grad, vs.grad

    per_rank = ring.SimulatedRing(world).run(rank)
    return [ring.unshard([out[i] for out in per_rank], sharding) for i in range(len(NAMES))]


class Report:
    def __init__(self):
        self.failures = 0

    def check(self, ok, line):
        print(("ok    " if ok else "FAIL  ") + line, flush=True)
        self.failures += not ok


def check_cpu(report, quick):
    """Part 1: torch CPU float32 through autograd, W = 1..4."""
    for H, Hkv in ((4, 4), (4, 2)):
        q, k, v, do = inputs(2, H, Hkv, 96, 16, torch.float32, "cpu", seed=H * 10 + Hkv)
        for causal in (False, True):
            ref = reference(q, k, v, do, causal)
            for world in ((2,) if quick else (1, 2, 3, 4)):
                for sharding in ring.SHARDINGS:
                    got = simulated(world, sharding, causal, q, k, v, do, autograd=True)
                    errs = [rel(g, r) for g, r in zip(got, ref)]
                    report.check(max(errs) <= F32_TOL,
                                 f"cpu f32 W={world} {sharding:10} causal={causal!s:5} H={H} Hkv={Hkv}: "
                                 + " ".join(f"{n} {e:.1e}" for n, e in zip(NAMES, errs)))


def compare_gpu(report, what, got, one, ref):
    """The issue's rule: each of the ring's errors against float64 within
    1.25 x the single GPU's (the LSE: or within docs/testing.md's bound)."""
    ok, parts = True, []
    for name, g, s, r in zip(NAMES, got, one, ref):
        eg, es = rel(g, r), rel(s, r)
        good = eg <= GPU_RATIO * es or (name == "lse" and lse_err(g, r) <= 1)
        ok &= good and bool(torch.isfinite(g).all())
        parts.append(f"{name} {eg:.2e}/{es:.2e}={eg / es if es else math.inf:.2f}")
    report.check(ok, f"{what}: ring/one-GPU error vs float64: " + " ".join(parts))


def check_cuda(report, quick):
    """Part 2: one GPU, simulated ranks, bf16 and f16."""
    N = 2048 if quick else 4096
    for dtype in (torch.bfloat16, torch.float16):
        for H, Hkv in ((8, 8), (8, 2)):
            q, k, v, do = inputs(1, H, Hkv, N, 128, dtype, "cuda", seed=H + Hkv)
            for causal in (True, False):
                ref = reference(q, k, v, do, causal)
                one = single(q, k, v, do, causal)
                worlds = (2,) if quick else (2, 4)
                for world in worlds:
                    for sharding in (("zigzag", "contiguous") if not causal else ("zigzag",)):
                        got = simulated(world, sharding, causal, q, k, v, do, autograd=False)
                        compare_gpu(report, f"cuda {str(dtype)[6:]} N={N} W={world} {sharding} "
                                    f"causal={causal} H={H} Hkv={Hkv}", got, one, ref)
                if causal and Hkv == H:   # ring_attention's autograd on CUDA: W = 1
                    got = simulated(1, "zigzag", causal, q, k, v, do, autograd=True)
                    compare_gpu(report, f"cuda {str(dtype)[6:]} N={N} W=1 autograd", got, one, ref)
                del ref
                torch.cuda.empty_cache()


# --- two GPUs ------------------------------------------------------------------


class _Kept:
    def __init__(self, tensors):
        self.tensors = tensors

    def wait(self):
        return self.tensors


class NoTransferRing:
    """A communicator that sends nothing (each rank keeps its own shard):
    the ring's compute alone, for timing."""

    def __init__(self, rank, world):
        self.rank, self.world = rank, world

    def exchange(self, tensors):
        return _Kept(tensors)


def timed(fn, reps, group_sync=True):
    """Seconds per call of fn (after one warm-up), the slowest rank's."""
    fn()
    torch.cuda.synchronize()
    if group_sync:
        dist.barrier()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    t = torch.tensor([(time.perf_counter() - t0) / reps], device="cuda")
    if group_sync:
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t)


def _nccl_correctness(rank, world):
    """ring_attention through NCCL and autograd at N = 8192; rank 0 returns
    [(what, ring's, one GPU's, float64's (O, LSE, dQ, dK, dV))] on the CPU."""
    out = []
    for H, Hkv in ((8, 8), (8, 2)):
        q, k, v, do = inputs(1, H, Hkv, 8192, 128, torch.bfloat16, "cuda", seed=7 + Hkv)
        qs, ks, vs = (ring.shard(x, rank, world).clone().requires_grad_() for x in (q, k, v))
        o, lse = ring.ring_attention(qs, ks, vs, causal=True, return_lse=True)
        o.backward(ring.shard(do, rank, world))
        gathered = []
        for x in (o.detach(), lse, qs.grad, ks.grad, vs.grad):
            parts = [torch.empty_like(x) for _ in range(world)]
            dist.all_gather(parts, x.contiguous())
            gathered.append(ring.unshard(parts).cpu())
        if rank == 0:
            one = [x.cpu() for x in single(q, k, v, do, True)]
            ref = [x.cpu() for x in reference(q, k, v, do, True)]
            out.append((f"nccl W={world} bf16 N=8192 causal H={H} Hkv={Hkv}", gathered, one, ref))
        torch.cuda.empty_cache()
    return out


def _peak_bytes(group_sync=True):
    """The peak of allocated GPU memory since the last reset, the largest
    rank's."""
    peak = torch.tensor([float(torch.cuda.max_memory_allocated())], device="cuda")
    if group_sync:
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
    return float(peak)


def _one_gpu_time(q, k, v, do, reps):
    """(seconds, peak bytes) of attn_jit forward + backward on the whole
    sequence, this GPU alone."""
    q, k, v = (x.clone().requires_grad_() for x in (q, k, v))

    def step():
        q.grad = k.grad = v.grad = None
        attn_jit.attention(q, k, v, causal=True).backward(do)
    torch.cuda.reset_peak_memory_stats()
    return timed(step, reps, group_sync=False), _peak_bytes(group_sync=False)


def _ring_times(rank, world, qs, ks, vs, dos, reps):
    """(ring, its compute alone, its transfers alone), seconds per forward +
    backward, the slowest rank's, and the ring's peak bytes on a GPU."""
    leaves = [x.clone().requires_grad_() for x in (qs, ks, vs)]

    def step(comm=None):
        for x in leaves:
            x.grad = None
        ring.ring_attention(*leaves, causal=True, comm=comm).backward(dos)
    torch.cuda.reset_peak_memory_stats()
    t_ring = timed(step, reps)
    peak = _peak_bytes()
    t_compute = timed(lambda: step(NoTransferRing(rank, world)), reps)
    comm = _ring_torch.DistributedRing()
    f32 = [torch.empty(ks.shape, dtype=torch.float32, device="cuda") for _ in range(2)]

    def transfers():   # what a forward + backward sends, one exchange at a time
        for _ in range(2 * (world - 1)):   # K/V: W - 1 steps forward, W - 1 backward
            comm.exchange((ks, vs)).wait()
        for _ in range(world):             # float32 dK/dV: W steps backward
            comm.exchange(f32).wait()
    return t_ring, t_compute, timed(transfers, reps), peak


def _worker(rank, world, port, args, path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    try:
        out = _nccl_correctness(rank, world)
        rows = []
        for n in args.ns:
            q, k, v, do = inputs(1, args.heads, args.heads, n, 128, torch.bfloat16, "cuda", seed=n)
            shards = [ring.shard(x, rank, world).contiguous() for x in (q, k, v, do)]
            # One GPU on the whole sequence (rank 0; the other waits).
            one = _one_gpu_time(q, k, v, do, args.reps) if rank == 0 else (None, None)
            del q, k, v, do
            torch.cuda.empty_cache()
            dist.barrier()
            rows.append((n, *one, *_ring_times(rank, world, *shards, args.reps)))
            del shards
            torch.cuda.empty_cache()
        if rank == 0:
            torch.save((out, rows), path)
    finally:
        dist.destroy_process_group()


def check_two_gpus(report, args):
    count = torch.cuda.device_count()
    if count < 2:
        print(f"SKIPPED the two-GPU part (NCCL ring, N = {args.ns} timing): torch sees {count} CUDA "
              "device(s); it needs 2 (the nvidia-h200-x2 machine)", flush=True)
        return
    port = 29500 + os.getpid() % 1000
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "results.pt")
        mp.start_processes(_worker, args=(2, port, args, path), nprocs=2, start_method="spawn")
        out, rows = torch.load(path)
    for what, got, one, ref in out:
        compare_gpu(report, what, got, one, ref)
    capacity = torch.cuda.get_device_properties(0).total_memory
    print(f"\nforward + backward, causal, bf16, B=1, H={args.heads}, D=128, W=2 (seconds per call; "
          "peak GiB of a GPU; the longest N extrapolated from it, memory being linear in N)")
    print("| N | one GPU | ring | ring compute alone | transfers alone | speed-up | communication hidden "
          "| peak one GPU | peak ring | longest N one GPU | longest N ring |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, t_one, peak_one, t_ring, t_comp, t_comm, peak_ring in rows:
        hidden = 1 - max(0.0, t_ring - t_comp) / t_comm if t_comm > 0 else 1.0
        print(f"| {n // 1024}k | {t_one:.3f} | {t_ring:.3f} | {t_comp:.3f} | {t_comm:.3f} | "
              f"{t_one / t_ring:.2f}x | {100 * min(max(hidden, 0.0), 1.0):.0f}% | {peak_one / 2**30:.1f} | "
              f"{peak_ring / 2**30:.1f} | ~{n * capacity / peak_one / 2**20:.1f}M | "
              f"~{n * capacity / peak_ring / 2**20:.1f}M |", flush=True)
        report.check(t_one / t_ring >= SPEEDUP_TARGET,
                     f"N={n // 1024}k: speed-up {t_one / t_ring:.2f}x over one GPU (the issue's target: "
                     f">= {SPEEDUP_TARGET}x)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer cases")
    p.add_argument("--no-timing", action="store_true", help="skip the two-GPU timing")
    p.add_argument("--ns", default="131072,262144", help="sequence lengths timed on two GPUs")
    p.add_argument("--heads", type=int, default=8, help="heads of the timed runs")
    p.add_argument("--reps", type=int, default=3, help="timed calls per measurement")
    args = p.parse_args()
    args.ns = [] if args.no_timing else [int(n) for n in args.ns.split(",")]
    report = Report()
    check_cpu(report, args.quick)
    if torch.cuda.is_available():
        check_cuda(report, args.quick)
        check_two_gpus(report, args)
    else:
        print("SKIPPED the CUDA parts: torch sees no CUDA device", flush=True)
    print(f"\n{report.failures} failure(s)")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
