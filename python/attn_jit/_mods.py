"""Variants written in Python: score_mod / mask_mod traced into MLIR text.

A score_mod(score, b, h, q_idx, kv_idx) -> score and a mask_mod(b, h,
q_idx, kv_idx) -> bool are called once with symbolic values; each operation
on them appends one arith / math / memref op, and the result is the text of
`func.func @score_mod` / `@mask_mod` that the C API takes as
`attn_variant.mods` (its compiler verifies it and caches the kernel by its
canonical form). Arrays the functions read through their closure (captured
variables) become capture arguments, read with memref.load: a new value
never recompiles; Python numbers in the closure are constants of the traced
code. Scores are f32; positions and integer values index; conditions i1.

Traceable: + - * / // % and unary -, comparisons, & | ~ on conditions, abs(),
where(c, a, b), exp, exp2, log, log2, tanh, sqrt, minimum, maximum, and
indexing a captured array (f32 or int32, rank 1 to 4; a closure variable or a
module global the function names) with positions.
Anything else -- Python `if`/`and`/`or` on a traced value, NumPy or torch
functions, another operation -- raises TraceError naming it.

Given arrays instead (torch tensors, NumPy arrays), where, exp, ..., minimum,
maximum compute with their library, so one function serves attn_jit and
FlexAttention, which calls score_mod / mask_mod on tensors.
"""
import math
import sys
import types

from .errors import InvalidArgumentError


class TraceError(InvalidArgumentError):
    """A score_mod / mask_mod does what the tracer cannot express."""


_F32, _INDEX, _I1 = "f32", "index", "i1"


class _Trace:
    def __init__(self):
        self.lines = []
        self.count = 0

    def value(self, text, ty):
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {text}")
        return Sym(self, name, ty)

    def const(self, x, ty):
        if ty == _F32:
            return self.value(f"arith.constant {float(x)!r} : f32", _F32)
        if ty == _I1:
            return self.value(f"arith.constant {'true' if x else 'false'}", _I1)
        return self.value(f"arith.constant {int(x)} : index", _INDEX)

    def lift(self, x, ty):
        """x (a Sym, or a Python number as `ty`) as a Sym."""
        if isinstance(x, Sym):
            if x.trace is not self:
                raise TraceError("a value of another trace was used")
            return x
        if isinstance(x, bool):
            return self.const(x, _I1) if ty == _I1 else self.const(int(x), ty)
        if isinstance(x, int):
            return self.const(x, _INDEX if ty == _INDEX else _F32 if ty == _F32 else _INDEX)
        if isinstance(x, float):
            return self.const(x, _F32)
        raise TraceError(f"a {type(x).__name__} cannot be used in a traced score_mod / mask_mod "
                         "(numbers, positions, scores and captured arrays can)")

    def to_f32(self, s):
        if s.ty == _F32:
            return s
        if s.ty == _INDEX:
            i = self.value(f"arith.index_cast {s.name} : index to i64", "i64")
            return self.value(f"arith.sitofp {i.name} : i64 to f32", _F32)
        raise TraceError("a condition cannot be used as a number: use where(c, a, b)")


def _binary(op_f, op_i, a, b, reverse=False):
    tr = a.trace
    other = tr.lift(b, a.ty)
    x, y = (other, a) if reverse else (a, other)
    if x.ty == _I1 or y.ty == _I1:
        raise TraceError(f"arithmetic on a condition ({op_f or op_i}): use where(c, a, b)")
    if x.ty == _F32 or y.ty == _F32 or op_i is None:
        if op_f is None:
            raise TraceError(f"{op_i} is defined on integers (positions) only")
        x, y = tr.to_f32(x), tr.to_f32(y)
        return tr.value(f"{op_f} {x.name}, {y.name} : f32", _F32)
    return tr.value(f"{op_i} {x.name}, {y.name} : index", _INDEX)


_PRED = {"<": ("olt", "slt"), "<=": ("ole", "sle"), ">": ("ogt", "sgt"), ">=": ("oge", "sge"),
         "==": ("oeq", "eq"), "!=": ("une", "ne")}


def _compare(a, b, how):
    tr = a.trace
    other = tr.lift(b, a.ty)
    if a.ty == _I1 or other.ty == _I1:
        raise TraceError(f"comparison ({how}) of a condition")
    if a.ty == _F32 or other.ty == _F32:
        x, y = tr.to_f32(a), tr.to_f32(other)
        return tr.value(f"arith.cmpf {_PRED[how][0]}, {x.name}, {y.name} : f32", _I1)
    return tr.value(f"arith.cmpi {_PRED[how][1]}, {a.name}, {other.name} : index", _I1)


