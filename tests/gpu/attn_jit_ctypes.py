"""libattn-jit.so for the GPU tests and the device scripts: a given library
file (ab_bench.py loads two side by side), statuses returned rather than
raised, torch tensors passed as they are.

The C structs and enums are the Python package's (python/attn_jit/_capi.py,
their one definition); it is imported from PYTHONPATH, else from this checkout.
"""
import os
import sys

# The tests and benchmarks check and time the default kernels: tiered first
# calls (the library's default, a quick kernel until the default one loads)
# only where a run asks for them (run_tiered.sh, bench_firstcall --tiered:
# ATTN_JIT_TIERED=1).
os.environ.setdefault("ATTN_JIT_TIERED", "0")

try:
    import attn_jit  # noqa: F401
except ImportError:
    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from attn_jit import _capi  # noqa: E402
from attn_jit._capi import (ATTN_OK, DEVICE_CUDA, DEVICE_HOST, AttnBwdArgs, AttnFp8Args,  # noqa: E402,F401
                            AttnFwdArgs, AttnPagedArgs, AttnStats, AttnVariant, AttnVarlenArgs)
from attn_jit.errors import AttnJitError  # noqa: E402

STATUS_NAMES = {0: "OK", 1: "INVALID_ARGUMENT", 2: "UNSUPPORTED", 3: "NO_DRIVER",
                4: "NO_DEVICE", 5: "CUDA", 6: "COMPILE", 7: "INTERNAL"}
DTYPES = {"bf16": _capi.DTYPE_BF16, "f16": _capi.DTYPE_F16, "f32": _capi.DTYPE_F32,
          "e4m3": _capi.DTYPE_E4M3}
MASKS = {"none": _capi.MASK_NONE, "causal": _capi.MASK_CAUSAL,
         "bottom_right": _capi.MASK_CAUSAL_BOTTOM_RIGHT}
VARIANTS = {"window": _capi.VARIANT_WINDOW, "prefix_lm": _capi.VARIANT_PREFIX_LM,
            "document": _capi.VARIANT_DOCUMENT, "alibi": _capi.VARIANT_ALIBI, "bias": _capi.VARIANT_BIAS,
            "softcap": _capi.VARIANT_SOFTCAP}


def make_variant(window=None, prefix_len=None, softcap=None, alibi_slopes=None, q_doc_ids=None,
                 kv_doc_ids=None, bias=None, flags=None):
    """An attn_variant from torch tensors (which the caller keeps alive):
    the flag of each value given is set (window: (left, right), -1 for
    unbounded; document: both id tensors). flags, when given, replaces the
    flags (e.g. a flag whose pointer is left NULL)."""
    a = AttnVariant()
    f = 0
    if window is not None:
        f |= _capi.VARIANT_WINDOW
        a.window_left, a.window_right = window
    if prefix_len is not None:
        f |= _capi.VARIANT_PREFIX_LM
        a.prefix_len = prefix_len
    if softcap is not None:
        f |= _capi.VARIANT_SOFTCAP
        a.softcap = softcap
    if alibi_slopes is not None:
        f |= _capi.VARIANT_ALIBI
        a.alibi_slopes = alibi_slopes.data_ptr()
    if q_doc_ids is not None or kv_doc_ids is not None:
        f |= _capi.VARIANT_DOCUMENT
        a.q_doc_ids = q_doc_ids.data_ptr() if q_doc_ids is not None else None
        a.kv_doc_ids = kv_doc_ids.data_ptr() if kv_doc_ids is not None else None
    if bias is not None:
        f |= _capi.VARIANT_BIAS
        a.bias = bias.data_ptr()
        a.bias_strides[:] = list(bias.stride())
    a.flags = f if flags is None else flags
    return a



def torch_on_cuda():
    """torch, imported, when it and a CUDA device are there; else None after
    printing the SKIP line the benchmarks exit 77 with."""
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return None
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return None
    return torch

def default_lib_path():
    """$ATTN_JIT_LIB, else lib/libattn-jit.so of $ATTN_JIT_BUNDLE."""
    if os.environ.get("ATTN_JIT_LIB"):
        return os.environ["ATTN_JIT_LIB"]
    if os.environ.get("ATTN_JIT_BUNDLE"):
        return os.path.join(os.environ["ATTN_JIT_BUNDLE"], "lib", "libattn-jit.so")
    return None


# Every library this process loaded (benchmarks load two side by side).
_LOADED = []


