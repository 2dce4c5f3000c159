//===- ScoreModGrad.h - The derivative of a score_mod -----------*- C++ -*-===//
//
// The backward pass needs ∂S'/∂S of a score_mod S' = mod(S, b, h, q, k,
// captures...). It is formed from the region by forward-mode
// differentiation, op by op: one rule per op kind below, ops that do not
// depend on the score (coordinates, captures, loads) pass through, and an op
// on the score without a rule is refused. One set of rules serves the
// verifier of attn.sdpa_backward (which ops are allowed) and the
// decomposition (which builds the derivative).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_SCOREMODGRAD_H
#define ATTN_DIALECT_ATTN_IR_SCOREMODGRAD_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

namespace mlir::attn {

/// Checks that the score_mod `mod` (one block: score, b, h, q_idx, kv_idx,
/// captures...) can be differentiated with respect to its score; on failure
/// emits an error on the offending op, naming `owner`.
LogicalResult verifyScoreModDifferentiable(Operation *owner, Region &mod);

/// Clones the body of `mod` at `b` with its block arguments bound to
/// `leading` (score, b, h, q_idx, kv_idx) then `captures`, and builds
/// ∂(yielded)/∂(score) alongside; returns (yielded value, derivative).
/// `mod` must pass verifyScoreModDifferentiable.
std::pair<Value, Value> buildScoreModWithDerivative(OpBuilder &b,
                                                    Location loc, Region &mod,
                                                    ValueRange leading,
                                                    ValueRange captures);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_SCOREMODGRAD_H
