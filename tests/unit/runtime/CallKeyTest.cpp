//===- CallKeyTest.cpp - What a call asks for, as a fixed-size key --------===//

#include "CallKey.h"

#include <gtest/gtest.h>

#include <functional>
#include <utility>
#include <vector>

using namespace attn;
using namespace attn::rt;

namespace {

attn_fwd_args baseArgs() {
  attn_fwd_args args{};
  args.batch = 2, args.heads = 8, args.seqlen_q = args.seqlen_k = 100;
  args.head_dim = 128;
  args.dtype = ATTN_DTYPE_BF16;
  args.mask = ATTN_MASK_NONE;
  args.device = ATTN_DEVICE_CUDA;
  return args;
}

const char userModsA = 'a', userModsB = 'b';

CallKey keyOf(const attn_fwd_args &args, Target target = Target::Cuda,
              uint64_t context = 1, const void *mods = nullptr,
              bool backward = false, bool varlen = false,
              int64_t pageSize = 0, bool tma = false,
              bool deterministic = true) {
  return CallKey::make(target, context, args, mods, backward, varlen,
                       pageSize, tma, deterministic);
}

TEST(CallKeyTest, EqualCallsGiveEqualKeysAndHashes) {
  CallKey a = keyOf(baseArgs()), b = keyOf(baseArgs());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash, b.hash);
}

TEST(CallKeyTest, LaunchArgumentsAreNotPartOfTheKey) {
  CallKey base = keyOf(baseArgs());
  std::vector<std::function<void(attn_fwd_args &)>> launchOnly = {
      [](attn_fwd_args &a) { a.batch = 7; },
      [](attn_fwd_args &a) { a.heads = 16; },
      [](attn_fwd_args &a) { a.kv_heads = 2; },
      [](attn_fwd_args &a) { a.seqlen_q = 1; },
      [](attn_fwd_args &a) { a.seqlen_k = 4096; },
      [](attn_fwd_args &a) { a.q_strides[1] = 12345; },
      [](attn_fwd_args &a) { a.q = &userModsA; },
      [](attn_fwd_args &a) { a.block_m = 0; }, // the default, as given
      [](attn_fwd_args &a) { a.scale = 0.5f; }, // positive, as the default
      [](attn_fwd_args &a) { a.variant.window_left = 3; },
  };
  for (size_t i = 0; i < launchOnly.size(); ++i) {
    attn_fwd_args args = baseArgs();
    launchOnly[i](args);
    CallKey key = keyOf(args);
    EXPECT_EQ(key, base) << "change " << i;
    EXPECT_EQ(key.hash, base.hash) << "change " << i;
  }
}

TEST(CallKeyTest, EveryFieldThatDecidesTheKernelChangesTheKey) {
  attn_fwd_args base = baseArgs();
  auto withArgs = [&](std::function<void(attn_fwd_args &)> change) {
    attn_fwd_args args = base;
    change(args);
    return keyOf(args);
  };
  std::vector<std::pair<const char *, CallKey>> changed = {
      {"dtype", withArgs([](attn_fwd_args &a) { a.dtype = ATTN_DTYPE_F16; })},
      {"mask", withArgs([](attn_fwd_args &a) { a.mask = ATTN_MASK_CAUSAL; })},
      {"head_dim", withArgs([](attn_fwd_args &a) { a.head_dim = 64; })},
      {"block_m", withArgs([](attn_fwd_args &a) { a.block_m = 64; })},
      {"block_n", withArgs([](attn_fwd_args &a) { a.block_n = 64; })},
      {"scale sign", withArgs([](attn_fwd_args &a) { a.scale = -1; })},
      {"variants", withArgs([](attn_fwd_args &a) {
         a.variant.flags = ATTN_VARIANT_SOFTCAP;
       })},
      {"target", keyOf(base, Target::Host)},
      {"context", keyOf(base, Target::Cuda, 2)},
      {"user mods", keyOf(base, Target::Cuda, 1, &userModsA)},
      {"backward", keyOf(base, Target::Cuda, 1, nullptr, true)},
      {"varlen", keyOf(base, Target::Cuda, 1, nullptr, false, true)},
      {"page size", keyOf(base, Target::Cuda, 1, nullptr, false, true, 16)},
      {"tma", keyOf(base, Target::Cuda, 1, nullptr, false, false, 0, true)},
      {"backward form", keyOf(base, Target::Cuda, 1, nullptr, true, false, 0,
                              false, /*deterministic=*/false)},
      {"warp specialize",
       CallKey::make(Target::Cuda, 1, base, nullptr, false, false, 0,
                     /*tma=*/true, true, /*warpSpecialize=*/true)},
      {"persistent",
       CallKey::make(Target::Cuda, 1, base, nullptr, false, false, 0,
                     /*tma=*/true, true, /*warpSpecialize=*/true,
                     /*pagedDecode=*/false, /*persistent=*/true)},
      {"q stages",
       CallKey::make(Target::Cuda, 1, base, nullptr, false, false, 0,
                     /*tma=*/true, true, /*warpSpecialize=*/true,
                     /*pagedDecode=*/false, /*persistent=*/true,
                     /*qStages=*/1)},
      {"short work tiles",
       CallKey::make(Target::Cuda, 1, base, nullptr, false, false, 0,
                     /*tma=*/true, true, /*warpSpecialize=*/true,
                     /*pagedDecode=*/false, /*persistent=*/true,
                     /*qStages=*/0, /*shortWorkTiles=*/true)},
  };
  CallKey reference = keyOf(base);
  for (const auto &[field, key] : changed) {
    EXPECT_NE(key, reference) << field;
    EXPECT_NE(key.hash, reference.hash) << field;
  }
  // Each pair differs too, not only from the reference.
  for (size_t i = 0; i < changed.size(); ++i)
    for (size_t j = i + 1; j < changed.size(); ++j)
      EXPECT_NE(changed[i].second, changed[j].second)
          << changed[i].first << " vs " << changed[j].first;
  EXPECT_NE(keyOf(base, Target::Cuda, 1, &userModsA),
            keyOf(base, Target::Cuda, 1, &userModsB));
}

// Only the backward has two forms: a forward call's key ignores the mode.
TEST(CallKeyTest, TheForwardHasOneForm) {
  EXPECT_EQ(keyOf(baseArgs(), Target::Cuda, 1, nullptr, false, false, 0,
                  false, /*deterministic=*/false),
            keyOf(baseArgs()));
}

TEST(CallKeyTest, EqualHashesAloneDoNotMakeEqualKeys) {
  CallKey a = keyOf(baseArgs());
  attn_fwd_args other = baseArgs();
  other.head_dim = 64;
  CallKey b = keyOf(other);
  b.hash = a.hash; // as a collision would
  EXPECT_NE(a, b);
}

} // namespace
