//===- TilePolicy.cpp - Every configuration choice, MLIR-free -------------===//

#include "attn/Compiler/TilePolicy.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Dialect/Attn/IR/Limits.h"
#include "attn/Dialect/AttnNV/IR/SharedTileBytes.h"

#include <algorithm>
#include <cctype>

namespace attn::compiler {

using mlir::attn::kMaxHostHeadDim;
using mlir::attn::kMaxNvidiaHeadDim;
using mlir::attn::kMaxThreadsPerCta;
using mlir::attn::kMaxTileSide;
using mlir::attn::kMinSmVersion;
using mlir::attn::kWgmmaK;

namespace {

/// Shared memory one CTA may use on an SM of the H100/H200 class (228 KB,
/// 1 KB reserved per CTA); half of it when two CTAs share the SM.
constexpr int64_t kSharedPerSm = 227 * 1024;
constexpr int64_t kSharedPerCtaPair = 113 * 1024;
/// On wgmma, the head dims stored as D = 128's shared tiles: multiples of
/// 16 whose rows take two 128-byte swizzle blocks of 16-bit elements (80 to
/// 128; the second block partly used). They take D = 128's tiles too: the
/// same shared memory, fewer O registers.
bool tiledAsD128(int64_t headDim, bool wgmma) {
  using mlir::attn::nv::storedSharedCols;
  using mlir::attn::nv::swizzleBlockCols;
  constexpr int64_t kElementBytes = 2;
  return wgmma && headDim % kWgmmaK == 0 &&
         storedSharedCols(/*swizzled=*/true, headDim, kElementBytes) ==
             2 * swizzleBlockCols(kElementBytes);
}

/// The backward on wgmma takes head dims that are multiples of this (its
/// products at other head dims have never run on a device).
constexpr int64_t kBackwardWgmmaHeadDimMultiple = 64;
/// Tiles of the backward pass: a CTA of either grid owns block_m rows
/// (queries of the dQ grid, keys of the dK/dV grid) and steps over block_n
/// rows of the other side. 64 x 64: 4 warps of one 16-row m tile, one
/// warpgroup for wgmma, two CTAs an SM. 128 x 64 (two warpgroups sharing
/// each step's tiles, the same registers a thread) measured 0.76-0.96 x on
/// the H200 (docs/BENCHMARKS.md version 25): one CTA an SM, whose two
/// warpgroups wait at each step's CTA barriers together.
constexpr int64_t kBackwardBlock = 64;
/// The atomic backward on wgmma where its dQ part splits over the head dim
/// (splitsDqOverHeadDim): two warpgroups, 128 keys a CTA.
constexpr int64_t kAtomicBackwardWarps = 8;
/// FP8 (e4m3) wgmma reduces over 32 elements an instruction; its K/V tiles
/// take whole 128-byte swizzle blocks of Vᵀ's keys: 256 keys up to
/// D = 128, with a producer warpgroup issuing the copies (warp
/// specialisation), else 128. At D = 128, N = 8k-16k on an H200: 865-869 /
/// 746-753 TF/s (none / causal) against 722-726 / 637-648 with 128 keys
/// and no producer, 813-815 / 658-665 with 256 keys alone, 815-819 /
/// 645-652 with the producer alone (docs/BENCHMARKS.md version 26, run 3),
/// although ptxas spilled 20 bytes there and serialised its wgmma (C7512:
/// S, O and P take ~224 of the consumers' 232 registers; two stages below
/// lift that); at D = 64, 569 / 471 against 421 / 383 (run 4). At D = 256 the producer measured
/// 0.99-1.00 x and 256 keys do not fit in shared memory.
constexpr int64_t kFp8WgmmaK = 32;
constexpr int64_t kFp8BlockN = 128;
constexpr int64_t kFp8WideBlockN = 256;
constexpr int64_t kFp8WideMaxHeadDim = 128;
constexpr int64_t kFp8PlainAboveHeadDim = 96;
/// The plain D = 256 wgmma forward's K/V tile (defaultTileSizes).
constexpr int64_t kWideKeysHeadDim = 256;
constexpr int64_t kWideKeysBlockN = 80;
/// Keys per tile with a producer warpgroup (defaultTileSizes), where they
/// differ from 64: D = 192 112 keys (two stages in 216 KB of shared
/// memory), D = 256 80 (two stages in 208 KB); spill-free in the
/// consumers' 232 registers (ptxas 13.0, bf16 and f16, causal or not;
/// ptxas-producer-wide.test).
struct ProducerKeys {
  int64_t headDim, blockN;
};
constexpr ProducerKeys kProducerBlockN[] = {{192, 112}, {256, 80}};
/// The backward on mma.sync past D = 128 (dK and dV in grids of their own):
/// 32 x 32 tiles, 2 warps of one 16-row m tile. Every kernel of the
/// backward at D = 256 then assembles without spills (ptxas 13.0, sm_90a:
/// 254 registers each) where 64 x 64 tiles and 4 warps spill 12 (dQ), 164
/// (dK) and 8 (dV) bytes, and the two-grid kernels 12 and 1980 bytes
/// (409 LDL/STL in the dK/dV loop; docs/design.md). Each warp still owns
/// one 16-row m tile, so its ratio of shared-memory reads to mma is
/// unchanged; two CTAs of 2 warps share an SM where one of 4 did.
constexpr int64_t kBackwardSplitBlock = 32;
/// The backward on wgmma up to this head dim (multiples of
/// kBackwardWgmmaHeadDimMultiple). Past D = 128 each of dQ, dK and dV has
/// a kernel of its own whose one 64 x D accumulator takes 128 f32 values a
/// thread at D = 256, beside S and dP of the other side's block_n rows.
/// By TMA, D = 256 steps over 64 rows: on the H200 1.14-1.36 x its 64 x 32
/// kernels (docs/BENCHMARKS.md version 46; one CTA an SM with either); D =
/// 192 over 32, where two CTAs share an SM (64 x 64: 0.85-0.94 x on an
/// H100). By cp.async, whose
/// addresses take registers, 16 rows (spill-free; 32 spill 64-72 bytes at
/// D = 256). ptxas 13.0: ptxas-backward-tma.test.
constexpr int64_t kMaxWgmmaBackwardHeadDim = 256;
struct SplitBlockN {
  int64_t headDim, blockN;
};
constexpr SplitBlockN kBackwardWgmmaSplitBlockNTma[] = {{192, 32}, {256, 64}};
constexpr int64_t kBackwardWgmmaSplitBlockN = 16;
int64_t backwardWgmmaSplitBlockN(int64_t headDim, bool tma) {
  if (tma)
    for (const SplitBlockN &e : kBackwardWgmmaSplitBlockNTma)
      if (e.headDim == headDim)
        return e.blockN;
  return kBackwardWgmmaSplitBlockN;
}

/// Registers: at most 255 a thread, 64K 32-bit registers an SM (every chip
/// from sm_80 on).
constexpr int64_t kRegistersPerThread = 255;
constexpr int64_t kRegistersPerSm = 64 * 1024;
/// A kernel may spill some of its tiles (the atomic backward's K/V tiles'
/// kernel at D = 128: 24 bytes causal on sm_90a), but one
/// whose tiles need more than this many times the registers a thread has
/// runs from local memory: refused.
constexpr int64_t kMaxRegisterOvercommit = 2;

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// f32 values one thread holds in the tiles that stay in registers: each
/// warp owns rows / warps rows of a score tile and of its accumulators,
/// spread over 32 threads (a wgmma warpgroup's 64 rows are 16 a warp).
/// Forward: S (block-n columns) and O (head dim). Backward (block_m rows
/// in both grids): the query tiles' S, dP and dQ, or the key tiles' S^T,
/// dP^T, dK and dV; split grads: the K/V tiles' kernels hold dK (with Sᵀ
/// and dPᵀ) or dV.
int64_t tileValuesPerThread(const KernelConfig &r, int64_t warps) {
  int64_t d = roundUp(r.headDim, 16);
  if (!r.backward)
    return r.blockM / warps * (r.blockN + d) / 32;
  int64_t accumulators = splitsBackwardGrads(r.headDim) ? d : 2 * d;
  return r.blockM / warps * (2 * r.blockN + accumulators) / 32;
}

/// Whether the tiles' register values fit the registers each of the plan's
/// threads gets (ptxas divides an SM's registers among the threads of the
/// CTAs it must hold), within kMaxRegisterOvercommit.
bool fitsRegisters(const KernelConfig &r, const KernelPlan &plan,
                   std::string &error) {
  int64_t values = tileValuesPerThread(r, plan.warps);
  int64_t registers =
      std::min(kRegistersPerThread,
               kRegistersPerSm / (plan.threads() * plan.minCtasPerSm));
  if (values <= kMaxRegisterOvercommit * registers)
    return true;
  error = std::string(r.backward ? "the backward's tiles" : "tiles") + " of " +
          std::to_string(r.blockM) + "x" + std::to_string(r.blockN) +
          " at head dim " + std::to_string(r.headDim) + " with " +
          std::to_string(plan.warps) + " warps hold " +
          std::to_string(values) +
          " f32 values a thread; a thread has " + std::to_string(registers) +
          " registers, and a kernel needing more than " +
          std::to_string(kMaxRegisterOvercommit) +
          " times that would run from local memory";
  return false;
}

} // namespace

bool isTensorCoreName(std::string_view name) {
  return name == "auto" || name == "mma.sync" || name == "wgmma";
}

int64_t smVersion(std::string_view chip) {
  if (chip.substr(0, 3) != "sm_")
    return 0;
  std::string_view rest = chip.substr(3);
  size_t digits = 0;
  while (digits < rest.size() && digits < 4 &&
         std::isdigit(static_cast<unsigned char>(rest[digits])))
    ++digits;
  std::string_view suffix = rest.substr(digits);
  if (digits < 2 || !(suffix.empty() || suffix == "a" || suffix == "f"))
    return 0;
  int64_t version = 0;
  for (char c : rest.substr(0, digits))
    version = version * 10 + (c - '0');
  return version;
}

std::string chipUnsupportedReason(std::string_view chip) {
  int64_t version = smVersion(chip);
  if (version == 0)
    return "unknown NVIDIA chip '" + std::string(chip) +
           "' (expected sm_<version>, such as sm_80 or sm_90a)";
  if (version < kMinSmVersion)
    return "chip " + std::string(chip) + " is not supported: the kernels "
           "need sm_" + std::to_string(kMinSmVersion) +
           " or newer (bf16 mma.sync, cp.async, ldmatrix)";
  return "";
}

bool tilesForWgmma(std::string_view tensorCore, std::string_view chip) {
  return tensorCore == "wgmma" || (tensorCore == "auto" && chip == "sm_90a");
}

int64_t defaultWarps(bool wgmma, int64_t blockM) {
  return wgmma ? blockM / 16 : 4;
}

bool mapsAtomicBackward(bool nvidia, std::string_view tensorCore,
                        int64_t headDim) {
  return !nvidia || (tensorCore == "wgmma" && !splitsBackwardGrads(headDim));
}

bool splitsBackwardGrads(int64_t headDim) {
  // dK and dV of a 16-row slice take D registers a thread together; with
  // Sᵀ, dPᵀ and the row terms beside them D = 128 just fits (no spill on
  // either mapping since version 49), and D = 256 cannot fit at all
  // (docs/design.md).
  return roundUp(headDim, 16) > kMaxBackwardJointHeadDim;
}

bool splitsDqOverHeadDim(int64_t blockN, int64_t warps, int64_t headDim) {
  // Each warpgroup takes all 64 query rows and whole 64-column blocks of
  // the head dim (#attn_nv.acc's col_groups; the wgmma lowering offsets B
  // by whole swizzle blocks).
  if (blockN != 64 || warps <= 4 || warps % 4 != 0)
    return false;
  int64_t groups = warps / 4;
  return headDim % (64 * groups) == 0;
}

bool scoresHeavy(unsigned variants) {
  return variants & (abi::kAlibi | abi::kBias | abi::kSoftcap | abi::kDocument);
}

bool takesBarrierPerTile(bool tma, bool warpSpecialize, bool twoCtasPerSm,
                         unsigned variants) {
  return tma && !warpSpecialize && (twoCtasPerSm || scoresHeavy(variants));
}

bool stagesTables(bool tma, bool barrierPerTile) {
  return !tma || barrierPerTile;
}

std::pair<int64_t, int64_t> defaultTileSizes(int64_t headDim, bool wgmma,
                                             unsigned variants,
                                             bool plainForward, bool producer,
                                             bool tma) {
  // A variant loading per score (a bias table, document ids) adds live
  // values and load latency to the softmax: at D = 128 the 128-key tile
  // spills and 64 keys measured faster with cp.async copies (bias 1.51 vs
  // 2.14 ms, document 0.96 vs 1.02 on an H200); ALiBi and softcap measured
  // faster with 128 keys (1.47 vs 1.54, 1.74 vs 1.98 ms), ALiBi's 236
  // spilled bytes included. With TMA copies and no producer (the document
  // mask's default) its 128-key tiles ran 1.11x the 64-key ones (0.713 vs
  // 0.794 ms at 16k, docs/BENCHMARKS.md version 38), 24 spilled bytes
  // included: the ids are loaded only on the tiles that need the mask, and
  // the copies take no registers. With a producer the two tied (0.797 vs
  // 0.798 ms, 16 bytes spilled at 128 keys). D = 80-112 have D = 128's
  // tiles and score tile and the same rule: with TMA by default there the
  // document mask ran 1.23-1.28x its 64-key cp.async kernel at 16k
  // (version 39, run E; 8-20 bytes spilled with a causal mask).
  bool documentWide = (variants & abi::kDocument) && tma && !producer;
  if (tiledAsD128(headDim, wgmma) &&
      (variants & (abi::kBias | abi::kDocument)) && !documentWide)
    return {128, 64};
  // wgmma (sm_90a): two warpgroups of 64 rows, one CTA per SM. S takes
  // block-n / 2 registers a thread and O head-dim / 2: 128 keys fit at
  // D = 128, 64 at D = 256. At D = 64, 64 keys measured best on an H200
  // (docs/BENCHMARKS.md). Other multiples of 16 take the tiles of the
  // multiple of 64 their shared tiles are stored as (swizzle blocks of 64
  // columns): D <= 64 those of 64; 64 < D <= 128 those of 128 (the same
  // shared memory, fewer O registers); above 128, 64 keys as at D = 256
  // (128 keys would need 241 KB with two stages at D = 160 and 192).
  // Head dims that are not a multiple of 16 stay on mma.sync.
  // The plain forward at D = 256: 80-key tiles (two stages still fit in
  // shared memory) ran 1.05-1.07x the 64-key ones without a mask on an
  // H200, 0.98-1.01x causal (docs/BENCHMARKS.md version 24, runs 6-8).
  // With a mask, a variant, a packed or paged batch, split-KV or TMA
  // (untested) they spill at 128 x 80 (ptxas 13.0), and D = 208-240 spills
  // without them: only this configuration takes them.
  if (wgmma && plainForward && headDim == kWideKeysHeadDim)
    return {128, kWideKeysBlockN};
  // With a producer warpgroup the consumers have the registers for wider
  // tiles: at D = 192 112 keys ran 1.05-1.12x the 64-key tiles (1.13-1.21x
  // the cp.async kernel), at D = 256 80 keys 1.01-1.04x, causal too, on the
  // H200 (docs/BENCHMARKS.md version 27, runs 7 and 9).
  for (ProducerKeys keys : kProducerBlockN)
    if (wgmma && producer && headDim == keys.headDim)
      return {128, keys.blockN};
  if (wgmma && headDim % kWgmmaK == 0)
    return {128, tiledAsD128(headDim, wgmma) ? 128 : 64};
  // On the NVIDIA mapping (4 warps) block-m = 128 gives each warp two 16-row
  // m tiles, so every K/V fragment read from shared memory feeds two mma:
  // with one m tile per warp, shared-memory bandwidth limits the tensor
  // cores. Where that does not fit in 255 registers without spilling
  // (ptxas -v, with and without a mask), fewer rows or keys.
  // Measured on an H200: docs/BENCHMARKS.md. The host path takes the same
  // tiles (its loops are not register-bound). Past D = 64, 128 x 32: at
  // D = 96 it ran 1.08x (median; lowest 1.05) the pre-redesign emitter's
  // 64 x 64 kernels, which the redesign had matched (0.99x). 128 x 64 ran
  // 1.25x but spills 16-52 bytes at D = 72-96 (docs/BENCHMARKS.md v24).
  if (headDim <= 64)
    return {128, 64};
  if (headDim <= 128)
    return {128, 32};
  return {64, 32};
}

std::string wgmmaUnsupportedReason(std::string_view chip, int64_t headDim,
                                   int64_t blockM, int64_t blockN,
                                   int64_t warps) {
  // One warpgroup per 64 rows, each warp one 16-row slice; tiles in
  // 64-column swizzle blocks (the last one partly used when 64 does not
  // divide the head dim); QKᵀ in k steps of 16 columns; at most 256 columns
  // per instruction.
  if (chip != "sm_90a")
    return "needs sm_90a, got " + std::string(chip);
  if (headDim % kWgmmaK != 0)
    return "needs a head dim that is a multiple of " +
           std::to_string(kWgmmaK);
  if (blockM % 64 != 0 || blockM > 256)
    return "needs block-m a multiple of 64 up to 256";
  if (blockN > 256)
    return "needs block-n up to 256";
  if (warps != 0 && warps != blockM / 16)
    return "needs warps = block-m / 16";
  return "";
}

bool shouldPackGqa(int64_t heads, int64_t kvHeads, int64_t seqlenQ,
                   int64_t blockM) {
  if (kvHeads <= 0 || kvHeads >= heads || heads % kvHeads != 0)
    return false;
  return heads / kvHeads * seqlenQ <= blockM;
}

bool pagedDecodes(int64_t pageSize, int64_t rowsPerGroup) {
  return pageSize > 0 && rowsPerGroup > 0 && rowsPerGroup <= kDecodeBlock;
}

std::pair<int64_t, int64_t> pagedDecodeTiles(int64_t headDim, bool wgmma) {
  if (tiledAsD128(headDim, wgmma))
    return {kDecodeBlock, kDecodeBlock};
  return {0, 0};
}

int64_t splitCtasPerSm(const KernelConfig &config) {
  KernelConfig split = config;
  split.split = true;
  KernelPlan plan;
  std::string error;
  if (!planKernel(split, /*nvidia=*/true, plan, error))
    return 1;
  return std::max<int64_t>(plan.minCtasPerSm, 1);
}

bool tmaByDefault(int64_t headDim, unsigned variants) {
  if (headDim < kTmaDefaultMinHeadDim || headDim % kWgmmaK != 0)
    return false;
  if (variants & abi::kBias)
    return headDim == kTmaBiasHeadDim;
  return headDim <= kTmaDefaultMaxHeadDim ||
         ((variants & abi::kDocument) && headDim <= kTmaDocumentMaxHeadDim);
}

bool producerByDefault(int64_t headDim, unsigned variants, bool varlen,
                       bool userMods) {
  if (varlen || userMods)
    return false;
  // Plain attention (no flags) and the variants of kProducerVariants alone.
  return headDim >= kProducerMinHeadDim && headDim <= kProducerMaxHeadDim &&
         headDim % kWgmmaK == 0 && (variants & ~kProducerVariants) == 0;
}

Copies chooseCopies(int64_t headDim, unsigned variants, bool varlen,
                    bool userMods, bool lengthsProducer,
                    std::optional<bool> tma, std::optional<bool> producer) {
  bool producerDefault =
      lengthsProducer || producerByDefault(headDim, variants, varlen, userMods);
  Copies copies;
  copies.producer = producer.value_or(producerDefault);
  copies.tma = tma.value_or(tmaByDefault(headDim, variants) ||
                            (copies.producer && producerDefault));
  return copies;
}

/// A persistent band's tiles: the defaults, with the producer, Q's buffers
/// the policy's choice.
static LengthTiles persistentTiles(bool shortWorkTiles) {
  LengthTiles tiles;
  tiles.producer = tiles.persistent = true;
  tiles.qStages = 0;
  tiles.shortWorkTiles = shortWorkTiles;
  return tiles;
}

LengthTiles lengthTiles(int64_t headDim, DType dtype, MaskKind mask,
                        unsigned variants, bool varlen, bool userMods,
                        int64_t queries, int64_t keys, int64_t windowKeys) {
  if ((dtype != DType::BF16 && dtype != DType::F16) || varlen || userMods)
    return {};
  bool noneOrCausal = mask == MaskKind::None || mask == MaskKind::Causal;
  if (variants == abi::kWindow) {
    if (headDim == kPersistentHeadDim && noneOrCausal && windowKeys > 0 &&
        windowKeys <= kPersistentMaxWindowKeys)
      return persistentTiles(/*shortWorkTiles=*/true);
    return {};
  }
  if (variants != 0)
    return {};
  int64_t shorter = std::min(queries, keys), longer = std::max(queries, keys);
  if (headDim == kPersistentHeadDim && noneOrCausal &&
      longer <= kPersistentMaxSequence)
    return persistentTiles(/*shortWorkTiles=*/true);
  if (headDim == kPersistentCausalHeadDim && mask == MaskKind::Causal &&
      longer <= kPersistentCausalMaxSequence)
    return persistentTiles(/*shortWorkTiles=*/false);
  if (headDim != kLengthTilesHeadDim)
    return {};
  if (shorter >= kLongSequence)
    return {kLongSequenceBlockM, kLongSequenceBlockN, /*producer=*/true};
  if (mask == MaskKind::Causal && longer <= kShortSequence)
    return {kShortCausalBlock, kShortCausalBlock, /*producer=*/false};
  if (noneOrCausal && shorter > kShortSequence && longer < kLongSequence)
    return {kMidSequenceBlockM, kMidSequenceBlockN, /*producer=*/false};
  return {};
}

int64_t maxSharedBytesPerBlock(std::string_view chip) {
  if (chip.rfind("sm_90", 0) == 0 || chip.rfind("sm_100", 0) == 0 ||
      chip.rfind("sm_101", 0) == 0)
    return 227 * 1024;
  if (chip == "sm_80" || chip == "sm_87")
    return 163 * 1024;
  return 99 * 1024;
}

int64_t sharedTileBytes(int64_t rows, int64_t headDim, bool wgmma,
                        int64_t elementBytes) {
  return mlir::attn::nv::sharedTileBytes(wgmma, rows, headDim, elementBytes);
}

bool planKernel(const KernelConfig &config, bool nvidia, KernelPlan &plan,
                std::string &error) {
  KernelConfig r = config.resolved(nvidia);
  plan = KernelPlan();
  plan.blockM = r.blockM;
  plan.blockN = r.blockN;
  plan.packGqa = r.packGqa;
  if (r.blockM <= 0 || r.blockN <= 0) {
    error = "tile sizes must be positive, got block-m=" +
            std::to_string(r.blockM) + " block-n=" + std::to_string(r.blockN);
    return false;
  }
  if (r.blockM > kMaxTileSide || r.blockN > kMaxTileSide) {
    error = "tile sizes must be at most " + std::to_string(kMaxTileSide) +
            ", got block-m=" + std::to_string(r.blockM) +
            " block-n=" + std::to_string(r.blockN);
    return false;
  }
  int64_t d = r.headDim;
  if (r.dtype == DType::E4M3) {
    if (r.backward) {
      error = "dtype e4m3 (FP8) has no backward pass";
      return false;
    }
    if (r.varlen || r.pageSize != 0 || r.split || r.variants != 0 ||
        !r.userMods.empty()) {
      error = "dtype e4m3 (FP8) is a plain forward: no variants, "
              "variable-length, paged or split-KV calls";
      return false;
    }
    if (nvidia && r.tensorCore != "wgmma") {
      error = "dtype e4m3 (FP8) is mapped on wgmma only (sm_90a), got " +
              r.tensorCore + " for " + r.arch;
      return false;
    }
    // k32 steps over the head dim (QKᵀ) and over the keys (P·V), whose Vᵀ
    // rows are whole 128-byte swizzle blocks of keys, one TMA box each.
    if (nvidia && (r.headDim % kFp8WgmmaK != 0 ||
                   r.blockN % mlir::attn::nv::kSwizzleRowBytes != 0 ||
                   !r.tma)) {
      error = "dtype e4m3 (FP8) on wgmma needs a head dim that is a "
              "multiple of " +
              std::to_string(kFp8WgmmaK) + ", block-n a multiple of " +
              std::to_string(mlir::attn::nv::kSwizzleRowBytes) +
              " and TMA, got head dim " + std::to_string(r.headDim) +
              ", block-n " + std::to_string(r.blockN) +
              (r.tma ? "" : ", no TMA");
      return false;
    }
  }
  if (!nvidia) {
    if (d < 1 || d > kMaxHostHeadDim) {
      error = "head dim must be in [1, " + std::to_string(kMaxHostHeadDim) +
              "] on the host, got " + std::to_string(d);
      return false;
    }
    return true;
  }

  plan.chip = r.arch;
  if (!isTensorCoreName(r.tensorCore)) {
    error = "tensor-core must be auto, mma.sync or wgmma, got '" +
            r.tensorCore + "'";
    return false;
  }
  if (std::string why = chipUnsupportedReason(r.arch); !why.empty()) {
    error = why;
    return false;
  }
  if (r.dtype == DType::F32) {
    error = "the NVIDIA mapping supports bf16, f16 and e4m3, got f32";
    return false;
  }
  if (d % 8 != 0 || d < 8 || d > kMaxNvidiaHeadDim) {
    error = "head dim must be a multiple of 8 in [8, " +
            std::to_string(kMaxNvidiaHeadDim) + "], got " + std::to_string(d);
    return false;
  }
  if (r.warps < 0 || r.warps > kMaxThreadsPerCta / 32) {
    error = "warps must be in [1, " + std::to_string(kMaxThreadsPerCta / 32) +
            "] (0: automatic), got " + std::to_string(r.warps);
    return false;
  }
  bool wgmma = r.tensorCore == "wgmma";
  if (wgmma) {
    std::string why =
        wgmmaUnsupportedReason(r.arch, d, r.blockM, r.blockN, r.warps);
    if (!why.empty()) {
      error = "tensor-core=wgmma " + why;
      return false;
    }
  }
  plan.mapping = wgmma ? "wgmma" : "mma.sync";
  plan.warps = r.warps;
  if (plan.warps <= 0 || r.blockM % (16 * plan.warps) != 0) {
    error = "a query tile of " + std::to_string(r.blockM) +
            " rows is not a whole number of 16-row tiles for each of warps=" +
            std::to_string(plan.warps);
    return false;
  }
  if (r.blockN % 16 != 0) {
    error = "K/V tiles must have a multiple of 16 rows, got " +
            std::to_string(r.blockN);
    return false;
  }
  if (r.backward) {
    if (wgmma && d % kBackwardWgmmaHeadDimMultiple != 0) {
      error = "tensor-core=wgmma: the backward needs a head dim that is a "
              "multiple of " +
              std::to_string(kBackwardWgmmaHeadDimMultiple) + ", got " +
              std::to_string(d);
      return false;
    }
    // Both grids' score tiles have block_m rows split over the warps
    // (checked above); the atomic form's dQ part, (dSᵀ)ᵀ K, has block_n:
    // whole 16-row tiles for each warp, or on wgmma 64 rows with the
    // warpgroups splitting its head dim (splitsDqOverHeadDim).
    if (!r.deterministic && r.blockN % (16 * plan.warps) != 0 &&
        !(wgmma && splitsDqOverHeadDim(r.blockN, plan.warps, d))) {
      error = "the atomic backward's dQ part of " + std::to_string(r.blockN) +
              " query rows is not a whole number of 16-row tiles for each "
              "of warps=" + std::to_string(plan.warps) +
              (wgmma ? ", nor 64 rows whose head dim splits into 64-column "
                       "blocks over the warpgroups"
                     : "");
      return false;
    }
    // Plain and synchronous where the forward pipelines: one K/V loop
    // (the dQ grid's) is double-buffered; no reversal, no packed heads.
    plan.stages = r.stages ? r.stages : 2;
    if (plan.stages != 2 && plan.stages != 3) {
      error = "stages must be 2, 3 or 0 (automatic), got " +
              std::to_string(plan.stages);
      return false;
    }
    // Each kernel holds two tiles of its own rows (Q and dO, or K and V)
    // and two of the other side's a stage.
    plan.sharedBytes = 2 * sharedTileBytes(r.blockM, d, wgmma) +
                       2 * plan.stages * sharedTileBytes(r.blockN, d, wgmma) +
                       (wgmma ? 1024 : 0);
    if (plan.sharedBytes > maxSharedBytesPerBlock(r.arch)) {
      error = "the backward's tiles at head dim " + std::to_string(d) +
              " need " + std::to_string(plan.sharedBytes) +
              " bytes of shared memory; " + r.arch +
              " gives a CTA at most " +
              std::to_string(maxSharedBytesPerBlock(r.arch));
      return false;
    }
    plan.minCtasPerSm = 1;
    plan.qInRegisters = false;
    plan.packGqa = false;
    // TMA copies of the loops' tiles (K/V, or Q and dO), with the CTA
    // barrier per step that releases cp.async stages: two CTAs an SM.
    // Their mbarriers fit in the 1024 bytes above.
    plan.tma = r.tma;
    plan.barrierPerTile = r.tma;
    return fitsRegisters(r, plan, error);
  }
  bool masked = r.mask != MaskKind::None;
  int64_t mTiles = r.blockM / (16 * plan.warps);
  int64_t paddedDim = roundUp(d, 16);

  // Stages: three drop a barrier per K/V tile where they still leave room
  // for two CTAs per SM. A wgmma CTA of two or more warpgroups needs so many
  // registers that it runs alone on its SM; one warpgroup can share it.
  // FP8: 8-bit tiles, V's transposed (D rows of block-n keys).
  bool fp8 = r.dtype == DType::E4M3;
  int64_t elementBytes = fp8 ? 1 : 2;
  int64_t q = sharedTileBytes(r.blockM, d, wgmma, elementBytes);
  int64_t kTile = sharedTileBytes(r.blockN, d, wgmma, elementBytes);
  int64_t vTile = fp8 ? sharedTileBytes(d, r.blockN, wgmma, elementBytes)
                      : kTile;
  int64_t align = wgmma ? 1024 : 0; // swizzled tiles need a 1024-byte base
  bool alone = wgmma && plan.warps > 4;
  // The bias table's score tile, staged with K and V where it fits
  // (attn-nv-stage-tables; f32): 32 KB a stage at D = 128's 128 x 64 tiles,
  // three stages in 225 of 227 KB. The bias computes per score, so its CTA
  // barrier per tile does not depend on the CTA count decided below.
  bool bias = r.variants & abi::kBias;
  int64_t table =
      bias && stagesTables(r.tma, takesBarrierPerTile(r.tma, r.warpSpecialize,
                                                      /*twoCtasPerSm=*/false,
                                                      r.variants))
          ? mlir::attn::nv::sharedTileBytes(wgmma, r.blockM, r.blockN,
                                            /*elementBytes=*/4)
          : 0;
  // A persistent CTA (attn-nv-persist) takes a second Q buffer where two
  // K/V stages still fit beside it, so that the producer loads the next
  // work tile's Q while this one's computes and its output leaves through
  // its own buffer: with one, each work tile waited for its Q's copy after
  // the last one's store (short batch: 0.72 x cuDNN; docs/BENCHMARKS.md
  // version 34). At D = 128 that costs the third stage (and with it P·V
  // in flight).
  // (A persistent kernel has a producer: no table joins its stages.)
  plan.qStages = r.qStages ? r.qStages
                 : r.persistent && wgmma && !fp8 &&
                         mlir::attn::kMaxQStages * q + 2 * (kTile + vTile) +
                                 align <=
                             maxSharedBytesPerBlock(r.arch)
                     ? mlir::attn::kMaxQStages
                     : 1;
  if (plan.qStages < 1 || plan.qStages > mlir::attn::kMaxQStages) {
    error = "q_stages must be 1, 2 or 0 (automatic), got " +
            std::to_string(plan.qStages);
    return false;
  }

  auto bytes = [&](int64_t stages) {
    return plan.qStages * q + stages * (kTile + vTile + table) + align;
  };
  // Without room for two stages of it the table keeps its per-element
  // gather, and the K/V stages their room.
  if (bytes(2) > maxSharedBytesPerBlock(r.arch)) {
    table = 0;
  }
  // A paged split-KV wgmma kernel past D = 64 keeps the page gather, the
  // sequence and the split live: with three stages and P·V in flight
  // (pv_in_flight) ptxas spilled 8 bytes at D = 128 with a mask
  // (ptxas-paged.test), with packed GQA heads 12-56 bytes
  // (ptxas-pack-gqa-varlen.test). Such a kernel decodes (memory-bound): it
  // takes the plain schedule (below), whose three stages fit the registers
  // and let the copies run two tiles ahead (attn-nv-pipeline-copies). With
  // two stages and one tile ahead a CTA has nothing in flight from a tile's
  // arrival until the next tile's copies are issued: the suspected cause of
  // 0.59 x copy at B = 1, 128k keys, where the contiguous split kernel read
  // 0.83 (docs/BENCHMARKS.md, version 18; the three stages' gain is not yet
  // measured).
  bool pagedHeavy = wgmma && r.pageSize > 0 && (r.split || r.packGqa) &&
                    paddedDim > 64;
  // FP8's 256-key tiles past D = 96: two stages, the plain schedule (P·V
  // waited for before the next QKᵀ), which frees P's registers: ptxas no
  // longer serialises the D = 128 kernel's wgmma, 1.02-1.08 x the three
  // stages there (0.95-1.05 x at D = 96, 0.90-0.97 x at D = 64;
  // docs/BENCHMARKS.md version 26, run 7).
  plan.stages = r.stages ? r.stages
                : fp8 && r.blockN > kFp8BlockN && d > kFp8PlainAboveHeadDim
                    ? 2
                : bytes(3) <= (alone ? kSharedPerSm : kSharedPerCtaPair)
                    ? 3
                    : 2;
  if (plan.stages != 2 && plan.stages != 3) {
    error = "stages must be 2, 3 or 0 (automatic), got " +
            std::to_string(plan.stages);
    return false;
  }
  plan.sharedBytes = bytes(plan.stages);
  if (plan.sharedBytes > maxSharedBytesPerBlock(r.arch)) {
    error = "tiles of " + std::to_string(r.blockM) + "x" +
            std::to_string(r.blockN) + " with " +
            std::to_string(plan.stages) + " stages need " +
            std::to_string(plan.sharedBytes) +
            " bytes of shared memory; " + r.arch + " gives a CTA at most " +
            std::to_string(maxSharedBytesPerBlock(r.arch));
    return false;
  }
  // A wgmma CTA whose shared memory leaves room for a second one on its SM
  // (D = 64) must also leave it the registers: 128 a thread for 256
  // threads. Without the cap ptxas took 137 at D = 64 and the SM ran one
  // CTA. mma.sync CTAs (128 threads) get up to 255 either way.
  // Not with a variant that computes per score (scoresHeavy): the 128
  // registers of two CTAs spill its extra values.
  // Not for split-KV either: its grid is sized to about a wave of CTAs,
  // and with packed GQA heads the split's index and partial row spilled
  // 40 bytes under the cap at D = 64 (ptxas-splitkv.test). Nor for packed
  // heads in a variable-length batch (decoding: a grid of B · Hkv CTAs),
  // whose per-row head and row spilled 12-80 bytes under it at D = 64
  // (ptxas-pack-gqa-varlen.test).
  // A warp-specialised CTA moves its registers with setmaxnreg, which
  // draws on the CTA's own allocation: ptxas gives each of its 384 threads
  // what one CTA per SM allows (168), and the consumers' 232 need it all.
  // A CTA of one warpgroup keeps every register at two CTAs an SM
  // (kRegistersPerSm / 256 threads), so none of those spills applies to it.
  // FP8's 8-bit tiles leave room for two CTAs in shared memory up to
  // D = 128, but not in registers: its 128-key score tile alone takes 64 a
  // thread; under the cap ptxas 13.0 spilled 192 bytes at D = 64, 2.4 KB
  // at D = 128.
  bool registersCapped = plan.threads() * 2 * kRegistersPerThread >
                         kRegistersPerSm;
  plan.minCtasPerSm =
      wgmma && plan.sharedBytes <= kSharedPerCtaPair && !r.warpSpecialize &&
              !fp8 &&
              (!registersCapped ||
               (!scoresHeavy(r.variants) && !r.split &&
                !(r.varlen && r.packGqa)))
          ? 2
          : 1;
  if (!fitsRegisters(r, plan, error))
    return false;
  // Q's A fragments take 4 registers per 16 columns and m tile.
  // A variable-length kernel keeps its sequence's offsets and lengths live
  // through the K/V loop: with Q in registers too, ptxas spilled 16-44
  // bytes at D = 64 (tests/compiler/Pipelines/ptxas-varlen.test); so did
  // split-KV kernels with packed GQA heads (8-56 bytes at D = 64 and 128,
  // ptxas-splitkv.test).
  plan.qInRegisters =
      !wgmma && mTiles * paddedDim <= 128 && !r.varlen && !r.split;
  // wgmma with three stages: the K/V loop is software-pipelined, a P·V
  // running on while the next tile's work starts (its V must stay in its
  // stage while the tile after is copied). The softmax of tile j while P·V
  // of tile j - 1 runs was +2-4% at D = 64 and -8-12% at D = 128 on an
  // H200; P·V left in flight through the next tile's QKᵀ is the rest
  // (docs/BENCHMARKS.md).
  if (wgmma && plan.stages >= 3 && !pagedHeavy)
    plan.schedule = paddedDim <= 64 ? "softmax_overlaps_pv" : "pv_in_flight";
  // Several warpgroups issue QKᵀ in turn: +5-9% at D = 128.
  plan.orderedIssue = wgmma && plan.warps > 4;
  // Causal grids start with the longest tiles (wgmma only: on mma.sync at
  // D = 64 the extra value made ptxas spill).
  plan.reverseGrid = masked && wgmma;
  // Rescale only when a row max of the warp moved: slower where registers
  // are plenty (9-13% unmasked), but it is what lets masked kernels with
  // two m tiles and D = 128 fit in 255 registers.
  plan.conditionalRescale = !wgmma && masked && mTiles > 1 && paddedDim > 64;
  plan.packGqa = r.packGqa;
  plan.tma = r.tma;
  plan.warpSpecialize = r.warpSpecialize;
  plan.persistent = r.persistent;
  // Per-warp empty barriers let the warpgroups run apart: +0-6% at D = 128
  // (one CTA an SM), but -3-8% at D = 64, where two CTAs share an SM and
  // the other CTA covers a barrier's wait (docs/BENCHMARKS.md version 20),
  // and -2-6% for the variants that compute per score (ALiBi, softcap,
  // document; version 21, run 9: a CTA barrier per tile 1.02-1.07x).
  plan.barrierPerTile =
      takesBarrierPerTile(plan.tma, plan.warpSpecialize,
                          /*twoCtasPerSm=*/plan.minCtasPerSm > 1, r.variants);
  // Masks compare 32-bit gaps where registers allow: the TMA kernels (16-bit)
  // with them, 1.21 x window 256 and 1.05 x causal at 16k on the H200
  // (docs/BENCHMARKS.md v29). At 255 registers the cp.async kernels
  // (mma.sync at D = 64, wgmma at D = 128 causal) spilled 4-28 bytes with
  // them, FP8's 256-key kernels 16-52.
  plan.narrowCompares = plan.tma && !fp8;
  return true;
}

bool quickKernelConfig(const KernelConfig &full, KernelConfig &quick) {
  if (full.backward || full.split || full.pageSize != 0 ||
      (full.dtype != DType::BF16 && full.dtype != DType::F16))
    return false;
  KernelConfig q;
  q.headDim = full.headDim;
  q.dtype = full.dtype;
  q.mask = full.mask;
  q.arch = full.arch;
  q.positiveScale = full.positiveScale;
  q.variants = full.variants;
  q.userMods = full.userMods;
  q.varlen = full.varlen;
  q.tensorCore = "mma.sync";
  q.blockM = kQuickBlockM;
  q.blockN = kQuickBlockN;
  q.stages = 2;
  q.llvmOptLevel = kQuickLlvmOptLevel;
  q = q.resolved(/*nvidia=*/true);
  KernelPlan plan;
  std::string error;
  if (!planKernel(q, /*nvidia=*/true, plan, error) ||
      (full.tensorCore == q.tensorCore && full.blockM == q.blockM &&
       full.blockN == q.blockN))
    return false;
  quick = std::move(q);
  return true;
}

int64_t gridGroupCtas(bool nvidia, bool backward, bool split,
                      bool tableSharedByHeads, bool dataBoundRuns,
                      bool persistentLongestFirst) {
  // Query tile fastest, every (batch, head) reads the whole (N, N) table:
  // with one CTA an SM the 132 running CTAs span ~4 pairs at N = 4k (32
  // tiles each), so the causal half of the table (32 MB f32) comes from
  // DRAM about B·H / 4 times. A group of G = 256 / tiles pairs taken tile
  // by tile reads it B·H / G times (8 x 32 MB at B·H = 64, N = 4k) while
  // its K/V (256 tiles x 128 rows x D x 4 bytes = 16 MB at D = 128, when
  // Nk ~ Nq) stays in the 50 MB L2. docs/design.md ("Grid order").
  // Not split-KV (its z runs over splits) nor the backward (its grids run
  // over keys too).
  if (!nvidia || backward || split)
    return 0;
  if (tableSharedByHeads)
    return kGridGroupCtas;
  // Document runs: with the query tile fastest, head h's tiles start at
  // h / H of the launch order, so the last heads' longest runs (the end of
  // the longest document) started last and the grid's tail idled the SMs
  // (ncu, document @ 16k: 18 % of the elapsed cycles; BENCHMARKS version
  // 33). Every head of a query tile together (reversed, as causal grids
  // are) starts them at the tile's place instead.
  // A persistent causal grid (attn-nv-persist) hands its work tiles out
  // in a fixed order: every head of a query tile together sorts the grid
  // longest first across heads, which the rounds' mirrored order balances
  // (head by head, a round spans one head's lengths: 1.5x the greedy
  // launch's time at 16k in BENCHMARKS version 34's simulation). Short
  // work tiles (KernelConfig::shortWorkTiles, the caller's
  // persistentLongestFirst false) balance as well head by head -- a short
  // sequence's round spans 8 pairs or more, a window's tiles are of one
  // length -- keep a pair's K/V in L2, and run none of the grouping's code
  // per work tile (version 37).
  return dataBoundRuns || persistentLongestFirst ? kGridGroupAllPairs : 0;
}

KernelConfig KernelConfig::resolved(bool nvidia) const {
  KernelConfig r = *this;
  // Default tiles for the mapping auto would pick; then the mapping the
  // plan takes for those tiles.
  bool plainForward = !backward && mask == MaskKind::None && variants == 0 &&
                      userMods.empty() && !varlen && pageSize == 0 && !split &&
                      !tma && !packGqa;
  // The backward's mapping: wgmma on sm_90a at the head dims it takes
  // (measured 1.36-1.60x mma.sync at D = 64 and 128 on an H200,
  // docs/BENCHMARKS.md version 15), else mma.sync. Then its form: only the
  // backward has an atomic form, and only where mapsAtomicBackward says so
  // (past D = 128 on NVIDIA it is deterministic whatever is asked).
  if (backward && nvidia && tensorCore == "auto")
    r.tensorCore = tilesForWgmma("auto", arch) &&
                           headDim % kBackwardWgmmaHeadDimMultiple == 0 &&
                           headDim <= kMaxWgmmaBackwardHeadDim
                       ? "wgmma"
                       : "mma.sync";
  if (!backward || !mapsAtomicBackward(nvidia, r.tensorCore, headDim))
    r.deterministic = true;
  // TMA (and so a producer warpgroup) for forwards over contiguous or
  // packed K/V, not split; for the deterministic backward's loops without a
  // producer (the runtime's default on sm_90a, BENCHMARKS version 43; the
  // atomic form with them measured 0.75-0.94 x the deterministic pair,
  // version 47).
  bool backwardTma = backward && r.deterministic && !warpSpecialize;
  bool keepsTma = (!backward || backwardTma) && pageSize == 0 && !split;
  auto [defM, defN] = defaultTileSizes(
      headDim, nvidia && tilesForWgmma(tensorCore, arch), variants,
      plainForward, tma && warpSpecialize && keepsTma, tma && keepsTma);
  // FP8 (wgmma only): two warpgroups of 64 rows, 256 or 128 keys (rows of
  // Vᵀ in whole 128-byte swizzle blocks).
  bool fp8 = dtype == DType::E4M3;
  bool fp8Wide = fp8 && headDim <= kFp8WideMaxHeadDim;
  if (fp8 && nvidia)
    std::tie(defM, defN) = std::pair<int64_t, int64_t>{
        128, fp8Wide ? kFp8WideBlockN : kFp8BlockN};
  // The backward: 64 x 64 tiles, whose keys-major score tiles (64 keys)
  // split over 4 warps (one warpgroup) as its query tiles do. Past D = 128
  // (dQ, dK and dV split) smaller tiles: on wgmma fewer rows of the other
  // side (kMaxWgmmaBackwardHeadDim), on mma.sync 32 x 32
  // (kBackwardSplitBlock).
  if (backward) {
    defM = defN = kBackwardBlock;
    if (nvidia && splitsBackwardGrads(headDim)) {
      if (r.tensorCore == "wgmma")
        defN = backwardWgmmaSplitBlockN(headDim, tma && keepsTma);
      else
        defM = defN = kBackwardSplitBlock;
    }
    // The atomic form on wgmma: two warpgroups of 64 keys each share every
    // step's dQ part, split over the head dim, which halves its global
    // reductions (the 64 x 64 kernel was bound by them: ncu, L2 at 68 %).
    if (nvidia && !r.deterministic && r.tensorCore == "wgmma" &&
        splitsDqOverHeadDim(kBackwardBlock, kAtomicBackwardWarps, headDim))
      defM = kAtomicBackwardWarps * 16;
  }
  // A decoding paged call's open tiles (pagedDecodeTiles; {0, 0}: the
  // defaults). Consumed here: the tiles it gave are explicit from now on.
  if (r.pagedDecode && nvidia && pageSize > 0 && !backward && r.blockM == 0 &&
      r.blockN == 0) {
    auto [decodeM, decodeN] =
        pagedDecodeTiles(headDim, tilesForWgmma(tensorCore, arch));
    if (decodeM > 0) {
      defM = decodeM;
      defN = decodeN;
    }
  }
  r.pagedDecode = false;
  if (r.blockM == 0)
    r.blockM = defM;
  if (r.blockN == 0)
    r.blockN = defN;
  if (!nvidia) {
    r.warps = 0;
    r.stages = 0;
    r.tensorCore = "auto";
    r.arch.clear();
    r.tma = false;
    r.warpSpecialize = false;
    r.persistent = false;
    r.qStages = 0;
    r.shortWorkTiles = false;
    return r;
  }
  // Any other name (mma.sync, wgmma, or one the plan rejects) is kept.
  if (r.tensorCore == "auto") {
    bool fits =
        wgmmaUnsupportedReason(arch, headDim, r.blockM, r.blockN, warps)
            .empty();
    r.tensorCore = fits ? "wgmma" : "mma.sync";
  }
  if (r.warps == 0 && (r.tensorCore == "wgmma" || r.tensorCore == "mma.sync"))
    r.warps = defaultWarps(r.tensorCore == "wgmma", r.blockM);
  // The backward's mma.sync warps own 16 rows of both grids' score tiles
  // (block_m rows each): no more warps than it has 16-row tiles.
  if (backward && warps == 0 && r.tensorCore == "mma.sync")
    r.warps = std::max<int64_t>(1, std::min(r.warps, r.blockM / 16));
  // TMA loads whole K/V tiles of a (B, Hkv, N, D) tensor, or of a packed
  // batch's sequence (KernelABI.h's ragged maps): the wgmma forward over
  // contiguous K/V (a paged cache's and split-KV's tiles keep cp.async).
  // FP8 reads Vᵀ through a transposed map: always TMA.
  r.tma = (tma || fp8) && r.tensorCore == "wgmma" && keepsTma;
  r.warpSpecialize = (warpSpecialize || fp8Wide) && r.tma;
  // Persistent CTAs (attn-nv-persist) walk the forward's (query tile, head,
  // batch) grid of contiguous K/V with a producer warpgroup; not FP8, whose
  // 256-key kernel spills 28 bytes with the loop's values (ptxas 13.0).
  r.persistent = persistent && r.warpSpecialize && !backward && !varlen &&
                 pageSize == 0 && !split && !packGqa && !fp8;
  if (!r.persistent) {
    r.qStages = 0;
    r.shortWorkTiles = false;
  }
  return r;
}

} // namespace attn::compiler
