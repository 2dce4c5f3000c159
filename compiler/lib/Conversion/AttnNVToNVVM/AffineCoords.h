//===- AffineCoords.h - a map body's integers as base + constant -*- C++ -*-===//
//
// A map runs its body once per value a thread holds, at coordinates that
// are the thread's base plus each value's constant offset (Elementwise.cpp).
// Integers the body derives from them by adding, subtracting and casting
// stay "base + constant", with the base the same for every value: a
// conversion of such an integer to float is then made once per thread and
// each value adds its constant in float. sitofp is a quarter-rate
// instruction on NVIDIA (16 a clock per SM on sm_80 and sm_90, like exp2),
// which ALiBi's slope · (j - i) paid on every score beside the softmax's
// exp2. Exact while the base, the constant and their sum are below 2^24 in
// magnitude, i.e. for positions of sequences shorter than 16M tokens
// (kExactFloatIntegers); past that both forms round to a neighbouring float.
// Such a float times a value defined outside the body (ALiBi's slope, for
// the tile) is u · k + u · base: one fused multiply-add per value, the
// product with the base once per thread (a rounding of u · base more than
// the single product: below 2^-24 of |u · base|).
// A signed comparison of two such integers (a mask's col <= row + w) is
// (base_l - base_r) against (offset_r - offset_l): the difference of the
// bases once per thread, saturated to ±kGapBound and narrowed to i32, then
// one 32-bit compare with an immediate per value, where the index compare
// took two 64-bit adds and a 64-bit compare (two ISETPs) per value.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNNVTONVVM_AFFINECOORDS_H
#define ATTN_CONVERSION_ATTNNVTONVVM_AFFINECOORDS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <tuple>

namespace mlir::attn::nv {

/// Integers up to this magnitude convert to f32 exactly.
inline constexpr int64_t kExactFloatIntegers = int64_t(1) << 24;
/// A difference of bases is saturated to ±kGapBound before it narrows to
/// i32: beyond 2 · kExactFloatIntegers (the largest offset difference) its
/// comparisons do not change, and it fits an i32.
inline constexpr int64_t kGapBound = int64_t(1) << 30;
static_assert(kGapBound > 2 * kExactFloatIntegers && kGapBound < (int64_t(1) << 31),
              "a saturated gap keeps every comparison and fits an i32");

/// The forms of one map body across the values it is cloned for: the
/// element-independent parts are built once (memoised), at the builder's
/// insertion point when first needed.
class AffineCoords {
public:
  /// `narrowCompares`: compare as 32-bit gaps (below), where the kernel's
  /// configuration says so (#attn.config's narrow_compares: TilePolicy
  /// gives it the kernels with registers to spare for the gaps).
  AffineCoords(OpBuilder &b, Location loc, Block &body, bool narrowCompares)
      : b(b), loc(loc), body(body), narrowCompares(narrowCompares) {}

  /// Starts the clone for a new value: its coordinate `arg` is `base`
  /// (element-independent) plus `offset`.
  void startValue() {
    forms.clear();
    floatForms.clear();
  }
  void setCoordinate(Value arg, Value base, int64_t offset) {
    forms[arg] = Form{base, offset};
  }

  /// Clones `op` of the body for the current value, or, for a sitofp of an
  /// affine integer, builds base-once-plus-constant; records the forms of
  /// its integer results. `mapping` maps the body's values to this value's.
  void clone(Operation &op, IRMapping &mapping);

private:
  /// base + offset, |offset| < kExactFloatIntegers; a null base is 0.
  struct Form {
    Value base;
    int64_t offset;
  };
  std::optional<Form> formOf(Value v);
  /// Whether `v` is defined outside the body: the same for every value.
  bool uniform(Value v) const;
  enum class Kind { Add, Sub, Cast, ToFloat, Zero, MulF, Gap };
  /// The element-independent `kind` of `lhs`, `rhs` (null: unary) as
  /// `type`, built once.
  Value shared(Kind kind, Value lhs, Value rhs, Type type);
  /// The value of `form` as `type` (a null base: the constant).
  Value materialize(Form form, Type type);
  /// lhs - rhs (i64 or index) saturated to ±kGapBound, as i32 (exact while
  /// the bases differ by less than 2^63: the kernel's positions, lengths
  /// and windows are below 2^41).
  Value gap(Value lhs, Value rhs);

  OpBuilder &b;
  Location loc;
  Block &body;
  bool narrowCompares;
  llvm::DenseMap<Value, Form> forms;
  /// sitofp results as float base + offset.
  llvm::DenseMap<Value, Form> floatForms;
  llvm::DenseMap<std::tuple<unsigned, Value, Value, Type>, Value> memo;
};

} // namespace mlir::attn::nv

#endif // ATTN_CONVERSION_ATTNNVTONVVM_AFFINECOORDS_H
