"""attn_jit.ring (ring attention) on NumPy arrays: W ranks simulated in one
process (ring.SimulatedRing, one thread a rank), attn_jit's host path.

Run: PYTHONPATH=python:tests/python python3 -m unittest test_ring_host -v
The merge on the seed's worked example (50/3) and on rows without keys; the
sharding (zig-zag and contiguous) and the per-step plan against the causal
mask; then the sharded forward (O, LSE) and backward (dQ, dK, dV) against
unsharded attn_jit and a float64 reference, for W = 1..4, causal or not,
both shardings, GQA. Fresh random inputs each run (ATTN_TEST_SEED=S replays,
test_numpy_host's seed).
"""
import itertools
import math
import sys
import unittest

import numpy as np

import attn_jit
from attn_jit import ring
from test_numpy_host import SEED, TOL, reference

B, D = 2, 16
N = 96   # divisible by 2W for W = 1..4
# Not the default 1/sqrt(D), so that a scale the ring failed to pass on shows;
# one scale for all (it is compiled into the kernels: each costs compiles).
SCALE = 0.5
WORLDS = (1, 2, 3, 4)
# Relative Frobenius error bound (float32's of docs/testing.md) for every
# output, sharded vs unsharded attn_jit (the same sums in another order) and
# vs float64; measured: below 6e-7 for both.
TOL_F32 = TOL[np.float32]


def rel_err(got, want):
    want = np.asarray(want, np.float64)
    den = np.linalg.norm(want)
    return np.linalg.norm(np.asarray(got, np.float64) - want) / (den if den > 0 else 1)