def _logic(a, b, op):
    tr = a.trace
    other = tr.lift(b, _I1)
    if a.ty != _I1 or other.ty != _I1:
        raise TraceError(f"'{op}' combines conditions (comparisons) only")
    return tr.value(f"arith.{op} {a.name}, {other.name} : i1", _I1)


class Sym:
    """A traced value: its SSA name and type."""
    __slots__ = ("trace", "name", "ty")

    def __init__(self, trace, name, ty):
        self.trace, self.name, self.ty = trace, name, ty

    def __add__(self, o): return _binary("arith.addf", "arith.addi", self, o)
    def __radd__(self, o): return _binary("arith.addf", "arith.addi", self, o, True)
    def __sub__(self, o): return _binary("arith.subf", "arith.subi", self, o)
    def __rsub__(self, o): return _binary("arith.subf", "arith.subi", self, o, True)
    def __mul__(self, o): return _binary("arith.mulf", "arith.muli", self, o)
    def __rmul__(self, o): return _binary("arith.mulf", "arith.muli", self, o, True)
    def __truediv__(self, o): return _binary("arith.divf", None, self, o)
    def __rtruediv__(self, o): return _binary("arith.divf", None, self, o, True)
    def __floordiv__(self, o): return _binary(None, "arith.floordivsi", self, o)
    def __rfloordiv__(self, o): return _binary(None, "arith.floordivsi", self, o, True)
    def __mod__(self, o): return _binary(None, "arith.remsi", self, o)
    def __rmod__(self, o): return _binary(None, "arith.remsi", self, o, True)

    def __neg__(self):
        if self.ty == _F32:
            return self.trace.value(f"arith.negf {self.name} : f32", _F32)
        return 0 - self

    def __abs__(self):
        if self.ty == _F32:
            return self.trace.value(f"math.absf {self.name} : f32", _F32)
        return where(self < 0, -self, self)

    def __lt__(self, o): return _compare(self, o, "<")
    def __le__(self, o): return _compare(self, o, "<=")
    def __gt__(self, o): return _compare(self, o, ">")
    def __ge__(self, o): return _compare(self, o, ">=")
    def __eq__(self, o): return _compare(self, o, "==")   # noqa: E704
    def __ne__(self, o): return _compare(self, o, "!=")   # noqa: E704
    __hash__ = None

    def __and__(self, o): return _logic(self, o, "andi")
    __rand__ = __and__
    def __or__(self, o): return _logic(self, o, "ori")
    __ror__ = __or__

    def __invert__(self):
        if self.ty != _I1:
            raise TraceError("'~' negates conditions only")
        return _logic(self, True, "xori")

    def __bool__(self):
        raise TraceError("Python control flow ('if', 'and', 'or', 'not', min/max builtins) on a traced "
                         "value cannot be traced: use where(c, a, b), &, |, ~, minimum, maximum")

    def __index__(self):
        raise TraceError("a traced position cannot index a Python or NumPy object: capture the array "
                         "(a closure variable) and index it in the mod")

    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        raise TraceError(f"NumPy's {ufunc.__name__} cannot be traced: use attn_jit's exp, log, tanh, "
                         "sqrt, minimum, maximum, where")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise TraceError(f"torch's {getattr(func, '__name__', func)} cannot be traced: use attn_jit's "
                         "exp, log, tanh, sqrt, minimum, maximum, where")


_PLAIN = {"exp": lambda x: math.exp(x), "exp2": lambda x: 2.0 ** x, "log": lambda x: math.log(x),
          "log2": lambda x: math.log2(x), "tanh": lambda x: math.tanh(x), "sqrt": lambda x: math.sqrt(x)}


def _library_of(*xs):
    """The module (torch, numpy) of the first array among xs, else None."""
    for x in xs:
        if hasattr(x, "shape") and not isinstance(x, Sym):
            return sys.modules[type(x).__module__.partition(".")[0]]
    return None


def _unary(name, x):
    if not isinstance(x, Sym):   # a plain number (computed now), or an array
        lib = _library_of(x)
        return _PLAIN[name](x) if lib is None else getattr(lib, name)(x)
    s = x.trace.to_f32(x)
    return s.trace.value(f"math.{name} {s.name} : f32", _F32)


def exp(x): return _unary("exp", x)
def exp2(x): return _unary("exp2", x)
def log(x): return _unary("log", x)
def log2(x): return _unary("log2", x)
def tanh(x): return _unary("tanh", x)
def sqrt(x): return _unary("sqrt", x)


