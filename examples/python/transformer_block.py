#!/usr/bin/env python3
"""A small pre-norm transformer block (random weights) whose attention is
attn_jit.attention: grouped-query, causal, Q/K/V read in place from the
projections' (B, N, H, D) outputs.

    PYTHONPATH=python python3 examples/python/transformer_block.py [--compile] [--device cpu]

(PYTHONPATH=BUNDLE/python with the bundle.) Runs the block with attn_jit and
with torch's scaled_dot_product_attention and prints how far apart they are;
--compile also runs it under torch.compile(fullgraph=True). It runs under
torch.inference_mode() to compare forward outputs; with gradients enabled
attn_jit's backward pass serves autograd.
"""
import argparse

import torch  # before attn_jit: its custom op is then registered at import
import torch.nn as nn
import torch.nn.functional as F

import attn_jit


class Block(nn.Module):
    def __init__(self, dim=512, heads=8, kv_heads=2, use_attn_jit=True):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.use_attn_jit = use_attn_jit
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attend(self, q, k, v):
        if self.use_attn_jit:
            return attn_jit.attention(q, k, v, causal=True, enable_gqa=True)
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


def make(device, dtype, batch=2, seqlen=256, dim=512, seed=0):
    """(block on attn_jit, the same weights on SDPA, input x)."""
    torch.manual_seed(seed)
    block = Block(dim).to(device, dtype).eval()
    sdpa = Block(dim, use_attn_jit=False).to(device, dtype).eval()
    sdpa.load_state_dict(block.state_dict())
    x = torch.randn(batch, seqlen, dim, device=device, dtype=dtype)
    return block, sdpa, x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    # The CPU path (the runtime's host kernels) computes in float32.
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    block, sdpa, x = make(args.device, dtype)
    with torch.inference_mode():
        y, ref = block(x), sdpa(x)
        print(f"attn_jit {attn_jit.version()} ({attn_jit.library_path()}) on {args.device}, {dtype}")
        print(f"block output {tuple(y.shape)}; |attn_jit - sdpa| / |sdpa| = "
              f"{float((y - ref).float().norm() / ref.float().norm()):.2e}")
        if args.compile:
            yc = torch.compile(block, fullgraph=True)(x)
            print(f"torch.compile(fullgraph=True): |compiled - eager| / |eager| = "
                  f"{float((yc - y).float().norm() / y.float().norm()):.2e}")
    print(f"runtime: {attn_jit.stats()}")


if __name__ == "__main__":
    main()