def reference_backward(q, k, v, do, causal, scale):
    """float64 (dQ, dK, dV) of softmax(scale q kᵀ + mask) v for dO; dK, dV
    summed over each K/V head's query heads (GQA)."""
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    g = q.shape[1] // k.shape[1]
    kr, vr = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ kr.swapaxes(-1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ vr
    dp = do @ vr.swapaxes(-1, -2)
    ds = p * (dp - (do * o).sum(-1, keepdims=True))
    dq = ds @ kr * scale
    dk = (ds.swapaxes(-1, -2) @ q * scale).reshape(k.shape[0], k.shape[1], g, *k.shape[2:]).sum(2)
    dv = (p.swapaxes(-1, -2) @ do).reshape(v.shape[0], v.shape[1], g, *v.shape[2:]).sum(2)
    return dq, dk, dv


def run_ring(world, sharding, causal, q, k, v, do, scale):
    """The sharded forward and backward over a simulated ring, unsharded:
    (O, LSE, dQ, dK, dV)."""
    shards = [[ring.shard(x, r, world, sharding) for x in (q, k, v, do)] for r in range(world)]

    def rank(comm):
        qs, ks, vs, dos = shards[comm.rank]
        o, lse = ring.ring_forward(comm, qs, ks, vs, causal=causal, scale=scale, sharding=sharding)
        grads = ring.ring_backward(comm, qs, ks, vs, o, lse, dos, causal=causal, scale=scale,
                                   sharding=sharding)
        return (o, lse) + grads

    per_rank = ring.SimulatedRing(world).run(rank)
    return [ring.unshard([out[i] for out in per_rank], sharding) for i in range(5)]


class MergeTest(unittest.TestCase):
    def test_seed_example_by_hand(self):
        """One query, scores [0, ln 2], values [10, 20], one key a tile: the
        seed's numbers (weights 1/3, 2/3; output 50/3; the separately
        normalised outputs would add to 30)."""
        o1, lse1 = np.full((1, 1, 1, 1), 10, np.float32), np.zeros((1, 1, 1), np.float32)
        o2, lse2 = np.full((1, 1, 1, 1), 20, np.float32), np.full((1, 1, 1), math.log(2), np.float32)
        o, lse = ring.merge(o1, lse1, o2, lse2)
        self.assertAlmostEqual(float(o[0, 0, 0, 0]), 50 / 3, places=5)
        self.assertAlmostEqual(float(lse[0, 0, 0]), math.log(3), places=6)   # l_new = 1.5 at m = ln 2
        self.assertNotAlmostEqual(float((o1 + o2)[0, 0, 0, 0]), 50 / 3, places=1)   # 30: wrong
        o_rev, lse_rev = ring.merge(o2, lse2, o1, lse1)   # order does not matter
        self.assertAlmostEqual(float(o_rev[0, 0, 0, 0]), 50 / 3, places=5)
        self.assertAlmostEqual(float(lse_rev[0, 0, 0]), math.log(3), places=6)

    def test_seed_example_through_attn_jit(self):
        """The same example with attn_jit computing each key's (O, LSE): q =
        e0, k = (0, 2 ln 2 e0), scale 1/2, v rows all 10 and all 20."""
        q = np.zeros((1, 1, 1, D), np.float32)
        q[..., 0] = 1
        k = np.zeros((1, 1, 2, D), np.float32)
        k[0, 0, 1, 0] = 2 * math.log(2)
        v = np.stack([np.full(D, 10, np.float32), np.full(D, 20, np.float32)])[None, None]
        o1, lse1 = attn_jit.attention(q, k[:, :, :1], v[:, :, :1], scale=SCALE, return_lse=True)
        o2, lse2 = attn_jit.attention(q, k[:, :, 1:], v[:, :, 1:], scale=SCALE, return_lse=True)
        self.assertAlmostEqual(float(lse2[0, 0, 0]), math.log(2), places=6)
        o, lse = ring.merge(o1.astype(np.float32), lse1, o2, lse2)
        np.testing.assert_allclose(o, np.full_like(o, 50 / 3), rtol=1e-6)
        whole, whole_lse = attn_jit.attention(q, k, v, scale=SCALE, return_lse=True)
        np.testing.assert_allclose(o, whole, rtol=1e-6)
        np.testing.assert_allclose(lse, whole_lse, rtol=1e-6)

    def test_rows_without_keys(self):
        """A part whose row saw no key (LSE = -inf, O = 0) adds nothing; a row
        without keys in both stays O = 0, LSE = -inf; no NaN, no floating
        point warning (errors here)."""
        rng = np.random.default_rng(SEED)
        o = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
        lse = rng.standard_normal((1, 2, 3)).astype(np.float32)
        empty_o, empty_lse = np.zeros_like(o), np.full_like(lse, -np.inf)
        with np.errstate(all="raise"):
            for a, b in (((empty_o, empty_lse), (o, lse)), ((o, lse), (empty_o, empty_lse))):
                got_o, got_lse = ring.merge(*a, *b)
                np.testing.assert_allclose(got_o, o, rtol=1e-6)
                np.testing.assert_allclose(got_lse, lse, rtol=1e-6)
            got_o, got_lse = ring.merge(empty_o, empty_lse, empty_o, empty_lse)
            self.assertTrue((got_o == 0).all())
            self.assertTrue(np.isneginf(got_lse).all())
            # Mixed: row 0 of the step sees keys, row 1 does not.
            step_lse = lse.copy()
            step_lse[:, :, 1] = -np.inf
            step_o = np.where(np.isinf(step_lse)[..., None], 0, o).astype(np.float32)
            got_o, got_lse = ring.merge(empty_o, empty_lse, step_o, step_lse)
            np.testing.assert_array_equal(np.isneginf(got_lse), np.isinf(step_lse))
            self.assertFalse(np.isnan(got_o).any())


class ShardingTest(unittest.TestCase):
    def test_zigzag_chunks(self):
        self.assertEqual([ring.chunks_of(r, 4) for r in range(4)], [(0, 7), (1, 6), (2, 5), (3, 4)])
        self.assertEqual([ring.chunks_of(r, 3, "contiguous") for r in range(3)], [(0,), (1,), (2,)])
        x = np.arange(16).reshape(1, 1, 16, 1)
        self.assertEqual(ring.shard(x, 1, 4).ravel().tolist(), [2, 3, 12, 13])

    def test_shard_unshard_round_trip(self):
        x = np.arange(2 * 3 * 24 * 2).reshape(2, 3, 24, 2)
        for world, sharding in itertools.product(WORLDS, ring.SHARDINGS):
            shards = [ring.shard(x, r, world, sharding) for r in range(world)]
            np.testing.assert_array_equal(ring.unshard(shards, sharding), x)

    def test_plan_covers_the_mask_once(self):
        """Each step's calls, mapped to global positions, cover every (query,
        key) pair the mask shows exactly once and no other; with zig-zag
        every rank computes as many causal pairs."""
        n_total = 48
        positions = np.arange(n_total).reshape(1, 1, n_total, 1)
        for world, sharding, causal in itertools.product(WORLDS, ring.SHARDINGS, (False, True)):
            covered = np.zeros((n_total, n_total), int)
            work = []
            for r in range(world):
                qpos = ring.shard(positions, r, world, sharding).ravel()
                n = len(qpos)
                pairs = 0
                for source in range(world):
                    kpos = ring.shard(positions, source, world, sharding).ravel()
                    for rows, keys, diag in ring.step_plan(r, source, world, n, causal, sharding):
                        qi, kj = np.arange(n)[rows], np.arange(n)[keys]
                        seen = (kj[None, :] <= qi[:, None]) if diag else np.ones((len(qi), len(kj)), bool)
                        np.add.at(covered, (np.repeat(qpos[qi], len(kj)), np.tile(kpos[kj], len(qi))),
                                  seen.ravel().astype(int))
                        pairs += int(seen.sum())
                work.append(pairs)
            want = np.tril(np.ones_like(covered)) if causal else np.ones_like(covered)
            with self.subTest(world=world, sharding=sharding, causal=causal):
                np.testing.assert_array_equal(covered, want)
                if sharding == "zigzag":
                    self.assertEqual(len(set(work)), 1, work)

    def test_bad_shards(self):
        comm = ring.SimulatedRing(2).rank(0)
        q = np.zeros((1, 2, 6, D), np.float32)
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "one of zigzag, contiguous"):
            ring.ring_forward(comm, q, q, q, sharding="striped")
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "positions, k's 4"):
            ring.ring_forward(comm, q, q[:, :, :4], q[:, :, :4])
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "two equal chunks"):
            ring.ring_forward(comm, q[:, :, :5], q[:, :, :5], q[:, :, :5])
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "cut into 8 equal chunks"):
            ring.shard(q, 0, 4)
        with self.assertRaisesRegex(TypeError, "torch tensors"):
            ring.ring_attention(q, q, q)

    def test_a_failing_rank_is_reported(self):
        """A rank's exception reaches the caller; its neighbours stop waiting."""
        def rank(comm):
            if comm.rank == 1:
                raise ValueError("rank 1 broke")
            return comm.exchange([np.zeros(1)]).wait()
        with self.assertRaisesRegex(ValueError, "rank 1 broke"):
            ring.SimulatedRing(3).run(rank)


