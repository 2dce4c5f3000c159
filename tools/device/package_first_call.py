"""The Python package's first call with the library's defaults (set no ATTN_JIT_* but
ATTN_JIT_CACHE_DIR, an empty one): its time, when the default kernel is loaded
(attn_jit.wait_for_compiles), and the error of both calls against float64. With
ATTN_JIT_LOG=1 the log says whether the call was tiered.

    PYTHONPATH=BUNDLE/python ATTN_JIT_LIB=... python3 tools/device/package_first_call.py

Exits 77 without torch or a GPU.
"""
import sys
import time


def main():
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    import attn_jit
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.randn(2, 16, 4096, 128, device="cuda", generator=g).to(torch.bfloat16)
               for _ in range(3))
    torch.cuda.synchronize()
    t = time.perf_counter()
    first = attn_jit.attention(q, k, v, causal=True)
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - t) * 1e3
    attn_jit.wait_for_compiles()
    ready_ms = (time.perf_counter() - t) * 1e3
    after = attn_jit.attention(q, k, v, causal=True)
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                           is_causal=True)

    def err(o):
        return ((o.double() - ref).norm() / ref.norm()).item()
    print(f"package first call {first_ms:.1f} ms, default kernel ready {ready_ms:.1f} ms; "
          f"rel err vs float64: first {err(first):.3e}, after {err(after):.3e}; "
          f"stats {attn_jit.stats()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
