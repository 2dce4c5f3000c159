//===- TilePolicy.h - Every configuration choice, MLIR-free -----*- C++ -*-===//
//
// The choices the pipelines make when the user leaves them open, in one
// place: tile sizes per head dim, the tensor-core mapping, warps, shared
// memory stages and the schedule of the K/V loop. `planKernel` makes them
// all; `attn-configure` writes the plan onto the kernel as #attn.config,
// every later pass reads it from there, and the runtime keys its caches on
// the configuration it resolves from (KernelConfig::resolved).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_TILEPOLICY_H
#define ATTN_COMPILER_TILEPOLICY_H

#include "attn/Compiler/KernelABI.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace attn::compiler {

struct KernelConfig;
enum class DType;
enum class MaskKind;

/// Whether `name` is a tensor-core setting: auto, mma.sync or wgmma.
bool isTensorCoreName(std::string_view name);

/// The SM version a chip name gives ("sm_90a" -> 90), or 0 when it is not
/// of the form sm_<digits>[a|f].
int64_t smVersion(std::string_view chip);

/// Why the NVIDIA kernels cannot be compiled for `chip` (an unknown name, or
/// older than mlir::attn::kMinSmVersion); empty when they can.
std::string chipUnsupportedReason(std::string_view chip);

/// Whether the default tiles are those of the wgmma mapping: it is asked
/// for, or auto on sm_90a.
bool tilesForWgmma(std::string_view tensorCore, std::string_view chip);

/// Warps per CTA when left at 0: one per 16 rows with wgmma, 4 with mma.sync.
int64_t defaultWarps(bool wgmma, int64_t blockM);

/// Default tile sizes (block-m, block-n) for a head dim, for the mma.sync or
/// the wgmma (sm_90a) mapping. plainForward: a forward without a mask,
/// variant, user mod, packed or paged batch, split-KV, TMA or packed heads.
/// producer: a forward whose TMA copies a producer warpgroup issues
/// (KernelConfig::warpSpecialize with tma). tma: a forward whose K/V tiles
/// TMA copies (KernelConfig::tma), with or without a producer.
std::pair<int64_t, int64_t> defaultTileSizes(int64_t headDim, bool wgmma,
                                             unsigned variants = 0,
                                             bool plainForward = false,
                                             bool producer = false,
                                             bool tma = false);

/// Whether the atomic backward's dQ part on wgmma, block_n = 64 query rows
/// over `warps` (more than one warpgroup), splits its head dim over the
/// warpgroups (#attn_nv.acc's col_groups: each warpgroup 64 rows and whole
/// 64-column blocks; FlashAttention-3's split of dQ): K/V tiles of 64 keys
/// per warpgroup share one dQ part, so its global reductions halve with two
/// warpgroups (the 64 x 64 atomic kernel was bound by them on the H200).
bool splitsDqOverHeadDim(int64_t blockN, int64_t warps, int64_t headDim);

/// NVIDIA head dims above this split the backward's dK and dV
/// (splitsBackwardGrads) and take its deterministic form only
/// (mapsAtomicBackward).
inline constexpr int64_t kMaxBackwardJointHeadDim = 128;

/// Whether the NVIDIA backward computes dK and dV in two grids (kernels) of
/// their own instead of one, at the cost of recomputing the keys-major
/// scores: past D = 128 a thread cannot hold both accumulators.
bool splitsBackwardGrads(int64_t headDim);

/// Whether a backward mapped with `tensorCore` ("wgmma", "mma.sync"; any on
/// the host) at `headDim` can take the atomic form: its dSᵀ·K reads dSᵀ
/// transposed from shared memory, an MN-major A that wgmma reads and
/// mma.sync does not; and its K/V tiles' kernel holds dK and dV together,
/// which the NVIDIA kernels past D = 128 do not (splitsBackwardGrads).
bool mapsAtomicBackward(bool nvidia, std::string_view tensorCore,
                        int64_t headDim);

