"""ctypes binding of runtime/include/attn-jit/attn_jit.h (keep the two in step).

The one Python definition of the C structs and enums: the package, and the GPU
tests' tests/gpu/attn_jit_ctypes.py, use it.
"""
import ctypes
import os
import threading

from . import errors

ATTN_OK = 0
DTYPE_BF16, DTYPE_F16, DTYPE_F32, DTYPE_E4M3 = 0, 1, 2, 3
MASK_NONE, MASK_CAUSAL, MASK_CAUSAL_BOTTOM_RIGHT = 0, 1, 2
DEVICE_CUDA, DEVICE_HOST = 0, 1
# attn_variant_flags
VARIANT_WINDOW, VARIANT_PREFIX_LM, VARIANT_DOCUMENT = 1 << 0, 1 << 1, 1 << 2
VARIANT_ALIBI, VARIANT_BIAS, VARIANT_SOFTCAP = 1 << 3, 1 << 4, 1 << 5
VARIANT_ALL = (1 << 6) - 1

LIB_NAME = "libattn-jit.so"
_HERE = os.path.dirname(os.path.abspath(__file__))


class AttnCapture(ctypes.Structure):
    """attn_capture: one value of a user's mods' captures."""
    _fields_ = [
        ("f32", ctypes.c_float), ("i64", ctypes.c_int64), ("data", ctypes.c_void_p),
        ("sizes", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4),
    ]


class AttnVariant(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint32),
        ("window_left", ctypes.c_int64), ("window_right", ctypes.c_int64),
        ("prefix_len", ctypes.c_int64), ("softcap", ctypes.c_float),
        ("alibi_slopes", ctypes.c_void_p), ("q_doc_ids", ctypes.c_void_p),
        ("kv_doc_ids", ctypes.c_void_p), ("bias", ctypes.c_void_p),
        ("bias_strides", ctypes.c_int64 * 2),
        # A user's own mods (MLIR text) and their captures; the package does
        # not pass them yet (NULL, 0).
        ("mods", ctypes.c_char_p), ("captures", ctypes.POINTER(AttnCapture)),
        ("num_captures", ctypes.c_int64),
    ]


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
        ("variant", AttnVariant),
    ]


class AttnBwdArgs(ctypes.Structure):
    _fields_ = [
        ("fwd", AttnFwdArgs),
        ("d_o", ctypes.c_void_p), ("dq", ctypes.c_void_p), ("dk", ctypes.c_void_p),
        ("dv", ctypes.c_void_p),
        ("do_strides", ctypes.c_int64 * 4), ("dq_strides", ctypes.c_int64 * 4),
        ("dk_strides", ctypes.c_int64 * 4), ("dv_strides", ctypes.c_int64 * 4),
    ]


class AttnVarlenArgs(ctypes.Structure):
    """attn_varlen_args: a variable-length (packed) batch."""
    _fields_ = [
        ("fwd", AttnFwdArgs),
        ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p),
        ("max_seqlen_q", ctypes.c_int64), ("max_seqlen_k", ctypes.c_int64),
    ]


class AttnPagedArgs(ctypes.Structure):
    """attn_paged_args: packed queries over a paged K/V cache."""
    _fields_ = [
        ("fwd", AttnFwdArgs),
        ("cu_seqlens_q", ctypes.c_void_p), ("max_seqlen_q", ctypes.c_int64),
        ("block_table", ctypes.c_void_p), ("max_pages", ctypes.c_int64),
        ("block_table_stride", ctypes.c_int64), ("seqused_k", ctypes.c_void_p),
        ("num_pages", ctypes.c_int64), ("page_size", ctypes.c_int64),
    ]


class AttnFp8Args(ctypes.Structure):
    """attn_fp8_args: an FP8 (e4m3) forward and its descale factors."""
    _fields_ = [
        ("fwd", AttnFwdArgs),
        ("q_descale", ctypes.c_float), ("k_descale", ctypes.c_float),
        ("v_descale", ctypes.c_float),
    ]


class AttnStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("compiles", "memory_hits", "disk_hits", "disk_misses", "disk_rejected",
                 "launches")] + [("compile_ms_total", ctypes.c_double)]


# Offsets checked against the C header with gcc (x86-64): a mismatch here
# would pass garbage to the library, so fail loudly instead.
assert ctypes.sizeof(AttnFwdArgs) == 392, ctypes.sizeof(AttnFwdArgs)
assert AttnFwdArgs.dtype.offset == 240 and AttnFwdArgs.stream.offset == 256
assert AttnFwdArgs.variant.offset == 280 and ctypes.sizeof(AttnVariant) == 112
assert AttnVariant.mods.offset == 88 and AttnVariant.num_captures.offset == 104
assert ctypes.sizeof(AttnCapture) == 88
assert [getattr(AttnVariant, n).offset for n in
        ("window_left", "prefix_len", "softcap", "alibi_slopes", "bias", "bias_strides")] == \
    [8, 24, 32, 40, 64, 72]
assert ctypes.sizeof(AttnStats) == 56
assert ctypes.sizeof(AttnBwdArgs) == 552 and AttnBwdArgs.d_o.offset == 392
assert AttnBwdArgs.do_strides.offset == 424 and AttnBwdArgs.dv_strides.offset == 520
assert ctypes.sizeof(AttnVarlenArgs) == 424 and AttnVarlenArgs.max_seqlen_k.offset == 416
assert ctypes.sizeof(AttnPagedArgs) == 456 and AttnPagedArgs.seqused_k.offset == 432
assert ctypes.sizeof(AttnFp8Args) == 408 and AttnFp8Args.v_descale.offset == 400