def wait_for_compiles():
    """Waits for every loaded library's background builds (ATTN_JIT_TIERED's first calls), so that a
    timed loop never times a quick kernel."""
    for lib in _LOADED:
        lib.wait_for_compiles()


class AttnJit(_capi.Library):
    def __init__(self, path):
        super().__init__(path)
        _LOADED.append(self)

    def forward(self, q, k, v, o, lse, dtype, mask, scale=0.0, stream=None, device=DEVICE_CUDA,
                kv_heads=None, variant=None, tiles=(0, 0)):
        """q, o: (B, H, Nq, D) and k, v: (B, Hkv, Nk, D) torch tensors (any
        strides, last one 1); lse: (B, H, Nq) float32 or None; kv_heads: None
        for k's head count (the header allows 0 for H); variant: an
        AttnVariant (make_variant) or None; tiles: (block_m, block_n), 0 for
        the policy's default. Returns (status, message)."""
        a = self._fwd_args(q, k, v, o, lse, dtype, mask, scale, stream, device, kv_heads, variant)
        a.block_m, a.block_n = tiles
        try:
            super().forward(a)
        except AttnJitError as ex:
            return ex.status, f"{STATUS_NAMES.get(ex.status, ex.status)}: {ex.message}"
        return ATTN_OK, ""

    def forward_fp8(self, q, k, v, o, lse, descale, mask, scale=0.0, stream=None, device=DEVICE_CUDA,
                    tiles=(0, 0)):
        """attn_forward_fp8: q (B, H, Nq, D), k (B, Hkv, Nk, D) float8_e4m3fn
        torch tensors (last stride 1), v (B, Hkv, Nk, D) with its keys
        contiguous (v.stride(2) == 1), o (B, H, Nq, D) bfloat16; descale:
        (q, k, v) factors. Returns (status, message)."""
        a = AttnFp8Args()
        a.fwd = self._fwd_args(q, k, v, o, lse, "e4m3", mask, scale, stream, device, None, None)
        a.fwd.block_m, a.fwd.block_n = tiles
        a.q_descale, a.k_descale, a.v_descale = (float(x) for x in descale)
        try:
            super().forward_fp8(a)
        except AttnJitError as ex:
            return ex.status, f"{STATUS_NAMES.get(ex.status, ex.status)}: {ex.message}"
        return ATTN_OK, ""

    def forward_varlen(self, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                       dtype, mask, scale=0.0, stream=None, device=DEVICE_CUDA, variant=None):
        """attn_forward_varlen: q, o (total_q, H, D) and k, v (total_k, Hkv, D)
        torch tensors (any strides, last one 1); lse (H, total_q) float32 or
        None; cu_seqlens_*: int32 tensors of B + 1 offsets on the call's
        device. Returns (status, message)."""
        a = AttnVarlenArgs()
        f = a.fwd
        self._packed_fwd(f, q, k, v, o, lse, cu_seqlens_q, dtype, mask, scale, stream, device, variant)
        f.kv_heads, f.seqlen_k = k.shape[1], k.shape[0]
        # (batch, head, row, dim) index order; the batch stride is ignored.
        for name, t in (("k_strides", k), ("v_strides", v)):
            getattr(f, name)[:] = [0, t.stride(1), t.stride(0), t.stride(2)]
        a.cu_seqlens_q, a.cu_seqlens_k = cu_seqlens_q.data_ptr(), cu_seqlens_k.data_ptr()
        a.max_seqlen_q, a.max_seqlen_k = int(max_seqlen_q), int(max_seqlen_k)
        try:
            super().forward_varlen(a)
        except AttnJitError as ex:
            return ex.status, f"{STATUS_NAMES.get(ex.status, ex.status)}: {ex.message}"
        return ATTN_OK, ""

    def forward_paged(self, q, k_cache, v_cache, o, lse, cu_seqlens_q, max_seqlen_q, block_table, seqused_k,
                      dtype, mask, scale=0.0, stream=None, device=DEVICE_CUDA, variant=None, tiles=(0, 0)):
        """attn_forward_paged: q, o (total_q, H, D) torch tensors (any strides,
        last one 1); k_cache, v_cache (num_pages, page_size, Hkv, D) (any
        strides, last one 1); lse (H, total_q) float32 or None; cu_seqlens_q
        (B + 1), block_table (B, max_pages) and seqused_k (B): int32 tensors
        on the call's device (the table's rows may have any stride, columns
        1); tiles: (block_m, block_n), 0 for the policy's default.
        Returns (status, message)."""
        a = AttnPagedArgs()
        f = a.fwd
        self._packed_fwd(f, q, k_cache, v_cache, o, lse, cu_seqlens_q, dtype, mask, scale, stream, device,
                         variant)
        f.block_m, f.block_n = tiles
        f.kv_heads = k_cache.shape[2]
        # (page, head, row, dim) index order.
        for name, t in (("k_strides", k_cache), ("v_strides", v_cache)):
            getattr(f, name)[:] = [t.stride(0), t.stride(2), t.stride(1), t.stride(3)]
        a.cu_seqlens_q, a.max_seqlen_q = cu_seqlens_q.data_ptr(), int(max_seqlen_q)
        a.block_table, a.max_pages = block_table.data_ptr(), block_table.shape[1]
        a.block_table_stride = block_table.stride(0)
        a.seqused_k = seqused_k.data_ptr()
        a.num_pages, a.page_size = k_cache.shape[0], k_cache.shape[1]
        try:
            super().forward_paged(a)
        except AttnJitError as ex:
            return ex.status, f"{STATUS_NAMES.get(ex.status, ex.status)}: {ex.message}"
        return ATTN_OK, ""

    def backward(self, q, k, v, o, lse, do, dq, dk, dv, dtype, mask, scale=0.0, stream=None,
                 device=DEVICE_CUDA, variant=None, tiles=(0, 0)):
        """attn_backward: the forward's q, k, v, o, lse (as forward takes
        them), dO shaped as o, writing dq, dk, dv (shaped as q, k, v);
        tiles: (block_m, block_n), 0 for the policy's default.
        Returns (status, message)."""
        a = AttnBwdArgs()
        a.fwd = self._fwd_args(q, k, v, o, lse, dtype, mask, scale, stream, device, None, variant)
        a.fwd.block_m, a.fwd.block_n = tiles
        a.d_o, a.dq, a.dk, a.dv = do.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr()
        for name, t in (("do_strides", do), ("dq_strides", dq), ("dk_strides", dk), ("dv_strides", dv)):
            getattr(a, name)[:] = list(t.stride())
        try:
            super().backward(a)
        except AttnJitError as ex:
            return ex.status, f"{STATUS_NAMES.get(ex.status, ex.status)}: {ex.message}"
        return ATTN_OK, ""

    @staticmethod
    def _packed_fwd(f, q, k, v, o, lse, cu_seqlens_q, dtype, mask, scale, stream, device, variant):
        """The attn_fwd_args `f` of a packed call (varlen, paged): q, o
        (total_q, H, D), lse (H, total_q) or None, the pointers of k and v,
        B from cu_seqlens_q; the caller sets K's and V's sizes and strides."""
        f.q, f.k, f.v, f.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()
        f.lse = lse.data_ptr() if lse is not None else None
        f.batch = cu_seqlens_q.numel() - 1
        f.heads, f.head_dim, f.seqlen_q = q.shape[1], q.shape[2], q.shape[0]
        # (batch, head, row, dim) index order; the batch stride is ignored.
        for name, t in (("q_strides", q), ("o_strides", o)):
            getattr(f, name)[:] = [0, t.stride(1), t.stride(0), t.stride(2)]
        f.lse_strides[:] = [0, lse.stride(0), lse.stride(1)] if lse is not None else [0, 0, 0]
        f.dtype, f.mask, f.scale = DTYPES[dtype], MASKS[mask], float(scale)
        f.device, f.stream = device, stream
        if variant is not None:
            f.variant = variant

    @staticmethod
    def _fwd_args(q, k, v, o, lse, dtype, mask, scale, stream, device, kv_heads, variant):
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
        if variant is not None:
            a.variant = variant
        return a