/// Variants that compute per score (KernelABI.h bits): their kernels get no
/// two-CTA register cap (the capped D = 64 kernels spill).
bool scoresHeavy(unsigned variants);

/// Whether a TMA kernel releases its K/V stages by a CTA barrier per tile
/// (#attn.config's barrier_per_tile) instead of per-warp empty mbarriers:
/// without a producer, where two CTAs share an SM or a variant computes per
/// score (docs/BENCHMARKS.md versions 20-21).
bool takesBarrierPerTile(bool tma, bool warpSpecialize, bool twoCtasPerSm,
                         unsigned variants);

/// Whether a captured table's score tiles are staged in shared memory with
/// the K/V stages (attn-nv-stage-tables): where a CTA barrier per tile
/// orders the stages, in cp.async kernels and in TMA kernels with
/// barrier_per_tile. Per-warp mbarriers release a stage without waiting for
/// the table's cp.async copies, so there the table keeps its gather.
bool stagesTables(bool tma, bool barrierPerTile);

/// Why the wgmma mapping cannot run tiles of block-m x block-n with this head
/// dim and `warps` warps (0: automatic) on `chip`; empty when it can.
/// `tensor-core=auto` takes wgmma exactly when it is empty.
std::string wgmmaUnsupportedReason(std::string_view chip, int64_t headDim,
                                   int64_t blockM, int64_t blockN,
                                   int64_t warps);

/// Whether a call with `heads` query heads over `kvHeads` K/V heads and
/// `seqlenQ` queries packs the query heads of each K/V head into one query
/// tile of `blockM` rows (KernelConfig::packGqa): when a whole group's
/// queries fit one tile, as in decoding, K and V are then read once per
/// group instead of once per query head.
bool shouldPackGqa(int64_t heads, int64_t kvHeads, int64_t seqlenQ,
                   int64_t blockM);

/// Whether a call over a paged K/V cache (`pageSize` > 0) decodes: each K/V
/// head's query rows, `rowsPerGroup` = H / Hkv · the longest sequence's
/// queries, fit one query tile of kDecodeBlock rows.
inline constexpr int64_t kDecodeBlock = 64;
bool pagedDecodes(int64_t pageSize, int64_t rowsPerGroup);

/// The tiles of a decoding paged call (pagedDecodes; KernelConfig::pagedDecode,
/// which resolved() turns into these) that leaves them open, or {0, 0} for
/// defaultTileSizes: with wgmma at 64 < D <= 128, 64 x 64 (one
/// warpgroup, three stages, two CTAs an SM). The default 128 x 128 tiles
/// compute 32 times the rows a packed group of 4 needs: on the H200
/// (docs/BENCHMARKS.md version 22) 64 x 64 read B = 64, 8k keys at 1.02 x
/// the copy bandwidth against 0.70-0.81, and B = 1, 128k keys (split in 32)
/// at 0.81-0.82 against 0.59. Contiguous decoding keeps the defaults (0.97
/// x copy against 0.82 with 64 x 64); other head dims are not measured.
std::pair<int64_t, int64_t> pagedDecodeTiles(int64_t headDim, bool wgmma);

/// CTAs of `config`'s split-KV kernel (config.split set, then planned) that
/// one SM holds: split-KV's chooser fills the GPU's SMs times this. 1 when
/// the configuration does not plan.
int64_t splitCtasPerSm(const KernelConfig &config);