class Library:
    """One loaded libattn-jit.so (the GPU benchmarks load two side by side)."""

    def __init__(self, path):
        self.path = path
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as ex:
            raise errors.LibraryNotFoundError(f"cannot load {path}: {ex}") from None
        lib = self.lib
        lib.attn_forward.argtypes = [ctypes.POINTER(AttnFwdArgs)]
        lib.attn_forward.restype = ctypes.c_int
        # Entry points absent from older libraries (ab_bench.py loads one to
        # time its forward): attn_backward before issue 12, attn_forward_varlen
        # and attn_forward_paged before issue 15, attn_forward_fp8 before
        # issue 16's FP8 mapping.
        for name, args_type in (("attn_backward", AttnBwdArgs), ("attn_forward_varlen", AttnVarlenArgs),
                                ("attn_forward_paged", AttnPagedArgs), ("attn_forward_fp8", AttnFp8Args)):
            if hasattr(lib, name):
                getattr(lib, name).argtypes = [ctypes.POINTER(args_type)]
                getattr(lib, name).restype = ctypes.c_int
        lib.attn_last_error.restype = ctypes.c_char_p
        lib.attn_status_string.argtypes = [ctypes.c_int]
        lib.attn_status_string.restype = ctypes.c_char_p
        lib.attn_version.restype = ctypes.c_char_p
        lib.attn_get_stats.argtypes = [ctypes.POINTER(AttnStats)]
        lib.attn_get_stats.restype = ctypes.c_int
        lib.attn_clear_memory_cache.restype = None
        # attn_wait_for_compiles: tiered first calls (absent before).
        if hasattr(lib, "attn_wait_for_compiles"):
            lib.attn_wait_for_compiles.restype = None
        # attn_set_num_splits: split-KV, issue 15 (absent before).
        if hasattr(lib, "attn_set_num_splits"):
            lib.attn_set_num_splits.argtypes = [ctypes.c_int64]
            lib.attn_set_num_splits.restype = ctypes.c_int
        # attn_set_deterministic: the backward's form, issue 12 (absent before).
        if hasattr(lib, "attn_set_deterministic"):
            lib.attn_set_deterministic.argtypes = [ctypes.c_int]
            lib.attn_set_deterministic.restype = ctypes.c_int

    def forward(self, args):
        """attn_forward; a failure raises the errors class of its status."""
        self.check(self.lib.attn_forward(ctypes.byref(args)))

    def forward_varlen(self, args):
        """attn_forward_varlen; a failure raises the errors class of its status."""
        self.check(self.lib.attn_forward_varlen(ctypes.byref(args)))

    def forward_paged(self, args):
        """attn_forward_paged; a failure raises the errors class of its status."""
        self.check(self.lib.attn_forward_paged(ctypes.byref(args)))

    def forward_fp8(self, args):
        """attn_forward_fp8; a failure raises the errors class of its status."""
        self.check(self.lib.attn_forward_fp8(ctypes.byref(args)))

    def backward(self, args):
        """attn_backward; a failure raises the errors class of its status."""
        self.check(self.lib.attn_backward(ctypes.byref(args)))

    def check(self, status):
        """Raises the errors class of a failed call's status (with this
        thread's attn_last_error)."""
        if status != ATTN_OK:
            raise errors.from_status(status, self.last_error())

    def last_error(self):
        return (self.lib.attn_last_error() or b"").decode(errors="replace")

    def status_string(self, status):
        return self.lib.attn_status_string(status).decode()

    def version(self):
        return self.lib.attn_version().decode()

    def stats(self):
        s = AttnStats()
        self.lib.attn_get_stats(ctypes.byref(s))
        return {n: getattr(s, n) for n, _ in AttnStats._fields_}

    def clear_memory_cache(self):
        self.lib.attn_clear_memory_cache()

    def wait_for_compiles(self):
        """attn_wait_for_compiles: returns once no kernel builds in the
        background (tiered first calls); a no-op for a library
        without it."""
        if hasattr(self.lib, "attn_wait_for_compiles"):
            self.lib.attn_wait_for_compiles()

    def set_num_splits(self, num_splits):
        """attn_set_num_splits: split-KV's count for forward calls from now on
        (0 auto, 1 never, k > 1 always k); a failure raises."""
        self.check(self.lib.attn_set_num_splits(int(num_splits)))

    def set_deterministic(self, deterministic):
        """attn_set_deterministic: the backward's form from now on (True:
        bit-identical gradients; False: dQ added with atomics)."""
        self.check(self.lib.attn_set_deterministic(1 if deterministic else 0))


def candidate_paths():
    """Where the library is looked for, in order: $ATTN_JIT_LIB alone when set;
    else lib/ beside the package's folder (the bundle: BUNDLE/python/attn_jit
    and BUNDLE/lib), then the build tree of the checkout (python/attn_jit and
    build/lib)."""
    if os.environ.get("ATTN_JIT_LIB"):
        return [os.environ["ATTN_JIT_LIB"]]
    root = os.path.dirname(os.path.dirname(_HERE))
    return [os.path.join(root, "lib", LIB_NAME), os.path.join(root, "build", "lib", LIB_NAME)]


_library = None
_lock = threading.Lock()


def library():
    """The process's Library, loaded on first use (so `import attn_jit` works
    without it)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                paths = candidate_paths()
                found = [p for p in paths if os.path.exists(p)]
                if not found:
                    raise errors.LibraryNotFoundError(
                        f"{LIB_NAME} not found; looked at {', '.join(paths)} "
                        "(set ATTN_JIT_LIB to its path, or build it: ninja -C build)")
                _library = Library(found[0])
    return _library
