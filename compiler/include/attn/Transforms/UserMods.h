//===- UserMods.h - A user's score_mod / mask_mod as MLIR text --*- C++ -*-===//
//
// Users of the runtime write their own variant as MLIR functions:
//
//   func.func @score_mod(%s: f32, %b: index, %h: index, %q: index,
//                        %kv: index, <captures>) -> f32
//   func.func @mask_mod(%b: index, %h: index, %q: index, %kv: index,
//                       <captures>) -> i1
//
// either or both, with the same captures (f32, i32, i64 or index scalars;
// memrefs of f32 or i32 with dynamic sizes and strides). The runtime puts
// the text on the module (kUserModsAttr) and attn-create-kernel makes the
// captures kernel arguments, after the named variants' ones, and the bodies
// the sdpa's regions; the region verifier then checks them with locations
// in the text.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_USERMODS_H
#define ATTN_TRANSFORMS_USERMODS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::attn {

/// The module attribute holding the user's mods (a string).
inline constexpr const char *kUserModsAttr = "attn.user_mods";
/// The buffer name of the text in diagnostics ("user-mods:3:5: ...").
inline constexpr const char *kUserModsBuffer = "user-mods";

struct UserMods {
  OwningOpRef<ModuleOp> module;
  func::FuncOp scoreMod, maskMod;
  SmallVector<Type> captures;
};

/// Parses and checks `text`; diagnostics go to the context's handler.
FailureOr<UserMods> parseUserMods(StringRef text, MLIRContext *ctx);

/// The mods printed without locations in generic form: equal for texts
/// that differ only in names, whitespace or comments (a cache key).
std::string canonicalUserMods(const UserMods &mods);

/// Appends `args` (one per capture) to sdpa's captures and clones the mods
/// into its regions (its existing regions get the new block arguments). A
/// region the named variants already wrote is a diagnostic. For attn.sdpa
/// and attn.sdpa_backward.
template <typename OpTy>
LogicalResult attachUserMods(OpBuilder &b, OpTy sdpa, const UserMods &mods,
                             ValueRange args);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_USERMODS_H