/// Whether a forward call at `headDim` takes TMA for K/V when the runtime is
/// not told (ATTN_JIT_TMA unset) and the kernel allows it (resolved()): on
/// the H200, two runs of the convention shapes (ab_bench, TMA against
/// cp.async in one process) measured D = 64 1.04-1.08x and D = 128
/// 1.01-1.14x on every shape, D = 256 0.95-1.04x (neutral, cp.async kept);
/// D = 96 1.02-1.18x (version 38), where the producer gains more and brings
/// TMA with it (producerByDefault), as at D = 80 and 112 (version 39); so
/// TMA alone is the default there for what takes no producer: the document
/// mask ran 1.22-1.28x cp.async at D = 80-112 (version 39, runs D-E;
/// 128 x 128 tiles, as at D = 128); prefix-LM by the same rule, not
/// measured. The document mask also up to kTmaDocumentMaxHeadDim: at
/// D = 192 and 256 1.16 / 1.13x cp.async (version 39, run F; with the
/// producer 1.13 / 1.18x, not taken: it spills more, 20 / 84 bytes against
/// 0 / 24).
/// A bias table (`variants` has KernelABI.h's kBias) only at D = 128: its
/// score tiles stay cp.async copies (attn-nv-stage-tables), which join the
/// TMA kernel's CTA barrier per tile (barrier_per_tile, as the variants
/// that compute per score take it); at 4k on the H200 that kernel ran
/// 1.07-1.10x the cp.async one (docs/BENCHMARKS.md version 38). Before the
/// table's copies joined it, TMA with the table's per-element gather ran
/// 1.151 ms against 0.881 (version 21). D = 64 (two CTAs an SM, which the
/// table's stages would not leave room for) is not measured.
inline constexpr int64_t kTmaDefaultMinHeadDim = 64;
inline constexpr int64_t kTmaDefaultMaxHeadDim = 128;
inline constexpr int64_t kTmaDocumentMaxHeadDim = 256;
inline constexpr int64_t kTmaBiasHeadDim = 128;
bool tmaByDefault(int64_t headDim, unsigned variants = 0);

/// Whether a forward call at `headDim` takes TMA with a producer warpgroup
/// issuing the copies (KernelConfig::tma and warpSpecialize) when the
/// runtime is not told (ATTN_JIT_TMA and ATTN_JIT_WARPSPEC unset): every
/// wgmma head dim (a multiple of 16) from kProducerMinHeadDim to
/// kProducerMaxHeadDim, plain attention (no named variant, no user mods)
/// over a (B, H, N, D) batch (not `varlen`). On the H200, in
/// one process each (docs/BENCHMARKS.md version 27, runs 7 and 9), against
/// the cp.async kernels, none and causal, N 2k-8k: with the producer (64
/// keys) D = 160 1.01-1.08x, 192 1.01-1.08x, 224 1.16-1.21x, 256
/// 1.05-1.13x; TMA without it 0.83-1.00x. The consumers' 232 registers
/// (setmaxnreg) leave room for wider tiles at D = 192 and 256
/// (defaultTileSizes). D = 96 (two 128-byte blocks, the second half
/// used; 128 x 128 tiles), against the cp.async kernel in one process
/// (version 38, run G, N 1k-16k, none and causal): with the producer
/// 1.08-1.22x, TMA alone 1.02-1.18x; at N = 4k 1.08-1.10x cuDNN. The
/// other head dims likewise (version 39, runs A-B, N 1k-16k, none and
/// causal): D = 80 1.12-1.21x, 112 1.12-1.26x, 144 1.06-1.27x, 176
/// 1.04-1.25x, 208 1.17-1.39x, 240 1.14-1.34x. D = 64 lost with it
/// (version 20, 0.91-0.95x: two CTAs of one warpgroup share its SM); head
/// dims below 64 and packed batches are not measured with it.
/// At D = 128, against TMA alone in one process (docs/BENCHMARKS.md version
/// 28): plain attention 1.002-1.033x on the convention shapes, GQA prefill
/// 1.02x, decode 1.00-1.02x, the short batch 0.99x (runs 3-4); and the
/// variants whose flags are all in kProducerVariants (KernelABI.h: sliding
/// window, softcap, ALiBi) window 1024 1.09-1.12x, softcap 1.07x, ALiBi
/// 1.04x, window 256 0.99-1.01x (run 1); the document mask lost (0.96x).
/// The same variants at the other head dims of plain attention's range,
/// D = 80 to 256, where they had
/// kept cp.async, against it (version 39, runs C-F, N = 8k causal): at
/// D = 80-112 window 256 1.33-1.38x, window 1024 1.22-1.25x, softcap
/// 1.01-1.19x, ALiBi 1.05-1.12x; at D = 192 and 256 windows 1.21-1.27x,
/// softcap 1.18 / 1.10x, ALiBi 1.23 / 1.16x (TMA alone 0.97-1.32x).
/// Version 28 had measured softcap and ALiBi at D = 256 0.95x with the
/// producer's 64-key tiles of then.
/// A bias table's cp.async copies do not join a producer's mbarriers
/// (attn-nv-stage-tables keeps their gather there).
inline constexpr int64_t kProducerMinHeadDim = 80;
inline constexpr int64_t kProducerMaxHeadDim = 256;
inline constexpr unsigned kProducerVariants =
    abi::kWindow | abi::kAlibi | abi::kSoftcap;