class RingTest(unittest.TestCase):
    def test_sharded_equals_unsharded(self):
        rng = np.random.default_rng(SEED)
        for heads, kv_heads in ((4, 4), (4, 2)):
            q = rng.standard_normal((B, heads, N, D)).astype(np.float32)
            k, v = (rng.standard_normal((B, kv_heads, N, D)).astype(np.float32) for _ in range(2))
            do = rng.standard_normal(q.shape).astype(np.float32)
            gqa = heads != kv_heads
            for causal in (False, True):
                o1, lse1 = attn_jit.attention(q, k, v, causal=causal, scale=SCALE, enable_gqa=gqa,
                                              return_lse=True)
                single = (o1, lse1) + attn_jit.attention_backward(q, k, v, o1, lse1, do, causal=causal,
                                                                  scale=SCALE, enable_gqa=gqa)
                ref = reference(q, k, v, causal, SCALE) + reference_backward(q, k, v, do, causal, SCALE)
                for name, got, want in zip(("o", "lse", "dq", "dk", "dv"), single, ref):
                    self.assertLessEqual(rel_err(got, want), TOL_F32, f"unsharded {name} seed {SEED}")
                for world, sharding in itertools.product(WORLDS, ring.SHARDINGS):
                    got = run_ring(world, sharding, causal, q, k, v, do, SCALE)
                    with self.subTest(world=world, sharding=sharding, causal=causal, gqa=gqa):
                        for name, g, s, r in zip(("o", "lse", "dq", "dk", "dv"), got, single, ref):
                            self.assertEqual((g.shape, g.dtype), (s.shape, s.dtype), name)
                            self.assertLessEqual(rel_err(g, s), TOL_F32, f"{name} seed {SEED}")
                            self.assertLessEqual(rel_err(g, r), TOL_F32, f"{name} vs float64 seed {SEED}")

    def test_torch_is_not_imported(self):
        """NumPy arrays never import torch (nor attn_jit._ring_torch): an
        import of torch while the ring runs fails the test."""
        if "torch" in sys.modules:
            self.skipTest("torch was imported before")

        class NoTorch:
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name.split(".")[0] == "torch":
                    raise AssertionError(f"import {name}")

        sys.meta_path.insert(0, NoTorch)
        try:
            run_ring(2, "zigzag", True, *(np.ones((1, 1, 8, D), np.float32) for _ in range(4)), SCALE)
        finally:
            sys.meta_path.remove(NoTorch)
        self.assertNotIn("attn_jit._ring_torch", sys.modules)


