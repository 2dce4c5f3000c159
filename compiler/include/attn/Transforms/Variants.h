//===- Variants.h - The named attention variants as mods --------*- C++ -*-===//
//
// The runtime's named variants (sliding window, prefix-LM, document mask,
// ALiBi, additive bias, softcap; attn/Compiler/KernelABI.h) written as
// score_mod / mask_mod regions of an attn.sdpa: nothing downstream knows a
// variant by name.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_VARIANTS_H
#define ATTN_TRANSFORMS_VARIANTS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <optional>

namespace mlir::attn {

/// Parses "window,softcap,..." (KernelABI.h's kVariantNames) into the
/// variant bits; nullopt for an unknown name.
std::optional<unsigned> parseVariants(StringRef names);

/// Gives `sdpa` the mods of `variants`, reading `args` (the kernel's capture
/// arguments, in kCaptureArgs order, only those of `variants`). With the
/// prefix-LM variant the causal mask moves into the mask_mod (it is or-ed
/// with the prefix), so the sdpa's mask becomes none. For attn.sdpa and
/// attn.sdpa_backward (the same mods, so the gradients are the forward's).
template <typename OpTy>
void buildVariantMods(OpBuilder &b, Location loc, OpTy sdpa,
                      unsigned variants, ValueRange args);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_VARIANTS_H