bool producerByDefault(int64_t headDim, unsigned variants, bool varlen,
                       bool userMods);

/// The tiles a plain forward call takes by its lengths when it leaves them
/// open (bf16 or f16, no named variant, no user mods, not a packed batch);
/// blockM = 0: the defaults (defaultTileSizes). Each is a second kernel,
/// for calls at one end of the lengths:
/// * long sequences at D = 64, queries and keys both at least
///   kLongSequence: FlashAttention-3's D = 64 tile, 192 query rows on three
///   consumer warpgroups, 128 keys, with a producer warpgroup and TMA (the
///   consumers get 160 registers, attn-nv-warp-specialize). On the H200, in
///   one process against the default 128 x 64 kernel (docs/BENCHMARKS.md
///   version 31, run 3): N = 8k 1.088 / 1.080 x (none / causal), 16k
///   1.059 / 1.081 x, 4k 1.020 / 0.991, 2k 1.019 / 0.930, 1k 0.902 /
///   0.760: with fewer, taller CTAs the short grids fill the SMs worse and
///   causal rows waste more of the diagonal's tile;
/// * short causal sequences at D = 64 (MaskKind::Causal), queries and keys
///   both at most kShortSequence: 64 x 64 tiles on one warpgroup (TMA, no
///   producer), several CTAs an SM. Against the default 128 x 64 (version
///   32, runs 3-4): N = 256 1.087-1.089 x, 512 1.069, 1k 1.054, 2k
///   1.026-1.027; 4k 1.028 and 8k 0.932 (past the bound); without the mask
///   0.926-1.006 (not taken). Fewer masked scores in the diagonal's tiles
///   and twice the CTAs to fill the SMs are the likely reasons;
/// * between them at D = 64 (no mask or MaskKind::Causal, queries and keys
///   both above kShortSequence and below kLongSequence): 64 x 128 on one
///   warpgroup (TMA, no producer). Forced, against the runtime's tiles
///   (version 32, run 5, two runs): N = 4k 1.061 / 1.043 x without the
///   mask, 1.041 / 1.047 causal; 2k 1.039 / 0.955, 1k 0.964 / 0.897, 8k
///   0.923 / 0.986 (against the tall tile) -- the band between the
///   measured ends; by the runtime's own choice 1.042 / 1.029 x main
///   before it at 4k (version 33; 3k and 6k not measured);
/// * short sequences at D = 128 (kPersistentHeadDim; no mask or
///   MaskKind::Causal, queries and keys both at most
///   kPersistentMaxSequence): the default tiles in persistent CTAs
///   (KernelConfig::persistent), whose two Q buffers load the next work
///   tile's Q while this one computes. Against the default kernel in one
///   process (docs/BENCHMARKS.md version 35, run 2): the short batch (B 64,
///   H 16, N 256 causal) 1.210 x, N = 1k 1.040 / 1.048 x (none / causal),
///   2k 0.992 / 1.010, 4k-16k 0.87-1.03 (two K/V stages instead of three);
///   with short work tiles (below) the band reached 2k: 2k causal 1.040 /
///   1.055 x, none 1.002 / 1.004, and 4k none 0.928, causal 1.002 (version
///   37, run 5, against the 1k band);
/// * causal sequences at D = 256 (kPersistentCausalHeadDim; MaskKind::Causal,
///   queries and keys both at most kPersistentCausalMaxSequence): the
///   default tiles in persistent CTAs (one Q buffer: two do not fit),
///   whose mirrored rounds balance the causal tiles' lengths. Against the
///   default kernel (versions 34-35, three runs): N = 256 1.014 x, 512
///   1.033, 1k 1.025-1.034, 2k 1.087-1.091, 4k 1.086-1.089, 8k 1.118 (one
///   run with the grouped order of 32 query tiles and more), 16k
///   0.974-1.009; without the mask 0.94-1.01 (not taken);
/// * a sliding window alone at D = 128 (variants == kWindow, no mask or
///   MaskKind::Causal) through which a query sees at most
///   kPersistentMaxWindowKeys keys (`windowKeys`, > 0): its work tiles are
///   as short as a short sequence's, whatever the lengths, so the same
///   persistent CTAs. Against the default kernel in one process
///   (docs/BENCHMARKS.md version 36, runs 4-7): window 256 at 8k
///   1.07-1.09 x, at 16k 1.07-1.11 x; window 512 1.04 / 1.04 x at 8k,
///   1.02 / 1.03 x at 16k; window 1024 0.96-1.02 x with two Q buffers and
///   1.01-1.02 x with one (version 39, runs A-B; between processes the
///   window kernel's time moves 10 %), so not taken; softcap and ALiBi with
///   two Q buffers lost 9-11 % (not taken).
struct LengthTiles {
  int64_t blockM = 0, blockN = 0;
  /// With a producer warpgroup (and TMA): the tiles were measured so.
  bool producer = false;
  /// Persistent CTAs (with the producer).
  bool persistent = false;
  /// Q's buffers should the call be persistent (KernelConfig::qStages): 0,
  /// the tile policy's choice (two where two K/V stages fit beside them),
  /// in the bands above, where two were measured; 1 elsewhere, for
  /// persistence asked outside them (ATTN_JIT_PERSISTENT=1): two would cost
  /// D = 128 its third K/V stage, 0.90-0.98 x one buffer at 4k-16k
  /// (docs/BENCHMARKS.md version 35), causal @ 16k 0.84 x the usual kernel
  /// (version 36, run 1); at 2k, in the band, 1.004-1.008 x causal and
  /// 0.977-0.981 x without a mask (version 37, run 8).
  int64_t qStages = 1;
  /// Whether the work tiles are short, should the call be persistent
  /// (KernelConfig::shortWorkTiles): true in the D = 128 bands above, whose
  /// work tiles visit a few K/V tiles each, so a causal grid keeps the query
  /// tile fastest (a (batch, head)'s tiles run together, sharing its K/V in
  /// L2) rather than sorting across heads, which the long D = 256 band's
  /// balance needs, and its work tiles run none of that order's code.
  /// Against main before it in one process (docs/BENCHMARKS.md version 37,
  /// run 1): the short batch 1.066 x, N = 512 / 1k causal 1.055 / 1.040 x
  /// (none 1.000 / 1.001), window 256 1.08-1.09 x, window 512 1.03-1.04 x;
  /// at D = 256 up to 2k 0.96-1.00 x (run 7: not taken).
  bool shortWorkTiles = false;
};
/// The one head dim whose tiles follow the lengths (the others are not
/// measured), and the bounds of the bands.
inline constexpr int64_t kLengthTilesHeadDim = 64;
inline constexpr int64_t kShortSequence = 2048;
inline constexpr int64_t kLongSequence = 8192;
inline constexpr int64_t kLongSequenceBlockM = 192;
inline constexpr int64_t kLongSequenceBlockN = 128;
inline constexpr int64_t kShortCausalBlock = 64;
inline constexpr int64_t kMidSequenceBlockM = 64;
inline constexpr int64_t kMidSequenceBlockN = 128;
inline constexpr int64_t kPersistentHeadDim = 128;
inline constexpr int64_t kPersistentMaxSequence = 2048;
inline constexpr int64_t kPersistentCausalHeadDim = 256;
inline constexpr int64_t kPersistentCausalMaxSequence = 8192;
inline constexpr int64_t kPersistentMaxWindowKeys = 512;
/// `windowKeys`: the most keys a query sees through a sliding window
/// (kWindow), 0 without one or when a side is unbounded.
LengthTiles lengthTiles(int64_t headDim, DType dtype, MaskKind mask,
                        unsigned variants, bool varlen, bool userMods,
                        int64_t queries, int64_t keys, int64_t windowKeys = 0);