def select_cases(cases, args, case_name):
    """The cases a test driver's --only / --filter keep; with --list, prints
    their names and returns None (the driver then exits 0)."""
    if args.only:
        keep = {int(x) for x in args.only.split(",")}
        cases = [c for c in cases if c["idx"] in keep]
    if args.filter:
        cases = [c for c in cases if args.filter in case_name(c)]
    if args.list:
        for c in cases:
            print(case_name(c))
        return None
    return cases


def run_cases(cases, run, case_name, seed):
    """Runs run(case, seed + idx) for each case (an exception fails that case
    only), printing one PASS / FAIL line each with the result's err / tol /
    lse_err and how to repeat a failure; returns the number that failed."""
    import time
    failed = 0
    for c in cases:
        t0 = time.time()
        try:
            res = run(c, seed + c["idx"])
        except Exception as ex:  # noqa: BLE001 - one case must not stop the run
            res = dict(name=case_name(c), fail=f"exception: {type(ex).__name__}: {ex}")
        ok = "fail" not in res
        failed += not ok
        line = f"{'PASS' if ok else 'FAIL'} {res['name']}"
        if "err" in res:
            line += f" err={res['err']:.3e} tol={res['tol']:.3e}({res['tol_from']}) lse_err={res['lse_err']:.1e}"
        if not ok:
            line += f" -- {res['fail']} (--seed {seed} --only {c['idx']})"
        print(line + f" {time.time() - t0:.2f}s", flush=True)
    print(f"# {len(cases) - failed} passed, {failed} failed")
    return failed


