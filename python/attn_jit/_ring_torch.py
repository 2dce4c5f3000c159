"""attn_jit.ring on torch tensors: the array operations, the ring over
torch.distributed (P2P, NCCL on CUDA) and the autograd Function.

Imported by attn_jit.ring when a torch tensor is passed. The algorithm is
ring.ring_forward / ring.ring_backward, the one the NumPy tests check.
"""
import torch
import torch.distributed as dist

from . import ring
from .errors import InvalidArgumentError


class TorchOps:
    """What the ring needs of torch (NumPy's twin: ring._NumpyOps)."""

    exp, log, maximum, where = staticmethod(torch.exp), staticmethod(torch.log), \
        staticmethod(torch.maximum), staticmethod(torch.where)

    @staticmethod
    def zeros(shape, like):
        return torch.zeros(tuple(shape), dtype=torch.float32, device=like.device)

    @staticmethod
    def full(shape, value, like):
        return torch.full(tuple(shape), value, dtype=torch.float32, device=like.device)

    @staticmethod
    def cast(x, like):
        return x.to(like.dtype)

    @staticmethod
    def copy(x):
        return x.clone()

    @staticmethod
    def concat(xs, dim):
        return torch.cat(xs, dim)


OPS = TorchOps()


class DistributedRing:
    """The ring of a torch.distributed process group: exchange is one
    batch_isend_irecv (send to rank+1, receive from rank-1), asynchronous;
    wait() makes the current CUDA stream wait for it, so the compute issued
    between exchange and wait overlaps the transfer."""

    def __init__(self, group=None):
        if not dist.is_available() or not dist.is_initialized():
            raise InvalidArgumentError("ring_attention needs torch.distributed initialised "
                                       "(dist.init_process_group('nccl')), or a comm")
        self.group = group
        self.rank, self.world = dist.get_rank(group), dist.get_world_size(group)
        # P2POp takes global ranks.
        global_rank = (lambda r: r) if group is None else (lambda r: dist.get_global_rank(group, r))
        self._next = global_rank((self.rank + 1) % self.world)
        self._prev = global_rank((self.rank - 1) % self.world)

    def exchange(self, tensors):
        sent = [t.contiguous() for t in tensors]
        received = [torch.empty_like(t) for t in sent]
        ops = [dist.P2POp(dist.isend, t, self._next, self.group) for t in sent]
        ops += [dist.P2POp(dist.irecv, t, self._prev, self.group) for t in received]
        return _Pending(dist.batch_isend_irecv(ops), sent, received)


class _Pending:
    def __init__(self, requests, sent, received):
        # The sent tensors are held until the transfer is waited for.
        self.requests, self.sent, self.received = requests, sent, received

    def wait(self):
        for r in self.requests:
            r.wait()
        self.sent = None
        return self.received


class _RingAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, causal, scale, sharding):
        q, k, v = q.detach(), k.detach(), v.detach()
        o, lse = ring.ring_forward(comm, q, k, v, causal=causal, scale=scale, sharding=sharding)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.comm, ctx.causal, ctx.scale, ctx.sharding = comm, causal, scale, sharding
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, do, _grad_lse):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = ring.ring_backward(ctx.comm, q, k, v, o, lse, do, causal=ctx.causal, scale=ctx.scale,
                                        sharding=ctx.sharding)
        return dq, dk, dv, None, None, None, None


def ring_attention(q, k, v, causal, scale, group, sharding, comm, return_lse):
    """ring.ring_attention for torch tensors."""
    if comm is None:
        comm = DistributedRing(group)
    o, lse = _RingAttention.apply(q, k, v, comm, causal, scale, sharding)
    return (o, lse) if return_lse else o