/// How a forward call's K/V tiles are copied (KernelConfig::tma and
/// warpSpecialize), before the runtime's checks of the call's tensors and
/// driver, which can only turn TMA off.
struct Copies {
  bool tma = false;
  /// A producer warpgroup issues the copies (with TMA only:
  /// KernelConfig::resolved drops it otherwise).
  bool producer = false;
};

/// The one decision of a call's copies. `tma` and `producer` are the
/// caller's settings (the runtime's ATTN_JIT_TMA and ATTN_JIT_WARPSPEC),
/// unset to leave them to the policy: a producer by producerByDefault or
/// by the call's lengths (`lengthsProducer`: lengthTiles' producer); TMA
/// by tmaByDefault, and wherever the policy's producer is taken -- those
/// kernels were measured with TMA only (without it TMA measured slower at
/// D = 160-256, docs/BENCHMARKS.md version 27). A producer asked for where
/// the policy has none takes TMA only where TMA alone is the default (or
/// where asked for).
Copies chooseCopies(int64_t headDim, unsigned variants, bool varlen,
                    bool userMods, bool lengthsProducer,
                    std::optional<bool> tma = std::nullopt,
                    std::optional<bool> producer = std::nullopt);

/// The quick kernel of a tiered first call (the runtime's ATTN_JIT_TIERED):
/// the same attention as `full` (a resolved NVIDIA forward config: head
/// dim, dtype, mask, variants, mods, packed batch) on mma.sync with
/// kQuickBlockM x kQuickBlockN tiles, cp.async copies and two stages, its
/// PTX from LLVM at kQuickLlvmOptLevel, the form that compiles fastest -- at
/// D = 128 causal ~20 ms of ours and ~0.12 s of ptxas beyond its start on
/// the build machine, against ~170 ms and ~0.3 s for the default kernel
/// (docs/BENCHMARKS.md versions 41-42) -- so that a first call runs it while
/// the default kernel compiles. Returns false where there is none: the
/// backward, FP8, f32, split-KV and paged kernels, a config the plan refuses
/// in that form, and one that already is it.
/// 16 keys a tile: half the products of 32 keys in a loop body, 11-45 %
/// less of ptxas's time (version 42); its speed matters little, since the
/// quick kernel runs only until the default one is loaded.
inline constexpr int64_t kQuickBlockM = 64, kQuickBlockN = 16;
/// LLVM at O0: the quick kernel's compile takes ~23 ms of ours instead of
/// ~54 (a process's first ~52 instead of ~110), and ptxas, which optimises
/// the PTX anyway, only 2-18 % longer over it (docs/BENCHMARKS.md version
/// 42). Not for the default kernels: their O0 PTX is ~3.5 x longer and
/// ptxas takes more than LLVM saves.
inline constexpr int kQuickLlvmOptLevel = 0;
bool quickKernelConfig(const KernelConfig &full, KernelConfig &quick);

