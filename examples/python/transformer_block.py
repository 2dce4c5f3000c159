#!/usr/bin/env python3
"""A small pre-norm transformer block (random weights) whose attention is
attn_jit.attention: grouped-query, causal, Q/K/V read in place from the
projections' (B, N, H, D) outputs; with --score-mod, also a Python score_mod
(ALiBi with a soft cap, reading a tensor of slopes) traced into the kernel.

    PYTHONPATH=python python3 examples/python/transformer_block.py [--compile] [--score-mod] [--device cpu]

(PYTHONPATH=BUNDLE/python with the bundle.) Runs the block with attn_jit and
with plain PyTorch (torch's scaled_dot_product_attention, or with
--score-mod the same score_mod applied to the explicit score matrix) and
prints how far apart they are; --compile also runs it under
torch.compile(fullgraph=True). It runs under torch.inference_mode() to
compare forward outputs; with gradients enabled attn_jit's backward pass
serves autograd.
"""
import argparse
import math

import torch  # before attn_jit: its custom op is then registered at import
import torch.nn as nn
import torch.nn.functional as F

import attn_jit


def alibi_softcap(slopes, cap=30.0):
    """A FlexAttention-style score_mod: ALiBi (slopes: float32 (H,), a tensor
    the traced code reads, so new values never recompile) under a soft cap.
    Made by a factory, before any compiled code runs: torch.compile needs
    the function to exist outside the code it compiles."""
    def score_mod(score, b, h, q_idx, kv_idx):
        return cap * attn_jit.tanh((score + slopes[h] * (kv_idx - q_idx)) / cap)
    return score_mod


def explicit_attention(q, k, v, score_mod):
    """Causal attention with the score matrix formed: the same score_mod,
    called on tensors (attn_jit's tanh computes with torch there)."""
    group = q.shape[1] // k.shape[1]
    k, v = (x.repeat_interleave(group, 1).float() for x in (k, v))
    s = q.float() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    n = q.shape[2]
    h = torch.arange(q.shape[1], device=q.device)[:, None, None]
    i, j = torch.arange(n, device=q.device)[:, None], torch.arange(n, device=q.device)[None, :]
    s = score_mod(s, 0, h, i, j).masked_fill(j > i, -math.inf)
    return (torch.softmax(s, -1) @ v).to(q.dtype)


class Block(nn.Module):
    def __init__(self, dim=512, heads=8, kv_heads=2, use_attn_jit=True, score_mod=None):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.use_attn_jit, self.score_mod = use_attn_jit, score_mod
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attend(self, q, k, v):
        if self.use_attn_jit:
            return attn_jit.attention(q, k, v, causal=True, enable_gqa=True, score_mod=self.score_mod)
        if self.score_mod is not None:
            return explicit_attention(q, k, v, self.score_mod)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    def forward(self, x):  # x: (B, N, dim)
        B, N, _ = x.shape
        h = self.norm1(x)
        # (B, N, H, D) projections seen as (B, H, N, D): strides, no copies.
        q = self.q(h).view(B, N, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(h).view(B, N, 2, self.kv_heads, self.head_dim).unbind(2)
        o = self.attend(q, k.transpose(1, 2), v.transpose(1, 2))
        # O comes back in Q's (B, N, H, D) memory order: this reshape is free.
        x = x + self.out(o.transpose(1, 2).reshape(B, N, -1))
        return x + self.mlp(self.norm2(x))


def make(device, dtype, batch=2, seqlen=256, dim=512, seed=0, with_score_mod=False):
    """(block on attn_jit, the same weights on plain PyTorch, input x)."""
    torch.manual_seed(seed)
    heads = 8
    score_mod = None
    if with_score_mod:
        slopes = torch.tensor([2.0 ** (-8 * (h + 1) / heads) for h in range(heads)], device=device)
        score_mod = alibi_softcap(slopes)
    block = Block(dim, heads, score_mod=score_mod).to(device, dtype).eval()
    ref = Block(dim, heads, use_attn_jit=False, score_mod=score_mod).to(device, dtype).eval()
    ref.load_state_dict(block.state_dict())
    x = torch.randn(batch, seqlen, dim, device=device, dtype=dtype)
    return block, ref, x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--score-mod", action="store_true", help="ALiBi with a soft cap, as a Python score_mod")
    args = ap.parse_args()
    # The CPU path (the runtime's host kernels) computes in float32.
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    block, ref_block, x = make(args.device, dtype, with_score_mod=args.score_mod)
    with torch.inference_mode():
        y, ref = block(x), ref_block(x)
        print(f"attn_jit {attn_jit.version()} ({attn_jit.library_path()}) on {args.device}, {dtype}")
        print(f"block output {tuple(y.shape)}; |attn_jit - plain PyTorch| / |plain PyTorch| = "
              f"{float((y - ref).float().norm() / ref.float().norm()):.2e}")
        if args.compile:
            yc = torch.compile(block, fullgraph=True)(x)
            print(f"torch.compile(fullgraph=True): |compiled - eager| / |eager| = "
                  f"{float((yc - y).float().norm() / y.float().norm()):.2e}")
    print(f"runtime: {attn_jit.stats()}")


if __name__ == "__main__":
    main()
