#!/usr/bin/env python3
"""A variant written in Python: relative-position bias read from a captured
table plus a sliding window, traced by attn_jit into its IR and compiled on
the first call (FlexAttention's score_mod / mask_mod, without torch).

    PYTHONPATH=python python3 examples/python/score_mod.py

NumPy arrays run on the CPU path; torch tensors on their device (the same
functions, with autograd).
"""
import numpy as np

import attn_jit

B, H, N, D, WINDOW, BUCKETS = 1, 4, 256, 64, 64, 128
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((B, H, N, D)).astype(np.float32) for _ in range(3))
# Captured: read by position inside the mod; changing its values never
# recompiles.
table = (0.1 * rng.standard_normal((H, BUCKETS))).astype(np.float32)


def relative_bias(score, b, h, q_idx, kv_idx):
    return score + table[h, attn_jit.minimum(q_idx - kv_idx, BUCKETS - 1)]


def sliding_window(b, h, q_idx, kv_idx):
    return q_idx - kv_idx < WINDOW


o = attn_jit.attention(q, k, v, causal=True, score_mod=relative_bias, mask_mod=sliding_window)
print("O", o.shape, "compiles so far:", attn_jit.stats()["compiles"])
table *= 2   # new values: the next call reuses the compiled kernel
o2 = attn_jit.attention(q, k, v, causal=True, score_mod=relative_bias, mask_mod=sliding_window)
print("after a new table: compiles", attn_jit.stats()["compiles"], "max |O2 - O|",
      float(np.abs(o2 - o).max()))
