//===- CacheKeyTest.cpp - What identifies a compiled kernel ---------------===//

#include "CacheKey.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

using namespace attn;
using namespace attn::rt;

namespace {

CacheKey baseKey() {
  CacheKey key;
  key.target = Target::Cuda;
  key.compilerVersion = "v1";
  key.config.headDim = 128;
  key.config.dtype = compiler::DType::BF16;
  key.config.mask = compiler::MaskKind::None;
  key.config.arch = "sm_90a";
  return key;
}

TEST(CacheKeyTest, TextNamesEveryField) {
  EXPECT_EQ(baseKey().str(),
            "attn-jit-kernel;compiler=v1;target=cuda;arch=sm_90a;dtype=bf16;"
            "head_dim=128;mask=none;block_m=0;block_n=0;warps=0;stages=0;"
            "tensor_core=auto;positive_scale=1;pack_gqa=0;variants=;backward=0;"
            "varlen=0;page_size=0;split=0;tma=0;deterministic=1;"
            "warp_specialize=0;persistent=0;q_stages=0;"
            "short_work_tiles=0;llvm_opt_level=3;user_mods=");
}

// A persistent kernel (KernelConfig::persistent) is keyed apart.
TEST(CacheKeyTest, NamesPersistent) {
  CacheKey key = baseKey();
  key.config.tma = key.config.warpSpecialize = key.config.persistent = true;
  EXPECT_NE(key.str().find(";warp_specialize=1;persistent=1;"),
            std::string::npos)
      << key.str();
}

// The variant flags, never their parameters, are part of the key.
TEST(CacheKeyTest, NamesVariantsByFlag) {
  CacheKey key = baseKey();
  key.config.variants = attn::abi::kWindow | attn::abi::kSoftcap;
  EXPECT_NE(key.str().find(";variants=window,softcap"), std::string::npos);
}

TEST(CacheKeyTest, EveryCodeChangingFieldChangesTheKey) {
  std::vector<std::function<void(CacheKey &)>> changes = {
      [](CacheKey &k) { k.compilerVersion = "v2"; },
      [](CacheKey &k) { k.target = Target::Host; },
      [](CacheKey &k) { k.config.arch = "sm_80"; },
      [](CacheKey &k) { k.config.dtype = compiler::DType::F16; },
      [](CacheKey &k) { k.config.headDim = 64; },
      [](CacheKey &k) { k.config.mask = compiler::MaskKind::Causal; },
      [](CacheKey &k) {
        k.config.mask = compiler::MaskKind::CausalBottomRight;
      },
      [](CacheKey &k) { k.config.blockM = 128; },
      [](CacheKey &k) { k.config.backward = true; },
      [](CacheKey &k) { k.config.varlen = true; },
      [](CacheKey &k) { k.config.pageSize = 16; },
      [](CacheKey &k) { k.config.split = true; },
      [](CacheKey &k) { k.config.tma = true; },
      [](CacheKey &k) { k.config.deterministic = false; },
      [](CacheKey &k) { k.config.warpSpecialize = true; },
      [](CacheKey &k) { k.config.persistent = true; },
      [](CacheKey &k) { k.config.qStages = 1; },
      [](CacheKey &k) { k.config.shortWorkTiles = true; },
      [](CacheKey &k) { k.config.llvmOptLevel = 0; },
      [](CacheKey &k) { k.config.blockN = 32; },
      [](CacheKey &k) { k.config.warps = 8; },
      [](CacheKey &k) { k.config.stages = 2; },
      [](CacheKey &k) { k.config.tensorCore = "mma.sync"; },
      [](CacheKey &k) { k.config.variants = attn::abi::kWindow; },
      [](CacheKey &k) { k.config.variants = attn::abi::kDocument; },
      [](CacheKey &k) { k.config.userMods = "mods"; },
      [](CacheKey &k) { k.config.positiveScale = false; },
      [](CacheKey &k) { k.config.packGqa = true; },
  };
  std::set<std::string> texts = {baseKey().str()};
  std::set<std::string> hashes = {baseKey().hexHash()};
  for (auto &change : changes) {
    CacheKey key = baseKey();
    change(key);
    EXPECT_NE(key, baseKey()) << key.str();
    texts.insert(key.str());
    hashes.insert(key.hexHash());
  }
  EXPECT_EQ(texts.size(), changes.size() + 1);
  EXPECT_EQ(hashes.size(), changes.size() + 1);
}

TEST(CacheKeyTest, HostKeysIgnoreTheGpuArch) {
  CacheKey a = baseKey(), b = baseKey();
  a.target = b.target = Target::Host;
  b.config.arch = "sm_80";
  EXPECT_EQ(a, b);
  EXPECT_NE(a.str().find("arch=host"), std::string::npos);
}

TEST(CacheKeyTest, HashIsStableAndHex) {
  CacheKey key = baseKey();
  EXPECT_EQ(key.hash(), baseKey().hash());
  std::string hex = key.hexHash();
  ASSERT_EQ(hex.size(), 16u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(CacheKeyTest, ArchFromComputeCapability) {
  EXPECT_EQ(archForComputeCapability(9, 0), "sm_90a");
  EXPECT_EQ(archForComputeCapability(8, 0), "sm_80");
  EXPECT_EQ(archForComputeCapability(8, 6), "sm_86");
  EXPECT_EQ(archForComputeCapability(8, 9), "sm_89");
  EXPECT_EQ(archForComputeCapability(10, 0), "sm_100a");
  EXPECT_EQ(archForComputeCapability(12, 0), "sm_120a");
  EXPECT_EQ(archForComputeCapability(7, 5), "");
  EXPECT_EQ(archForComputeCapability(6, 0), "");
}

} // namespace
