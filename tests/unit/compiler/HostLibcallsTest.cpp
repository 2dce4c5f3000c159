// The host JIT's own __truncsfbf2 (HostLibcalls.h): f32 -> bf16 rounded to
// nearest even, against a reference that picks the nearer of the two bf16
// neighbours in double arithmetic, on every exponent with mantissas at,
// around and between the halfway points, and on zeros, infinities, NaNs
// and the overflow boundary.

#include "attn/Compiler/HostLibcalls.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

double bf16Value(uint16_t b) {
  return static_cast<double>(fromBits(static_cast<uint32_t>(b) << 16));
}

/// The nearer of the two bf16 values around a finite x, the even one on a
/// tie; beyond the largest finite bf16 by half a step or more: infinity.
uint16_t reference(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  uint16_t down = static_cast<uint16_t>(u >> 16);
  if ((u & 0xffffu) == 0)
    return down;
  uint16_t up = static_cast<uint16_t>(down + 1); // away from zero
  // Past the largest finite bf16 the next step is infinity, which counts
  // as 2^128 (one step on): rounding goes there from the halfway point.
  double upValue = (up & 0x7fffu) == 0x7f80u
                       ? std::copysign(std::ldexp(1.0, 128), x)
                       : bf16Value(up);
  double dd = std::fabs(static_cast<double>(x) - bf16Value(down));
  double du = std::fabs(static_cast<double>(x) - upValue);
  if (dd < du)
    return down;
  if (du < dd)
    return up;
  return (down & 1u) ? up : down;
}

TEST(HostLibcallsTest, RoundsToNearestEven) {
  std::mt19937 gen(7);
  int checked = 0;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t exponent = 0; exponent < 255; ++exponent)
      for (uint32_t top = 0; top < 128; top += 5)
        for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u,
                             0xffffu, static_cast<uint32_t>(gen() & 0xffffu)}) {
          uint32_t u = sign << 31 | exponent << 23 | top << 16 | low;
          float x = fromBits(u);
          ASSERT_EQ(attn::compiler::truncF32ToBf16Bits(x), reference(x))
              << std::hex << "bits 0x" << u;
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 255 * 26 * 7);
}

TEST(HostLibcallsTest, SpecialValues) {
  using attn::compiler::truncF32ToBf16Bits;
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(truncF32ToBf16Bits(0.0f), 0x0000);
  EXPECT_EQ(truncF32ToBf16Bits(-0.0f), 0x8000);
  EXPECT_EQ(truncF32ToBf16Bits(inf), 0x7f80);
  EXPECT_EQ(truncF32ToBf16Bits(-inf), 0xff80);
  EXPECT_EQ(truncF32ToBf16Bits(1.0f), 0x3f80);
  // The largest float rounds to infinity; the largest bf16 stays.
  EXPECT_EQ(truncF32ToBf16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(truncF32ToBf16Bits(fromBits(0x7f7f0000u)), 0x7f7f);
  // NaNs stay NaNs (quiet), of their sign, even a signalling one whose
  // payload lies only in the low bits.
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    uint16_t b = truncF32ToBf16Bits(fromBits(nan));
    EXPECT_EQ(b & 0x7f80, 0x7f80) << std::hex << nan;
    EXPECT_NE(b & 0x007f, 0) << std::hex << nan;
    EXPECT_EQ(b >> 15, nan >> 31) << std::hex << nan;
  }
}

} // namespace