def where(c, a, b):
    """a where c holds, else b (c a traced condition)."""
    if not isinstance(c, Sym):
        lib = _library_of(c, a, b)
        return (a if c else b) if lib is None else lib.where(c, a, b)
    tr = c.trace
    if c.ty != _I1:
        raise TraceError("where's condition must be a comparison")
    ty = _F32 if _F32 in (getattr(a, "ty", None), getattr(b, "ty", None)) or \
        isinstance(a, float) or isinstance(b, float) else _INDEX
    x, y = tr.lift(a, ty), tr.lift(b, ty)
    if _I1 in (x.ty, y.ty):
        ty = _I1
        x, y = tr.lift(a, _I1), tr.lift(b, _I1)
    elif _F32 in (x.ty, y.ty):
        ty = _F32
        x, y = tr.to_f32(x), tr.to_f32(y)
    return tr.value(f"arith.select {c.name}, {x.name}, {y.name} : {ty}", ty)


def _extreme(a, b, float_op, int_op, plain):
    s = a if isinstance(a, Sym) else b
    if not isinstance(s, Sym):
        lib = _library_of(a, b)
        return plain(a, b) if lib is None else getattr(lib, plain.__name__ + "imum")(a, b)
    tr = s.trace
    if _F32 in (getattr(a, "ty", None), getattr(b, "ty", None)) or isinstance(a, float) or isinstance(b, float):
        x, y = tr.to_f32(tr.lift(a, _F32)), tr.to_f32(tr.lift(b, _F32))
        return tr.value(f"{float_op} {x.name}, {y.name} : f32", _F32)
    x, y = tr.lift(a, _INDEX), tr.lift(b, _INDEX)
    return tr.value(f"{int_op} {x.name}, {y.name} : index", _INDEX)


def minimum(a, b):
    """The smaller of a and b (scores: arith.minimumf; positions: minsi)."""
    return _extreme(a, b, "arith.minimumf", "arith.minsi", min)


def maximum(a, b):
    """The larger of a and b."""
    return _extreme(a, b, "arith.maximumf", "arith.maxsi", max)


class _Capture:
    """A captured array inside a trace: indexing it loads an element."""

    def __init__(self, trace, arg, element, rank):
        self.trace, self.arg, self.element, self.rank = trace, arg, element, rank

    def memref(self):
        shape = "x".join(["?"] * self.rank)
        strides = ", ".join(["?"] * self.rank)
        return f"memref<{shape}x{self.element}, strided<[{strides}], offset: ?>>"

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if len(index) != self.rank:
            raise TraceError(f"a captured array of rank {self.rank} was indexed with {len(index)} positions")
        tr = self.trace
        idx = [tr.lift(i, _INDEX) for i in index]
        if any(i.ty != _INDEX for i in idx):
            raise TraceError("captured arrays are indexed by positions (integers), not scores")
        names = ", ".join(i.name for i in idx)
        v = tr.value(f"memref.load {self.arg}[{names}] : {self.memref()}", _F32 if self.element == "f32" else "i32")
        if self.element == "f32":
            return v
        return tr.value(f"arith.index_cast {v.name} : i32 to index", _INDEX)

    def __getattr__(self, name):
        raise TraceError(f"captured arrays can only be indexed inside a mod (used: .{name})")


def _array_info(x):
    """(element, rank) of an array the C API can capture, or None for a
    closure value that is not an array."""
    if isinstance(x, (types.ModuleType, type)) or callable(x):
        return None
    dtype = getattr(x, "dtype", None)
    shape = getattr(x, "shape", None)
    if dtype is None or not isinstance(getattr(x, "ndim", None), int):
        return None
    element = _ELEMENTS.get(dtype)
    if element is None:   # str(dtype) is slow: once per dtype
        name = str(dtype).rpartition(".")[2]
        element = _ELEMENTS[dtype] = {"float32": "f32", "int32": "i32"}.get(name, name)
    if element not in ("f32", "i32"):
        raise TraceError(f"a captured array must be float32 or int32; one is {element}")
    if not 1 <= len(shape) <= 4:
        raise TraceError(f"a captured array must have rank 1 to 4; one has rank {len(shape)}")
    return element, len(shape)


_ELEMENTS = {}   # an array's dtype -> its element type in the text, or its name


def _free_values(fn):
    """(where, key, value) of what fn reads from outside: its closure cells
    and the module globals its code names."""
    out = []
    for i, cell in enumerate(fn.__closure__ or ()):
        try:
            out.append(("cell", i, cell.cell_contents))
        except ValueError:
            pass
    for name in fn.__code__.co_names:
        if name in fn.__globals__:
            out.append(("global", name, fn.__globals__[name]))
    return out


_CONSTANT_TYPES = (int, float, bool, str, type(None))


