//===- ReferenceRow.h - Float64 attention of one query row ------*- C++ -*-===//
//
// The host tests' reference, from the semantics of attn_jit.h and
// independently of the compiler: one query row over the keys it sees, each
// key's and value's D elements contiguous wherever the test's layout puts
// them (packed rows, pages).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TESTS_UNIT_COMPILER_REFERENCEROW_H
#define ATTN_TESTS_UNIT_COMPILER_REFERENCEROW_H

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace attn::test {

struct ReferenceRow {
  std::vector<double> o; // D values; 0 for a row that sees no key
  double lse;            // -inf for a row that sees no key
};

/// softmax(score(j, scale · q·k_j) over the keys j < nk with seen(j)) · V.
inline ReferenceRow
referenceRow(int nk, int D, double scale, const float *q,
             const std::function<const float *(int j)> &key,
             const std::function<const float *(int j)> &value,
             const std::function<bool(int j)> &seen,
             const std::function<double(int j, double x)> &score) {
  std::vector<double> s(nk, -INFINITY);
  double m = -INFINITY;
  for (int j = 0; j < nk; ++j) {
    if (!seen(j))
      continue;
    const float *k = key(j);
    double x = 0;
    for (int d = 0; d < D; ++d)
      x += double(q[d]) * k[d];
    s[j] = score(j, x * scale);
    m = std::max(m, s[j]);
  }
  ReferenceRow row{std::vector<double>(D, 0.0), -INFINITY};
  if (m == -INFINITY)
    return row;
  double l = 0;
  for (int j = 0; j < nk; ++j) {
    if (s[j] == -INFINITY)
      continue;
    double p = std::exp(s[j] - m);
    l += p;
    const float *v = value(j);
    for (int d = 0; d < D; ++d)
      row.o[d] += p * v[d];
  }
  for (double &x : row.o)
    x /= l;
  row.lse = m + std::log(l);
  return row;
}

} // namespace attn::test

#endif // ATTN_TESTS_UNIT_COMPILER_REFERENCEROW_H
