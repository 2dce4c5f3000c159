#!/usr/bin/env python3
"""Host time per attn_jit.attention call on NumPy arrays: the package's
Python side of a call (issue 13), on the development machine. Torch tensors
share its logic; their own per-call costs (data_ptr, the allocator, the
stream) differ from NumPy's (whose data-pointer lookups are slow): those
tests/gpu/test_torch.py's test_host_overhead measures on the GPU machine.

    PYTHONPATH=python python3 tools/python_overhead.py [--calls N] [--repeat R]

(NumPy, no torch; the library as the package finds it, or $ATTN_JIT_LIB.)
Two measurements, each the fastest of R runs of N calls:

  stubbed   attn_forward replaced by a C function that returns 0 at once
            (libm's fegetround, called through ctypes with attn_forward's
            argument types): everything the package does per call, the
            ctypes call included, but no runtime. Outputs are left
            unwritten: timing only (the stub is in place before the first
            call: a plan keeps the function it was built with). Cached
            calls of three signatures, and decode steps whose K/V grow by
            one key a call (over 1000 lengths in turn, more than the
            package keeps plans for: a new signature every call, what a
            call costs the first time).
  real      the real library, tiny shape 1x1x1x1 float32, against the bare
            ctypes call of attn_forward with prebuilt arguments (the floor
            the package cannot go below); the runtime's host kernel takes
            tens of us even there, so this difference is the noisier one.

Only the public call and _capi.library() are used, so the script also times
an older checkout of the package (PYTHONPATH=OLD/python).
"""
import argparse
import ctypes
import ctypes.util
import time

import numpy as np

import attn_jit
from attn_jit import _capi

CASES = {  # name: (shape of q, k and v, keyword arguments)
    "plain 1x8x128x64": ((1, 8, 128, 64), {}),
    "causal, LSE": ((1, 8, 128, 64), {"causal": True, "return_lse": True}),
    "GQA 8/2, scale": ((1, 8, 128, 64), {"enable_gqa": True, "scale": 0.125}),
}


def per_call_ns(fns, calls, repeat):
    """Fastest ns per call of each function, timed in turns (so that a busy
    spell of the machine slows all of them alike)."""
    for fn in fns:
        for _ in range(100):
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (time.perf_counter_ns() - t0) / calls)
    return best


class StubbedLib:
    """The loaded CDLL, but attn_forward is a C function returning 0."""

    def __init__(self, real):
        self.real = real
        libm = ctypes.CDLL(ctypes.util.find_library("m"))
        self.attn_forward = libm.fegetround
        self.attn_forward.argtypes = [ctypes.POINTER(_capi.AttnFwdArgs)]
        self.attn_forward.restype = ctypes.c_int
        assert self.attn_forward(_capi.AttnFwdArgs()) == 0  # round to nearest: 0

    def __getattr__(self, name):
        return getattr(self.real, name)


def operands(shape, kw):
    rng = np.random.default_rng(0)
    q = rng.standard_normal(shape, dtype=np.float32)
    kv_shape = (shape[0], shape[1] // 4, *shape[2:]) if kw.get("enable_gqa") else shape
    return q, rng.standard_normal(kv_shape, dtype=np.float32), rng.standard_normal(kv_shape, dtype=np.float32)


def bare_call(lib, q):
    """attn_forward with prebuilt arguments: the runtime's own cached call."""
    o = np.empty_like(q)
    a = _capi.AttnFwdArgs()
    a.q = a.k = a.v = q.ctypes.data
    a.o = o.ctypes.data
    a.batch, a.heads, a.kv_heads, a.seqlen_q, a.seqlen_k, a.head_dim = 1, 1, 1, 1, 1, q.shape[3]
    for name in ("q_strides", "k_strides", "v_strides", "o_strides"):
        getattr(a, name)[:] = [0, 0, 0, 1]
    a.dtype, a.device = _capi.DTYPE_F32, _capi.DEVICE_HOST
    ref, fn = ctypes.byref(a), lib.lib.attn_forward
    assert fn(ref) == 0, lib.last_error()
    return lambda: fn(ref)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    lib = _capi.library()
    print(f"# attn_jit from {attn_jit.__file__}, {lib.path}")

    real_cdll = lib.lib
    lib.lib = StubbedLib(real_cdll)
    try:
        for name, (shape, kw) in CASES.items():
            q, k, v = operands(shape, kw)
            ns, = per_call_ns([lambda: attn_jit.attention(q, k, v, **kw)], args.calls, args.repeat)
            print(f"stubbed  {name:18s} {ns / 1000:7.2f} us per call")
        # Decoding: K/V views of a cache, one key longer each call, so every
        # call is a new signature (a plan built and used once).
        q = np.ones((1, 8, 1, 64), np.float32)
        cache = np.ones((1, 8, max(args.calls // 10, 1024), 64), np.float32)
        lengths = iter(range(1, 1 << 62))

        def decode_step():
            n = next(lengths) % cache.shape[2] + 1
            attn_jit.attention(q, cache[:, :, :n], cache[:, :, :n])

        ns, = per_call_ns([decode_step], cache.shape[2], args.repeat)
        print(f"stubbed  {'decode, K/V growing':18s} {ns / 1000:7.2f} us per call (a new signature each)")
    finally:
        lib.lib = real_cdll

    q = np.ones((1, 1, 1, 1), np.float32)
    calls = max(args.calls // 10, 100)
    full, bare = per_call_ns([lambda: attn_jit.attention(q, q, q), bare_call(lib, q)], calls,
                             args.repeat)
    print(f"real     1x1x1x1 float32    {full / 1000:7.2f} us per call, bare attn_forward "
          f"{bare / 1000:.2f} us: package {(full - bare) / 1000:.2f} us")


if __name__ == "__main__":
    main()
