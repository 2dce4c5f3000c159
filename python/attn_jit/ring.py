"""Context parallelism: ring attention over W ranks, merged by online softmax.

    from attn_jit import ring
    q_s, k_s, v_s = (ring.shard(x, rank, world) for x in (q, k, v))   # zig-zag
    o_s = ring.ring_attention(q_s, k_s, v_s, causal=True)  # torch.distributed, NCCL
    o = ring.unshard(all_gathered_o_shards)

The sequence is split over the ranks of a ring; each keeps its query shard,
and the key/value shards travel around the ring (W steps). At each step a
rank computes attention of its queries against the visiting K/V shard with
attn_jit's forward, which returns the step's (O_step, LSE_step), and folds it
into its running (O, LSE) by `merge`: the seed's online-softmax rule with a
partial result (O, LSE) read as the seed's (m, l, u) = (LSE, 1, O). The next
shard is sent and received while the current one is computed.

Causal attention per pair of sequence chunks: the diagonal pair is causal
(equal, aligned chunks), pairs below it unmasked, pairs above it skipped
(`step_plan`). Zig-zag sharding cuts the sequence into 2W chunks and gives
rank r chunks r and 2W-1-r, so every rank does the same causal work; the
contiguous sharding (rank r: chunk r of W) serves non-causal attention (with
causal=True it is exact too, but rank W-1 does 2W-1 times rank 0's work).

Backward: each step's attn_jit backward of (Q_local, K_visit, V_visit,
O_final, dO, LSE_final) gives exact contributions to dQ_local and to the
visiting shard's dK, dV (the probabilities are recomputed against the final
LSE, the whole row's normaliser). dQ stays local; dK and dV accumulate as
they travel with K and V and arrive home after W steps.

One algorithm for NumPy arrays and torch tensors (`ring_forward`,
`ring_backward`); a communicator gives it the ring:
  comm.rank, comm.world
  comm.exchange(arrays) -> pending: sends the arrays to rank+1 and receives
      the same shapes from rank-1; pending.wait() returns the received ones.
      Every rank calls exchange in the same order; an array sent is not
      modified until its exchange is waited for.
`ring_attention` (torch tensors, autograd) uses torch.distributed's P2P calls
(batch_isend_irecv; NCCL on CUDA) in attn_jit._ring_torch; `SimulatedRing`
runs the W ranks as threads of one process, which is how the tests check the
algorithm on the CPU (NumPy) and on one GPU. Neither torch nor NumPy is
imported before an array of theirs is passed.
"""
import importlib
import math
import threading

from .errors import InvalidArgumentError

SHARDINGS = ("zigzag", "contiguous")

# How long a simulated rank waits for its neighbour's message before it
# gives up (a wrong exchange sequence would otherwise hang the test).
SIMULATED_WAIT_S = 300.0


# --- sharding ----------------------------------------------------------------


def _chunk_count(world, sharding):
    if sharding not in SHARDINGS:
        raise InvalidArgumentError(f"sharding = {sharding!r}: one of {', '.join(SHARDINGS)}")
    return 2 * world if sharding == "zigzag" else world


def chunks_of(rank, world, sharding="zigzag"):
    """The sequence chunks that rank holds, in order: (rank, 2W-1-rank) of 2W
    chunks (zig-zag) or (rank,) of W (contiguous)."""
    _chunk_count(world, sharding)
    return (rank, 2 * world - 1 - rank) if sharding == "zigzag" else (rank,)


def _along(dim, piece):
    return (slice(None),) * dim + (piece,)


def shard(x, rank, world, sharding="zigzag", dim=2):
    """rank's shard of the full-sequence array x (sequence along dim), NumPy
    array or torch tensor: its chunks concatenated in sequence order."""
    count = _chunk_count(world, sharding)
    n = x.shape[dim]
    if n % count:
        raise InvalidArgumentError(f"a sequence of {n} cannot be cut into {count} equal chunks "
                                   f"({sharding} sharding over {world} ranks)")
    c = n // count
    return _ops(x).concat([x[_along(dim, slice(i * c, (i + 1) * c))]
                           for i in chunks_of(rank, world, sharding)], dim)


