//===- Fp8ApiHostTest.cpp - attn_forward_fp8 on the host vs float64 -------===//
//
// attn_forward_fp8 through the C API on the host device, as a user calls it:
// Q in the (B, N, H, D) layout, K in (B, H, N, D), V with its keys
// contiguous ((B, Hkv, D, Nk) storage, rows padded to 16 keys), grouped-query
// heads, an odd key count, no mask and bottom-right causal; O (bf16) and the
// LSE poisoned. Against a float64 reference of the dequantised inputs
// (E4M3.h): P's rounding to e4m3 bounds the error by 2^-4 max|V| (plus
// bf16's 2^-9). Then the calls the entry refuses, each with its message.
//
//===----------------------------------------------------------------------===//

#include "E4M3.h"
#include "ReferenceRow.h"
#include "attn-jit/attn_jit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int64_t B = 2, H = 4, Hkv = 2, D = 64, Nq = 45, Nk = 203;
/// V's key rows padded to 16 keys (16-byte strides, as CUDA needs).
constexpr int64_t kPaddedKeys = (Nk + 15) / 16 * 16;

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

struct Fp8Inputs {
  attn::test::Quantised q, k, v; // q: (B, Nq, H, D); k, v: (B, Hkv, Nk, D)
  std::vector<uint8_t> vColumns;  // (B, Hkv, D, kPaddedKeys)
  std::vector<uint16_t> o;        // (B, H, Nq, D) bf16
  std::vector<float> lse;

  Fp8Inputs() {
    std::mt19937 gen(5);
    std::normal_distribution<float> normal;
    auto random = [&](int64_t n, float sigma) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float &e : x)
        e = sigma * normal(gen);
      return x;
    };
    q = attn::test::quantise(random(B * Nq * H * D, 1.5f));
    k = attn::test::quantise(random(B * Hkv * Nk * D, 1.5f));
    v = attn::test::quantise(random(B * Hkv * Nk * D, 3.0f));
    vColumns.assign(size_t(B * Hkv * D * kPaddedKeys), 0);
    for (int64_t bh = 0; bh < B * Hkv; ++bh)
      for (int64_t j = 0; j < Nk; ++j)
        for (int64_t d = 0; d < D; ++d)
          vColumns[size_t((bh * D + d) * kPaddedKeys + j)] =
              v.codes[size_t((bh * Nk + j) * D + d)];
    o.assign(size_t(B * H * Nq * D), 0x7fc0); // bf16 NaN
    lse.assign(size_t(B * H * Nq), std::numeric_limits<float>::quiet_NaN());
  }

  attn_fp8_args args(attn_mask mask) {
    attn_fp8_args a{};
    attn_fwd_args &f = a.fwd;
    f.q = q.codes.data(), f.k = k.codes.data(), f.v = vColumns.data();
    f.o = o.data(), f.lse = lse.data();
    f.batch = B, f.heads = H, f.kv_heads = Hkv;
    f.seqlen_q = Nq, f.seqlen_k = Nk, f.head_dim = D;
    const int64_t qs[4] = {Nq * H * D, D, H * D, 1};
    const int64_t ks[4] = {Hkv * Nk * D, Nk * D, D, 1};
    const int64_t vs[4] = {Hkv * D * kPaddedKeys, D * kPaddedKeys, 1,
                           kPaddedKeys};
    const int64_t os[4] = {H * Nq * D, Nq * D, D, 1};
    for (int i = 0; i < 4; ++i)
      f.q_strides[i] = qs[i], f.k_strides[i] = ks[i], f.v_strides[i] = vs[i],
      f.o_strides[i] = os[i];
    f.lse_strides[0] = H * Nq, f.lse_strides[1] = Nq, f.lse_strides[2] = 1;
    f.dtype = ATTN_DTYPE_E4M3;
    f.mask = mask;
    f.device = ATTN_DEVICE_HOST;
    a.q_descale = q.descale, a.k_descale = k.descale, a.v_descale = v.descale;
    return a;
  }
};

class Fp8ApiHostTest : public ::testing::TestWithParam<attn_mask> {};