class AttentionBackwardTest(unittest.TestCase):
    def test_checks_its_operands(self):
        q = np.zeros((1, 2, 8, D), np.float32)
        lse = np.zeros((1, 2, 8), np.float32)
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "lse is float32 \\(1, 2, 7\\)"):
            attn_jit.attention_backward(q, q, q, q, lse[:, :, :7], q)
        with self.assertRaisesRegex(attn_jit.InvalidArgumentError, "do is float32 \\(1, 2, 4, 16\\)"):
            attn_jit.attention_backward(q, q, q, q, lse, q[:, :, :4])
        with self.assertRaisesRegex(TypeError, "do is a list"):
            attn_jit.attention_backward(q, q, q, q, lse, [])

    def test_atomic_form_matches_float64(self):
        """set_deterministic(False): dQ added with atomics by the host's
        threads, within float32's bound of float64; dK, dV bitwise the
        deterministic form's."""
        rng = np.random.default_rng(SEED)
        q = rng.standard_normal((B, 4, 77, D)).astype(np.float32)
        k, v = (rng.standard_normal((B, 2, 61, D)).astype(np.float32) for _ in range(2))
        do = rng.standard_normal(q.shape).astype(np.float32)
        o, lse = attn_jit.attention(q, k, v, causal=True, scale=SCALE, enable_gqa=True, return_lse=True)
        fixed = attn_jit.attention_backward(q, k, v, o, lse, do, causal=True, scale=SCALE, enable_gqa=True)
        attn_jit.set_deterministic(False)
        try:
            atomic = attn_jit.attention_backward(q, k, v, o, lse, do, causal=True, scale=SCALE,
                                                 enable_gqa=True)
        finally:
            attn_jit.set_deterministic(True)
        for name, got, want in zip(("dq", "dk", "dv"), atomic,
                                   reference_backward(q, k, v, do, True, SCALE)):
            self.assertLessEqual(rel_err(got, want), TOL_F32, f"{name} seed {SEED}")
        np.testing.assert_array_equal(atomic[1], fixed[1])
        np.testing.assert_array_equal(atomic[2], fixed[2])


if __name__ == "__main__":
    unittest.main()