def unshard(shards, sharding="zigzag", dim=2):
    """The full sequence from every rank's shard (shards[r] of rank r)."""
    world = len(shards)
    per_rank = len(chunks_of(0, world, sharding))
    placed = {}
    for rank, x in enumerate(shards):
        c = x.shape[dim] // per_rank
        for i, chunk in enumerate(chunks_of(rank, world, sharding)):
            placed[chunk] = x[_along(dim, slice(i * c, (i + 1) * c))]
    return _ops(shards[0]).concat([placed[i] for i in sorted(placed)], dim)


def step_plan(rank, source, world, n, causal, sharding="zigzag"):
    """The attention calls of `rank` against the K/V shard of rank `source`:
    [(query rows, key rows, causal)] as slices of the local shards (length
    n). Per pair of chunks (a: query, b: key) the causal mask is a == b:
    causal, b < a: unmasked, b > a: skipped; a shard's chunks increase along
    it, so its own pair is one causal call on the whole shard."""
    whole = slice(0, n)
    if not causal:
        return [(whole, whole, False)]
    if source == rank:
        return [(whole, whole, True)]
    if sharding == "contiguous":
        return [(whole, whole, False)] if source < rank else []
    # Zig-zag: source's chunks s < W <= 2W-1-s, and this rank's r, 2W-1-r.
    # s < r: both query chunks see all of chunk s, none of 2W-1-s > 2W-1-r.
    # s > r: query chunk r sees neither; chunk 2W-1-r sees both.
    first, second = slice(0, n // 2), slice(n // 2, n)
    return [(whole, first, False)] if source < rank else [(second, whole, False)]


# --- the merge ---------------------------------------------------------------


def merge(o, lse, o_step, lse_step):
    """(O, LSE) of a row set from two partial results over disjoint keys: the
    seed's online-softmax rule, with (O, LSE) as the seed's (m, l, u) =
    (LSE, 1, O):
        m_new = max(m, m_b)
        l_new = exp(m - m_new) * 1 + exp(m_b - m_new) * 1
        O_new = (exp(m - m_new) * O + exp(m_b - m_new) * O_b) / l_new
        LSE_new = m_new + log(l_new)
    A row without keys in a part (LSE = -inf) gets weight 0 from it; a row
    without keys in both stays O = 0, LSE = -inf (never NaN). o, lse as
    float32 (B, H, N, D) and (B, H, N); o_step may be 16-bit. Returns new
    float32 arrays."""
    ops = _ops(lse)
    m = ops.maximum(lse, lse_step)
    ref = ops.where(m == -math.inf, 0.0, m)          # a finite m_new for every row
    w, w_step = ops.exp(lse - ref), ops.exp(lse_step - ref)   # the larger one is 1
    seen = w + w_step                                 # l_new: in [1, 2], or 0 without keys
    safe = ops.where(seen > 0, seen, 1.0)
    o_new = (w[..., None] * o + w_step[..., None] * o_step) / safe[..., None]
    return o_new, ops.where(seen > 0, ref + ops.log(safe), -math.inf)


# --- the ring ----------------------------------------------------------------


def _check_shards(comm, q, k, v, sharding):
    _chunk_count(comm.world, sharding)
    if len(q.shape) != 4 or len(k.shape) != 4:
        raise InvalidArgumentError("ring attention takes 4-D (B, H, N, D) shards")
    if k.shape[2] != q.shape[2]:
        raise InvalidArgumentError(f"q's shard has {q.shape[2]} positions, k's {k.shape[2]}: shards of one "
                                   "sequence, cut alike (ring.shard)")
    if sharding == "zigzag" and q.shape[2] % 2:
        raise InvalidArgumentError(f"a zig-zag shard holds two equal chunks; this one has {q.shape[2]} "
                                   "positions")
    if not 0 <= comm.rank < comm.world:
        raise InvalidArgumentError(f"rank {comm.rank} of a ring of {comm.world}")


def ring_forward(comm, q, k, v, *, causal=False, scale=None, sharding="zigzag"):
    """This rank's (O, LSE) of attention over the whole ring's sequence: q, k,
    v are its shards (B, H, N, D), k and v with Hkv heads under GQA. O has
    q's dtype, LSE is float32 (B, H, N). Every rank calls it together."""
    from . import attention
    ops = _ops(q)
    _check_shards(comm, q, k, v, sharding)
    gqa = q.shape[1] != k.shape[1]
    n = q.shape[2]
    o, lse = ops.zeros(q.shape, q), ops.full(q.shape[:3], -math.inf, q)
    for step in range(comm.world):
        source = (comm.rank - step) % comm.world
        # The next shard travels while this one is computed.
        incoming = comm.exchange((k, v)) if step + 1 < comm.world else None
        for rows, keys, diagonal in step_plan(comm.rank, source, comm.world, n, causal, sharding):
            o_step, lse_step = attention(q[:, :, rows], k[:, :, keys], v[:, :, keys], causal=diagonal,
                                         scale=scale, enable_gqa=gqa, return_lse=True)
            o[:, :, rows], lse[:, :, rows] = merge(o[:, :, rows], lse[:, :, rows], o_step, lse_step)
        if incoming is not None:
            k, v = incoming.wait()
    return ops.cast(o, q), lse


def ring_backward(comm, q, k, v, o, lse, do, *, causal=False, scale=None, sharding="zigzag"):
    """This rank's (dQ, dK, dV) for dO, given ring_forward's O and LSE: dQ of
    its queries, dK and dV of its own K/V shard (which collected every
    rank's contribution on its way around the ring). Typed as q, k, v."""
    from . import attention_backward
    ops = _ops(q)
    _check_shards(comm, q, k, v, sharding)
    gqa = q.shape[1] != k.shape[1]
    n = q.shape[2]
    dq = ops.zeros(q.shape, q)
    travelling = None   # the exchange of the dK/dV accumulated so far
    for step in range(comm.world):
        source = (comm.rank - step) % comm.world
        incoming = comm.exchange((k, v)) if step + 1 < comm.world else None
        dk, dv = ops.zeros(k.shape, k), ops.zeros(v.shape, v)
        for rows, keys, diagonal in step_plan(comm.rank, source, comm.world, n, causal, sharding):
            dq_s, dk_s, dv_s = attention_backward(
                q[:, :, rows], k[:, :, keys], v[:, :, keys], o[:, :, rows], lse[:, :, rows],
                do[:, :, rows], causal=diagonal, scale=scale, enable_gqa=gqa)
            dq[:, :, rows] += dq_s
            dk[:, :, keys] += dk_s
            dv[:, :, keys] += dv_s
        if travelling is not None:   # what the earlier ranks added to this shard's gradients
            dk_in, dv_in = travelling.wait()
            dk += dk_in
            dv += dv_in
        # To the rank that holds this shard next; after the last step, home.
        travelling = comm.exchange((dk, dv)) if comm.world > 1 else None
        if incoming is not None:
            k, v = incoming.wait()
    if travelling is not None:
        dk, dv = travelling.wait()
    return ops.cast(dq, q), ops.cast(dk, k), ops.cast(dv, v)


def ring_attention(q, k, v, *, causal=False, scale=None, group=None, sharding="zigzag", comm=None,
                   return_lse=False):
    """This rank's O (and with return_lse=True its float32 LSE) of attention
    over the sequence whose shards the ranks of `group` hold (torch tensors
    (B, H, N, D) on this rank's current CUDA device; shard() cuts them),
    with autograd: the backward sends dK/dV around the ring. GQA: k and v
    with Hkv heads dividing H. scale: None for 1/sqrt(D).

    The ring is torch.distributed's `group` (None: the default group; the
    NCCL backend for CUDA tensors, torch.cuda.set_device called), or `comm`,
    a communicator (SimulatedRing.rank(r)). Every rank calls it together,
    with shards of one sharding and equal shapes."""
    if not type(q).__module__.startswith("torch"):
        raise TypeError("ring_attention takes torch tensors; for NumPy arrays call ring_forward and "
                        "ring_backward with a communicator")
    _ring_torch = importlib.import_module(__name__.rpartition(".")[0] + "._ring_torch")
    return _ring_torch.ring_attention(q, k, v, causal, scale, group, sharding, comm, return_lse)


# --- a ring in one process ---------------------------------------------------


class SimulatedRing:
    """W ranks of one process, one thread each (run): exchange copies the
    arrays into rank+1's mailbox, as a transfer would, and wait takes the
    message of the same exchange number from rank-1."""

    def __init__(self, world):
        if world < 1:
            raise InvalidArgumentError(f"a ring of {world} ranks")
        self.world = world
        self._ready = threading.Condition()
        self._mail = [{} for _ in range(world)]   # rank -> {exchange number: arrays}
        self._failed = False

    def rank(self, rank):
        """The communicator of one rank."""
        return _SimulatedRank(self, rank)

    def run(self, fn):
        """[fn(communicator of rank r) for r in range(world)], each rank in its
        own thread; an exception of a rank is raised here (the others stop
        waiting for it)."""
        results, errors = [None] * self.world, [None] * self.world

        def body(r):
            try:
                results[r] = fn(self.rank(r))
            except BaseException as ex:  # noqa: B902 -- handed to the caller below
                errors[r] = ex
                with self._ready:
                    self._failed = True
                    self._ready.notify_all()

        threads = [threading.Thread(target=body, args=(r,), name=f"ring rank {r}") for r in range(self.world)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for ex in errors:
            if ex is not None and not isinstance(ex, _NeighbourFailed):
                raise ex
        for ex in errors:
            if ex is not None:
                raise ex
        return results


class _NeighbourFailed(RuntimeError):
    pass


class _SimulatedRank:
    def __init__(self, ring, rank):
        self.ring, self.rank, self.world = ring, rank, ring.world
        self._sent = 0

    def exchange(self, arrays):
        ring, number = self.ring, self._sent
        self._sent += 1
        copies = [_ops(x).copy(x) for x in arrays]
        with ring._ready:
            ring._mail[(self.rank + 1) % self.world][number] = copies
            ring._ready.notify_all()
        return _SimulatedPending(ring, ring._mail[self.rank], number)


class _SimulatedPending:
    def __init__(self, ring, mailbox, number):
        self.ring, self.mailbox, self.number = ring, mailbox, number

    def wait(self):
        ring = self.ring
        with ring._ready:
            if not ring._ready.wait_for(lambda: self.number in self.mailbox or ring._failed,
                                        SIMULATED_WAIT_S):
                raise RuntimeError(f"simulated ring: exchange #{self.number} never arrived")
            if self.number not in self.mailbox:
                raise _NeighbourFailed("simulated ring: another rank failed")
            return self.mailbox.pop(self.number)


# --- array operations of NumPy and torch ---------------------------------------


class _NumpyOps:
    """What the ring needs of NumPy (torch's twin: _ring_torch.TorchOps)."""

    def __init__(self, np):
        self.np = np
        self.exp, self.log, self.maximum, self.where = np.exp, np.log, np.maximum, np.where

    def zeros(self, shape, like):
        return self.np.zeros(shape, self.np.float32)

    def full(self, shape, value, like):
        return self.np.full(shape, value, self.np.float32)

    def cast(self, x, like):
        return x.astype(like.dtype)

    def copy(self, x):
        return self.np.array(x, copy=True)

    def concat(self, xs, dim):
        return self.np.concatenate(xs, axis=dim)


_numpy_ops = None


def _ops(x):
    """The array operations of x's kind (NumPy or torch)."""
    global _numpy_ops
    if type(x).__module__.startswith("torch"):
        return importlib.import_module(__name__.rpartition(".")[0] + "._ring_torch").OPS
    if _numpy_ops is None:
        _numpy_ops = _NumpyOps(importlib.import_module("numpy"))
    if not isinstance(x, _numpy_ops.np.ndarray):
        raise TypeError(f"attn_jit.ring takes NumPy arrays or torch tensors; got {type(x).__name__}")
    return _numpy_ops
