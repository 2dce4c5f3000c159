"""ctypes binding of runtime/include/attn-jit/attn_jit.h (keep the two in step).

Used by the GPU tests and the device scripts to call libattn-jit.so from
Python with torch tensors' data pointers and strides.
"""
import ctypes
import os

ATTN_OK = 0
STATUS_NAMES = {0: "OK", 1: "INVALID_ARGUMENT", 2: "UNSUPPORTED", 3: "NO_DRIVER",
                4: "NO_DEVICE", 5: "CUDA", 6: "COMPILE", 7: "INTERNAL"}
DTYPES = {"bf16": 0, "f16": 1, "f32": 2}
MASKS = {"none": 0, "causal": 1, "bottom_right": 2}
DEVICE_CUDA, DEVICE_HOST = 0, 1


class AttnFwdArgs(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p), ("lse", ctypes.c_void_p),
        ("batch", ctypes.c_int64), ("heads", ctypes.c_int64), ("kv_heads", ctypes.c_int64),
        ("seqlen_q", ctypes.c_int64), ("seqlen_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
        ("q_strides", ctypes.c_int64 * 4), ("k_strides", ctypes.c_int64 * 4),
        ("v_strides", ctypes.c_int64 * 4), ("o_strides", ctypes.c_int64 * 4),
        ("lse_strides", ctypes.c_int64 * 3),
        ("dtype", ctypes.c_int), ("mask", ctypes.c_int), ("scale", ctypes.c_float),
        ("device", ctypes.c_int), ("stream", ctypes.c_void_p),
        ("block_m", ctypes.c_int64), ("block_n", ctypes.c_int64),
    ]


class AttnStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("compiles", "memory_hits", "disk_hits", "disk_misses", "disk_rejected",
                 "launches")] + [("compile_ms_total", ctypes.c_double)]


# Offsets checked against the C header with gcc (x86-64): a mismatch here
# would pass garbage to the library, so fail loudly instead.
assert ctypes.sizeof(AttnFwdArgs) == 280, ctypes.sizeof(AttnFwdArgs)
assert AttnFwdArgs.dtype.offset == 240 and AttnFwdArgs.stream.offset == 256
assert ctypes.sizeof(AttnStats) == 56


def default_lib_path():
    """$ATTN_JIT_LIB, else lib/libattn-jit.so of $ATTN_JIT_BUNDLE."""
    if os.environ.get("ATTN_JIT_LIB"):
        return os.environ["ATTN_JIT_LIB"]
    if os.environ.get("ATTN_JIT_BUNDLE"):
        return os.path.join(os.environ["ATTN_JIT_BUNDLE"], "lib", "libattn-jit.so")
    return None


class AttnJit:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.attn_forward.argtypes = [ctypes.POINTER(AttnFwdArgs)]
        self.lib.attn_forward.restype = ctypes.c_int
        self.lib.attn_last_error.restype = ctypes.c_char_p
        self.lib.attn_version.restype = ctypes.c_char_p
        self.lib.attn_get_stats.argtypes = [ctypes.POINTER(AttnStats)]
        self.lib.attn_get_stats.restype = ctypes.c_int

    def version(self):
        return self.lib.attn_version().decode()

    def last_error(self):
        return (self.lib.attn_last_error() or b"").decode(errors="replace")

    def stats(self):
        s = AttnStats()
        self.lib.attn_get_stats(ctypes.byref(s))
        return {n: getattr(s, n) for n, _ in AttnStats._fields_}

    def forward(self, q, k, v, o, lse, dtype, mask, scale=0.0, stream=None, device=DEVICE_CUDA,
                kv_heads=None):
        """q, o: (B, H, Nq, D) and k, v: (B, H, Nk, D) torch tensors (any strides,
        last one 1); lse: (B, H, Nq) float32 or None; kv_heads: None for H
        (the header allows 0 or H). Returns (status, message)."""
        B, H, Nq, D = q.shape
        a = AttnFwdArgs()
        a.q, a.k, a.v, a.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()
        a.lse = lse.data_ptr() if lse is not None else None
        a.batch, a.heads = B, H
        a.kv_heads = k.shape[1] if kv_heads is None else kv_heads
        a.seqlen_q, a.seqlen_k, a.head_dim = Nq, k.shape[2], D
        for name, t in (("q_strides", q), ("k_strides", k), ("v_strides", v), ("o_strides", o)):
            getattr(a, name)[:] = list(t.stride())
        a.lse_strides[:] = list(lse.stride()) if lse is not None else [0, 0, 0]
        a.dtype, a.mask, a.scale = DTYPES[dtype], MASKS[mask], float(scale)
        a.device, a.stream = device, stream
        st = self.lib.attn_forward(ctypes.byref(a))
        return st, ("" if st == ATTN_OK else f"{STATUS_NAMES.get(st, st)}: {self.last_error()}")
