//===- Variant.h - attn_variant: checks and kernel arguments ----*- C++ -*-===//
//
// The runtime's side of the named variants: what a valid attn_variant is,
// and the capture arguments (KernelABI.h) a kernel compiled for its flags
// takes, built once here for both the CUDA launch and the host call.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_VARIANT_H
#define ATTN_RUNTIME_VARIANT_H

#include "attn-jit/Runtime.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/KernelABI.h"
#include "SplitKv.h"
#include "Validate.h"

#include <vector>

namespace attn::rt {

/// A negative window bound (unbounded) is passed as this many keys: more
/// than any sequence a call may have, so the window compares stay exact.
inline constexpr int64_t kUnboundedWindow = int64_t(1) << 40;

/// The most keys one query sees through args' sliding window, the causal
/// masks' bound included (a key past the diagonal is never seen); 0 without
/// ATTN_VARIANT_WINDOW or when a side stays unbounded.
int64_t windowKeys(const attn_fwd_args &args);

/// Checks args.variant against the rest of the call (flags known, causal
/// mask for prefix-LM, a finite positive softcap, pointers present and
/// aligned for non-empty calls).
Status validateVariant(const attn_fwd_args &args);

/// The values of a kernel's arguments after its scalars (abi::captureKinds),
/// in order: a variable-length call's offsets (`varlen`, if any), a split
/// call's count and workspaces (`split`, if any), the captures of
/// kCaptureArgs args.variant's flags select, then `user`'s (a user's mods),
/// if any.
std::vector<abi::CaptureValue>
captureValues(const attn_fwd_args &args,
              const compiler::UserModsInfo *user = nullptr,
              const VarlenCall *varlen = nullptr,
              const SplitCall *split = nullptr);

/// Checks args.variant.captures against what the user's mods declare.
Status validateUserCaptures(const attn_fwd_args &args,
                            const compiler::UserModsInfo &user);


/// The flags whose mods read a captured tensor by head or position: such a
/// kernel cannot pack query heads (padding rows belong to no head).
inline constexpr unsigned kVariantsReadingTensors =
    abi::kAlibi | abi::kDocument | abi::kBias;

} // namespace attn::rt

#endif // ATTN_RUNTIME_VARIANT_H