def open_for_cases(args, script):
    """torch and the library of a GPU test driver (args.lib, args.seed), and
    the seed it runs with, after printing its header line; or the exit status
    when it cannot run (77: no torch or GPU, 2: no library)."""
    import random
    try:
        import torch
    except ImportError as ex:
        print(f"SKIP: torch not importable ({ex})")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    if not args.lib or not os.path.exists(args.lib):
        print(f"error: libattn-jit.so not found (--lib or ATTN_JIT_LIB): {args.lib}", file=sys.stderr)
        return 2
    lib = AttnJit(args.lib)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"# {script}: attn-jit {lib.version()} from {args.lib}; torch {torch.__version__}; "
          f"device {torch.cuda.get_device_name()}; seed {seed}", flush=True)
    return torch, lib, seed


def parse_case_args(doc, quick_help):
    """The command line of a GPU test driver: --lib, --seed, --quick, and
    the case selection of select_cases (--only, --filter, --list)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=default_lib_path(), help="libattn-jit.so ($ATTN_JIT_LIB)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--only", default="", help="comma-separated case indices")
    ap.add_argument("--filter", default="", help="run cases whose name contains this")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    return ap.parse_args()


def drive(doc, quick_help, script, make_cases, case_name, run_case, needs=()):
    """The main of a GPU test driver: its command line (parse_case_args), the
    cases selected, then run_case(torch, lib, case, seed) on each (the case's
    "quick" set from --quick); `needs`: C functions the library must export.
    Returns the exit status (0 all passed, 1 a case failed, 2 usage, 77 skip)."""
    args = parse_case_args(doc, quick_help)
    cases = select_cases(make_cases(args.quick), args, case_name)
    if cases is None:
        return 0
    opened = open_for_cases(args, f"{script}, {len(cases)} cases")
    if isinstance(opened, int):
        return opened
    torch, lib, seed = opened
    for name in needs:
        if not hasattr(lib.lib, name):
            print(f"error: {args.lib} has no {name} (an older library)", file=sys.stderr)
            return 2

    def run(c, case_seed):
        c["quick"] = args.quick
        return run_case(torch, lib, c, case_seed)
    return 1 if run_cases(cases, run, case_name, seed) else 0


def parse_env(text):
    """'A=1,B=x' -> {'A': '1', 'B': 'x'}."""
    env = {}
    for item in filter(None, text.split(",")):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"error: expected VAR=VALUE, got {item!r}")
        env[name] = value
    return env


def distinct_copy(path):
    """`path`, or a copy of it beside it when this process already loaded that
    file: dlopen hands back a loaded library's handle, so a second load of one
    path would share the first's engine -- its environment, read once at
    start, and attn_set_deterministic -- and an A/B of two handles would time
    one thing twice (session 33's first backward A/B did). The copy is removed
    at exit."""
    real = os.path.realpath(path)
    if all(os.path.realpath(lib.path) != real for lib in _LOADED):
        return path
    import atexit
    import shutil
    import tempfile
    try:  # beside it (its $ORIGIN), else in the temporary directory
        fd, copy = tempfile.mkstemp(prefix="libattn-jit-copy-", suffix=".so", dir=os.path.dirname(real))
    except OSError:
        fd, copy = tempfile.mkstemp(prefix="libattn-jit-copy-", suffix=".so")
    os.close(fd)
    shutil.copyfile(real, copy)
    atexit.register(os.remove, copy)
    return copy


def start_library(path, env):
    """Loads `path` (a copy of it if it is loaded already: distinct_copy) and
    starts its engine with `env` set (restored after)."""
    path = distinct_copy(path)
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        lib = AttnJit(path)
        lib.stats()  # the process-wide engine reads the environment here
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return lib
