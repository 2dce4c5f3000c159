//===- RegisterSplit.h - setmaxnreg's split of a CTA -----------*- C++ -*-===//
//
// How many registers the consumer warpgroups and the producer take, decided
// once for attn-nv-warp-specialize (which makes the split) and
// attn-nv-persist (which gives the producer more work per tile).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_NVIDIA_REGISTERSPLIT_H
#define ATTN_NVIDIA_REGISTERSPLIT_H

#include "attn/Dialect/AttnNV/IR/WarpSpecialize.h"

#include <cstdint>

namespace mlir::attn::nv {

/// The register split of `consumerGroups` consumer warpgroups and the
/// producer: the producer's loop needs few registers (addresses, the tile
/// index), the consumers' accumulators all they can get. Two consumer
/// warpgroups take CUTLASS's 232 / 40 (2 · 128 · 232 + 128 · 40 = 64512 of
/// the SM's 65536; 232 measured on the H200, docs/BENCHMARKS.md versions
/// 26-28); three take FlashAttention-3's 160 / 32 (3 · 128 · 160 + 128 · 32
/// = 65536): what is left, in setmaxnreg's steps.
/// A persistent producer that searches per work tile (a document mask's
/// key range, attn-nv-persist) keeps the search's probes in flight: at 40
/// registers ptxas 13.0 spilled 108 bytes at D = 128, at 56 none (the
/// consumers then take 224, spill-free).
struct RegisterSplit {
  int64_t consumer, producer;
};
inline constexpr int64_t kConsumerRegisters = 232;
inline constexpr int64_t kProducerRegisters = 40;
inline constexpr int64_t kProducerRegistersBesideThree = 32;
inline constexpr int64_t kSearchingProducerRegisters = 56;

constexpr RegisterSplit registerSplit(int64_t consumerGroups,
                                      bool producerSearches = false) {
  int64_t producer = producerSearches     ? kSearchingProducerRegisters
                     : consumerGroups > 2 ? kProducerRegistersBesideThree
                                          : kProducerRegisters;
  int64_t left = (kRegistersPerSm / kWarpgroupThreads - producer) /
                 consumerGroups / kSetMaxRegistersStep * kSetMaxRegistersStep;
  return {left < kConsumerRegisters ? left : kConsumerRegisters, producer};
}
static_assert(registerSplit(2).consumer == 232 &&
                  registerSplit(2).producer == 40,
              "two consumer warpgroups keep the measured split");
static_assert(registerSplit(3).consumer == 160 &&
                  registerSplit(3).producer == 32,
              "three consumer warpgroups fill the SM");
static_assert(registerSplit(2, true).consumer == 224,
              "a searching producer costs the consumers one step");

} // namespace mlir::attn::nv

#endif // ATTN_NVIDIA_REGISTERSPLIT_H