TEST_P(Fp8ApiHostTest, MatchesFloat64OfDequantisedInputs) {
  Fp8Inputs in;
  attn_fp8_args a = in.args(GetParam());
  ASSERT_EQ(attn_forward_fp8(&a), ATTN_OK) << attn_last_error();
  double scale = 1.0 / std::sqrt(double(D)), maxV = 0, maxError = 0,
         maxLseError = 0;
  for (float x : in.v.values)
    maxV = std::max(maxV, double(std::fabs(x)));
  bool causal = GetParam() == ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Nq; ++i) {
        int64_t kvh = h / (H / Hkv);
        const float *qRow = &in.q.values[size_t(((b * Nq + i) * H + h) * D)];
        const float *kHead = &in.k.values[size_t((b * Hkv + kvh) * Nk * D)];
        const float *vHead = &in.v.values[size_t((b * Hkv + kvh) * Nk * D)];
        attn::test::ReferenceRow ref = attn::test::referenceRow(
            Nk, D, scale, qRow, [&](int j) { return kHead + j * D; },
            [&](int j) { return vHead + j * D; },
            [&](int j) { return !causal || j <= i + (Nk - Nq); },
            [](int, double x) { return x; });
        size_t row = size_t((b * H + h) * Nq + i);
        for (int64_t d = 0; d < D; ++d) {
          double got = bf16ToFloat(in.o[row * D + d]);
          ASSERT_FALSE(std::isnan(got)) << "O unwritten at row " << row;
          maxError = std::max(maxError, std::fabs(got - ref.o[d]));
        }
        maxLseError = std::max(maxLseError, std::fabs(in.lse[row] - ref.lse));
      }
  std::printf("attn_forward_fp8 (host): O error max %.3g (max|V| %.3f), LSE "
              "max %.3g\n",
              maxError, maxV, maxLseError);
  EXPECT_LE(maxError, (std::ldexp(1.0, -4) + std::ldexp(1.0, -9)) * maxV);
  EXPECT_LE(maxLseError, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Masks, Fp8ApiHostTest,
                         ::testing::Values(ATTN_MASK_NONE,
                                           ATTN_MASK_CAUSAL_BOTTOM_RIGHT));

/// Each refused call names what is wrong and writes nothing.
TEST(Fp8ApiRefusedCallsTest, EachNamesWhatIsWrong) {
  Fp8Inputs in;
  auto expectError = [&](attn_fp8_args a, attn_status status,
                         const char *message) {
    EXPECT_EQ(attn_forward_fp8(&a), status);
    std::string error = attn_last_error();
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_TRUE(std::isnan(bf16ToFloat(in.o[0])));
  };
  attn_fp8_args a = in.args(ATTN_MASK_NONE);
  a.v_descale = 0;
  expectError(a, ATTN_ERROR_INVALID_ARGUMENT, "v_descale = 0");
  a = in.args(ATTN_MASK_NONE);
  a.q_descale = std::numeric_limits<float>::infinity();
  expectError(a, ATTN_ERROR_INVALID_ARGUMENT, "finite and > 0");
  a = in.args(ATTN_MASK_NONE);
  a.fwd.dtype = ATTN_DTYPE_BF16;
  expectError(a, ATTN_ERROR_INVALID_ARGUMENT, "takes dtype ATTN_DTYPE_E4M3");
  // V in the usual layout (dim contiguous) is not what the entry reads.
  a = in.args(ATTN_MASK_NONE);
  a.fwd.v_strides[2] = D, a.fwd.v_strides[3] = 1;
  expectError(a, ATTN_ERROR_INVALID_ARGUMENT, "keys contiguous");
  a = in.args(ATTN_MASK_NONE);
  a.fwd.variant.flags = ATTN_VARIANT_SOFTCAP;
  a.fwd.variant.softcap = 30;
  expectError(a, ATTN_ERROR_UNSUPPORTED, "no variant");
  // e4m3 through attn_forward, which has no descale factors.
  attn_fwd_args plain = in.args(ATTN_MASK_NONE).fwd;
  EXPECT_EQ(attn_forward(&plain), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("attn_forward_fp8"),
            std::string::npos);
  EXPECT_EQ(attn_forward_fp8(nullptr), ATTN_ERROR_INVALID_ARGUMENT);
}

} // namespace