def _scan(fns):
    """One pass over what the functions read from outside (closure cells,
    module globals): ([(path, array)] of the arrays they capture, first use
    first, each once; path = (index of the function in fns, "cell" or
    "global", cell index or global name)), and a signature of everything
    the traced text depends on besides the functions: each array's kind and
    capture index, each Python number's value (numbers are constants of the
    text, so a new value must trace again), other objects by identity."""
    index, captured, sig = {}, [], []
    for i, fn in enumerate(fns):
        if fn is None or not hasattr(fn, "__code__"):
            continue
        for where_, key, x in _free_values(fn):
            info = _array_info(x)
            if info is None:
                sig.append((type(x), x) if type(x) in _CONSTANT_TYPES else id(x))
                continue
            if id(x) not in index:
                index[id(x)] = len(captured)
                captured.append(((i, where_, key), x))
            sig.append((info, index[id(x)]))
    return captured, tuple(sig)


def captured_arrays(fns):
    """The arrays the functions read through their closures or module
    globals, in a fixed order (first use), each once."""
    return [x for _, x in _scan(fns)[0]]


def _traced(fn, trace, leading, arrays, captures):
    """fn called with `leading` Syms, the arrays it reads replaced by
    captures (in a new function object: fn itself is untouched)."""
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TraceError(f"score_mod / mask_mod must be a Python function; got {type(fn).__name__}")

    def capture_of(x):
        return next((c for a, c in zip(arrays, captures) if a is x), None)
    cells = list(fn.__closure__ or ())
    glob = fn.__globals__
    replaced = {}
    for where_, key, x in _free_values(fn):
        cap = capture_of(x)
        if cap is None:
            continue
        if where_ == "cell":
            cells[key] = types.CellType(cap)
        else:
            replaced[key] = cap
    if replaced:
        glob = dict(glob)
        glob.update(replaced)
    g = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__,
                           tuple(cells) if fn.__closure__ else None)
    return g(*leading)


def trace(score_mod=None, mask_mod=None):
    """(MLIR text, [captured arrays]) of the mods; the arrays are passed as
    the text's capture arguments, in order."""
    arrays = captured_arrays([score_mod, mask_mod])
    infos = [_array_info(a) for a in arrays]
    parts = []
    for kind, fn in (("score_mod", score_mod), ("mask_mod", mask_mod)):
        if fn is None:
            continue
        tr = _Trace()
        names = ["%score", "%b", "%h", "%q_idx", "%kv_idx"] if kind == "score_mod" else \
            ["%b", "%h", "%q_idx", "%kv_idx"]
        leading = [Sym(tr, n, _F32 if n == "%score" else _INDEX) for n in names]
        captures = [_Capture(tr, f"%c{i}", e, r) for i, (e, r) in enumerate(infos)]
        try:
            out = _traced(fn, tr, leading, arrays, captures)
        except TraceError as ex:
            raise TraceError(f"{kind}: {ex}") from None
        except (TypeError, AttributeError) as ex:
            raise TraceError(f"{kind}: cannot be traced ({ex})") from None
        except IndexError as ex:
            raise TraceError(f"{kind}: only captured arrays (closure variables or module globals) "
                             f"can be indexed by traced positions ({ex})") from None
        result_ty = _F32 if kind == "score_mod" else _I1
        if kind == "score_mod":
            out = tr.to_f32(tr.lift(out, _F32))
        else:
            out = tr.lift(out, _I1)
            if out.ty != _I1:
                raise TraceError("mask_mod must return a condition (a comparison, or &, |, ~ of them)")
        args = [f"{n}: {'f32' if n == '%score' else 'index'}" for n in names]
        args += [f"%c{i}: {c.memref()}" for i, c in enumerate(captures)]
        parts.append(f"func.func @{kind}({', '.join(args)}) -> {result_ty} {{\n"
                     + "\n".join(tr.lines) + f"\n  return {out.name} : {result_ty}\n}}\n")
    return "".join(parts), arrays


_TEXTS = {}   # (score_mod, mask_mod, _scan's signature) -> traced text


def capture_paths(score_mod=None, mask_mod=None):
    """Where each array of captured_arrays() is read from (see _scan), so
    that code which cannot run captured_arrays (torch.compile's tracer)
    fetches the same arrays in the same order."""
    return tuple(path for path, _ in _scan([score_mod, mask_mod])[0])


def traced(score_mod=None, mask_mod=None):
    """trace(), its text cached per pair of functions and signature of what
    they read (_scan: the arrays themselves are read at every call)."""
    captured, sig = _scan([score_mod, mask_mod])
    key = (score_mod, mask_mod, sig)
    text = _TEXTS.get(key)
    if text is None:
        if len(_TEXTS) > 256:
            _TEXTS.clear()
        text, _ = trace(score_mod, mask_mod)
        _TEXTS[key] = text
    return text, [x for _, x in captured]