/// Bytes of one tile of `rows` x `headDim` elements (16-bit, or 8-bit for
/// FP8) in shared memory: padded rows (mma.sync) or 128-byte-swizzled
/// blocks (wgmma).
int64_t sharedTileBytes(int64_t rows, int64_t headDim, bool wgmma,
                        int64_t elementBytes = 2);

/// Dynamic shared memory one CTA may use on `chip` (the opt-in maximum per
/// block: 227 KB on sm_90/sm_100, 163 KB on sm_80/sm_87, 99 KB on the
/// others).
int64_t maxSharedBytesPerBlock(std::string_view chip);

/// Everything decided for one kernel: the content of #attn.config.
struct KernelPlan {
  std::string mapping = "host"; // host, mma.sync, wgmma
  std::string chip;             // NVIDIA only
  int64_t blockM = 0, blockN = 0;
  int64_t warps = 0, stages = 0; // NVIDIA only
  /// CTAs one SM must hold (NVIDIA): caps the registers of each thread.
  int64_t minCtasPerSm = 0;
  /// mma.sync: Q's A fragments stay in registers for the whole K/V loop.
  bool qInRegisters = false;
  /// wgmma: plain, pv_in_flight or softmax_overlaps_pv.
  std::string schedule = "plain";
  bool orderedIssue = false;
  bool reverseGrid = false;
  bool packGqa = false;
  bool conditionalRescale = false;
  /// K/V tiles by TMA with mbarriers (KernelConfig::tma, as resolved).
  bool tma = false;
  /// A producer warpgroup issues the TMA copies (KernelConfig::
  /// warpSpecialize, as resolved); the CTA has its 128 threads more.
  bool warpSpecialize = false;
  /// With tma: a CTA barrier per K/V tile releases the stages instead of
  /// per-warp empty mbarriers (#attn.config's barrier_per_tile).
  bool barrierPerTile = false;
  /// CTAs of a grid group, query tile by query tile (#attn.config's
  /// grid_group_ctas; gridGroupCtas() below); 0: the query tile fastest.
  int64_t gridGroupCtas = 0;
  /// narrow_compares: masks compare 32-bit gaps (AffineCoords.h).
  bool narrowCompares = false;
  /// persistent: each CTA loops over work tiles (KernelConfig::persistent,
  /// as resolved; attn-nv-persist).
  bool persistent = false;
  /// q_stages: Q's shared buffers of a persistent CTA (2: the next work
  /// tile's Q loads while this one's computes; attn-nv-persist).
  int64_t qStages = 1;
  /// Dynamic shared memory the kernel's buffers take (NVIDIA).
  int64_t sharedBytes = 0;

