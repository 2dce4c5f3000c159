//===- E4M3.h - float8_e4m3fn codes for the FP8 tests -----------*- C++ -*-===//
//
// e4m3 codes made and read by brute force over the 256 codes, independently
// of the compiler's bit operations (HostExpandE4M3.cpp), and per-tensor
// quantisation as FP8 users do it (descale = amax / 448).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TESTS_UNIT_COMPILER_E4M3_H
#define ATTN_TESTS_UNIT_COMPILER_E4M3_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace attn::test {

/// e4m3's largest finite value, which the per-tensor scaling maps amax to.
inline constexpr double kE4M3Max = 448.0;

/// The value of e4m3 code `c` (NaN for 0x7f and 0xff).
inline double decodeE4M3(uint8_t c) {
  int sign = c >> 7, exponent = (c >> 3) & 15, mantissa = c & 7;
  if (exponent == 15 && mantissa == 7)
    return std::numeric_limits<double>::quiet_NaN();
  double magnitude = exponent == 0 ? std::ldexp(mantissa, -9)
                                   : std::ldexp(8 + mantissa, exponent - 10);
  return sign ? -magnitude : magnitude;
}

/// The nearest finite e4m3 code to `x` (ties to the even code), saturating.
inline uint8_t encodeE4M3(double x) {
  uint8_t best = 0;
  double bestError = INFINITY;
  for (int c = 0; c < 256; ++c) {
    double v = decodeE4M3(static_cast<uint8_t>(c));
    if (std::isnan(v))
      continue;
    double error = std::fabs(v - x);
    if (error < bestError || (error == bestError && (c & 1) == 0)) {
      best = static_cast<uint8_t>(c);
      bestError = error;
    }
  }
  return best;
}

/// A tensor quantised per tensor: its codes, its descale factor and the
/// dequantised values a reference reads (same order as the input).
struct Quantised {
  std::vector<uint8_t> codes;
  std::vector<float> values;
  float descale = 1;
};

inline Quantised quantise(const std::vector<float> &x) {
  double amax = 0;
  for (float v : x)
    amax = std::max(amax, double(std::fabs(v)));
  Quantised q;
  q.descale = static_cast<float>(amax / kE4M3Max);
  for (float v : x) {
    uint8_t c = encodeE4M3(v / q.descale);
    q.codes.push_back(c);
    q.values.push_back(static_cast<float>(decodeE4M3(c) * q.descale));
  }
  return q;
}

} // namespace attn::test

#endif // ATTN_TESTS_UNIT_COMPILER_E4M3_H
