//===- RowErrors.h - Packed rows' errors against float64 --------*- C++ -*-===//
//
// The checks the host tests of packed rows (total_q, H, D) share: each row
// of a sequence written and within a tolerance of its float64 reference
// (ReferenceRow.h), a row that sees no key with LSE = -inf, and the rows of
// no sequence untouched (NaN).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TESTS_UNIT_COMPILER_ROWERRORS_H
#define ATTN_TESTS_UNIT_COMPILER_ROWERRORS_H

#include "ReferenceRow.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace attn::test {

/// The largest |O - ref| and |LSE - ref| over the rows added.
struct RowErrors {
  double out = 0, lse = 0;

  /// Row `o` (D values) and its `lse` against `ref`; false, with a failure
  /// recorded, when the row was not written (NaN).
  bool add(const ReferenceRow &ref, const float *o, int D, float lse,
           const std::string &where) {
    for (int d = 0; d < D; ++d) {
      if (std::isnan(o[d])) {
        ADD_FAILURE() << "NaN in O at " << where;
        return false;
      }
      out = std::max(out, std::abs(o[d] - ref.o[d]));
    }
    if (std::isinf(ref.lse))
      EXPECT_TRUE(std::isinf(lse) && lse < 0) << where << ": " << lse;
    else
      this->lse = std::max(this->lse, std::abs(lse - ref.lse));
    return true;
  }
  void expectWithin(double tolerance) const {
    EXPECT_LT(out, tolerance);
    EXPECT_LT(lse, tolerance);
  }
};

/// Packed rows [first, total) of O (total, H, D) and LSE (H, total) are
/// still NaN: no sequence owns them.
inline void expectUntouched(const float *o, const float *lse, int64_t first,
                            int64_t total, int H, int D) {
  for (int64_t row = first; row < total; ++row)
    for (int h = 0; h < H; ++h) {
      EXPECT_TRUE(std::isnan(lse[h * total + row]));
      for (int d = 0; d < D; ++d)
        EXPECT_TRUE(std::isnan(o[(row * H + h) * D + d]));
    }
}

} // namespace attn::test

#endif // ATTN_TESTS_UNIT_COMPILER_ROWERRORS_H