  int64_t threads() const { return 32 * warps; }
};

/// CTAs of a grid group (KernelPlan::gridGroupCtas) for a forward NVIDIA
/// kernel (`nvidia`, not `backward`, not `split`) whose mods read a table
/// per score that is the same for every (batch, head) (`tableSharedByHeads`:
/// a bias indexed by (q_idx, kv_idx) alone): kGridGroupCtas; whose mask
/// bounds each query tile's keys by data (`dataBoundRuns`: document ids,
/// Mask.h's MaskStructure::hasDataRuns): kGridGroupAllPairs, every (batch,
/// head) of a query tile launched together, so that the tiles whose runs are
/// long start with the others of their query tile instead of by head, late; so
/// does a persistent causal grid of long work tiles (`persistentLongestFirst`:
/// its CTAs take work tiles in a fixed order, which must then run longest
/// first across heads; not KernelConfig::shortWorkTiles); 0 otherwise, where
/// the query tile stays the fastest grid index for K/V's reuse in L2.
inline constexpr int64_t kGridGroupCtas = 256;
inline constexpr int64_t kGridGroupAllPairs = int64_t(1) << 30;
int64_t gridGroupCtas(bool nvidia, bool backward, bool split,
                      bool tableSharedByHeads, bool dataBoundRuns,
                      bool persistentLongestFirst = false);

/// Plans `config` for NVIDIA (`nvidia`) or the host. Returns false with the
/// reason in `error` when the configuration cannot be compiled: every bound
/// of Limits.h (tile sides, head dims, threads, the chip), a mapping the chip
/// lacks, tiles the mapping cannot split, an unknown name, tiles beyond the
/// chip's shared memory or far beyond a thread's registers. The one place
/// where a configuration is checked before any code is generated.
bool planKernel(const KernelConfig &config, bool nvidia, KernelPlan &plan,
                std::string &error);

} // namespace attn::compiler

#endif // ATTN_COMPILER_TILEPOLICY_H
