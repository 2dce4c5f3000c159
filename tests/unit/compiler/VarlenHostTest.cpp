//===- VarlenHostTest.cpp - Variable-length batches on the CPU vs float64 -===//
//
// attn_forward_varlen through the C API on the host device, against a
// float64 reference that runs each sequence on its own, from the semantics
// of attn_jit.h -- independently of the compiler. A ragged batch (lengths
// from 0 to 5000, Nq_b != Nk_b, a chunked-prefill sequence with few queries
// over many keys), grouped-query heads, both causal alignments, a window
// and ALiBi, a user mask_mod that reads the sequence index; outputs
// poisoned with NaN; rows outside every sequence must stay untouched.
//
//===----------------------------------------------------------------------===//

#include "ReferenceRow.h"
#include "attn-jit/attn_jit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace attn;

constexpr int H = 4, Hkv = 2, D = 32;

/// Query and key lengths per sequence: zeros and ones on both sides,
/// Nq > Nk and Nq < Nk, one long chunked-prefill sequence (64 queries over
/// 5000 keys), the rest random in [1, 700].
struct Batch {
  std::vector<int32_t> lenQ, lenK, cuQ, cuK;
  int64_t totalQ = 0, totalK = 0, maxQ = 0, maxK = 0;
  explicit Batch(unsigned seed) {
    lenQ = {1, 0, 300, 5, 64, 1};
    lenK = {1, 7, 0, 130, 5000, 2};
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> len(1, 700);
    for (int i = 0; i < 5; ++i) {
      lenQ.push_back(len(gen));
      lenK.push_back(len(gen));
    }
    cuQ = {0};
    cuK = {0};
    for (size_t b = 0; b < lenQ.size(); ++b) {
      cuQ.push_back(cuQ.back() + lenQ[b]);
      cuK.push_back(cuK.back() + lenK[b]);
      maxQ = std::max<int64_t>(maxQ, lenQ[b]);
      maxK = std::max<int64_t>(maxK, lenK[b]);
    }
    // Rows past the last sequence belong to none: never written.
    totalQ = cuQ.back() + 3;
    totalK = cuK.back() + 2;
  }
  int64_t sequences() const { return static_cast<int64_t>(lenQ.size()); }
};

/// Which keys a query sees and its score, per sequence b (positions
/// relative to the sequence's start).
using Seen = std::function<bool(int b, int h, int i, int j, int nq, int nk)>;
using Score = std::function<double(int h, int i, int j, double x)>;

struct Result {
  std::vector<float> o, lse;
};

class VarlenHostTest : public ::testing::Test {
protected:
  VarlenHostTest() : batch(11) {
    std::mt19937 gen(3);
    std::normal_distribution<float> normal(0, 1);
    q.resize(batch.totalQ * H * D);
    k.resize(batch.totalK * Hkv * D);
    v.resize(k.size());
    for (auto *t : {&q, &k, &v})
      for (float &x : *t)
        x = normal(gen);
    // ALiBi's slopes / 256: distances reach 5000 here, and a term of ~1000
    // would leave float32 scores only ~1e-4 absolute precision.
    for (int h = 0; h < H; ++h)
      slopes[h] = static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / H) / 256);
  }

  attn_varlen_args args(Result &out) {
    out.o.assign(q.size(), NAN);
    out.lse.assign(batch.totalQ * H, NAN);
    attn_varlen_args a{};
    a.fwd.q = q.data();
    a.fwd.k = k.data();
    a.fwd.v = v.data();
    a.fwd.o = out.o.data();
    a.fwd.lse = out.lse.data();
    a.fwd.batch = batch.sequences();
    a.fwd.heads = H;
    a.fwd.kv_heads = Hkv;
    a.fwd.seqlen_q = batch.totalQ;
    a.fwd.seqlen_k = batch.totalK;
    a.fwd.head_dim = D;
    a.fwd.dtype = ATTN_DTYPE_F32;
    a.fwd.device = ATTN_DEVICE_HOST;
    // Small tiles: many tiles per sequence, starts inside tiles.
    a.fwd.block_m = 16;
    a.fwd.block_n = 32;
    a.cu_seqlens_q = batch.cuQ.data();
    a.cu_seqlens_k = batch.cuK.data();
    a.max_seqlen_q = batch.maxQ;
    a.max_seqlen_k = batch.maxK;
    attn_set_varlen_strides(&a);
    return a;
  }

  /// Largest |O - ref| and |LSE - ref| (both -inf counts as 0) over every
  /// row of every sequence; rows of no sequence must still be NaN.
  void expectMatches(const Result &out, const Seen &seen, const Score &score,
                     double tolerance = 2e-5) {
    const double scale = 1 / std::sqrt(double(D));
    double outErr = 0, lseErr = 0;
    for (int b = 0; b < batch.sequences(); ++b) {
      int nq = batch.lenQ[b], nk = batch.lenK[b];
      int q0 = batch.cuQ[b], k0 = batch.cuK[b];
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < nq; ++i) {
          int kh = h / (H / Hkv);
          auto row = [&](const std::vector<float> &t) {
            return [&, kh](int j) { return &t[((k0 + j) * Hkv + kh) * D]; };
          };
          test::ReferenceRow ref = test::referenceRow(
              nk, D, scale, &q[((q0 + i) * H + h) * D], row(k), row(v),
              [&](int j) { return seen(b, h, i, j, nq, nk); },
              [&](int j, double x) { return score(h, i, j, x); });
          for (int d = 0; d < D; ++d) {
            float got = out.o[((q0 + i) * H + h) * D + d];
            ASSERT_FALSE(std::isnan(got)) << "b " << b << " h " << h << " i "
                                          << i;
            outErr = std::max(outErr, std::abs(got - ref.o[d]));
          }
          double refLse = ref.lse;
          float got = out.lse[h * batch.totalQ + q0 + i];
          if (std::isinf(refLse))
            EXPECT_TRUE(std::isinf(got) && got < 0)
                << "b " << b << " h " << h << " i " << i << ": " << got;
          else
            lseErr = std::max(lseErr, std::abs(got - refLse));
        }
    }
    EXPECT_LT(outErr, tolerance);
    EXPECT_LT(lseErr, tolerance);
    for (int64_t row = batch.cuQ.back(); row < batch.totalQ; ++row)
      for (int h = 0; h < H; ++h) {
        EXPECT_TRUE(std::isnan(out.lse[h * batch.totalQ + row]));
        for (int d = 0; d < D; ++d)
          EXPECT_TRUE(std::isnan(out.o[(row * H + h) * D + d]));
      }
  }

  Batch batch;
  std::vector<float> q, k, v;
  float slopes[H];
};

Score plainScore() {
  return [](int, int, int, double x) { return x; };
}

TEST_F(VarlenHostTest, NoMask) {
  Result out;
  attn_varlen_args a = args(out);
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  expectMatches(
      out, [](int, int, int, int, int, int) { return true; }, plainScore());
}

TEST_F(VarlenHostTest, CausalTopLeft) {
  Result out;
  attn_varlen_args a = args(out);
  a.fwd.mask = ATTN_MASK_CAUSAL;
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  expectMatches(
      out, [](int, int, int i, int j, int, int) { return j <= i; },
      plainScore());
}

TEST_F(VarlenHostTest, CausalBottomRight) {
  // Chunked prefill: the last queries of each sequence see every key up
  // to their own position in it (queries with i < Nq - Nk see none).
  Result out;
  attn_varlen_args a = args(out);
  a.fwd.mask = ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  expectMatches(
      out,
      [](int, int, int i, int j, int nq, int nk) { return j <= i + nk - nq; },
      plainScore());
}

TEST_F(VarlenHostTest, WindowBottomRightAndAlibi) {
  Result out;
  attn_varlen_args a = args(out);
  a.fwd.mask = ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  a.fwd.variant.flags = ATTN_VARIANT_WINDOW | ATTN_VARIANT_ALIBI;
  a.fwd.variant.window_left = 40;
  a.fwd.variant.window_right = -1;
  a.fwd.variant.alibi_slopes = slopes;
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  const float *s = slopes;
  expectMatches(
      out,
      [](int, int, int i, int j, int nq, int nk) {
        int diag = i + nk - nq;
        return j <= diag && j >= diag - 40;
      },
      [s](int h, int i, int j, double x) { return x + s[h] * double(j - i); });
}

TEST_F(VarlenHostTest, UserMaskModSeesTheSequenceIndex) {
  // Sequence b sees keys j with j % (b + 2) != 0: only right when %b is
  // the sequence and %kv_idx its own position.
  Result out;
  attn_varlen_args a = args(out);
  a.fwd.variant.mods = R"(
    func.func @mask_mod(%b: index, %h: index, %i: index, %j: index) -> i1 {
      %c2 = arith.constant 2 : index
      %c0 = arith.constant 0 : index
      %n = arith.addi %b, %c2 : index
      %r = arith.remui %j, %n : index
      %seen = arith.cmpi ne, %r, %c0 : index
      return %seen : i1
    })";
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  expectMatches(
      out,
      [](int b, int, int, int j, int, int) { return j % (b + 2) != 0; },
      plainScore());
}

TEST_F(VarlenHostTest, LengthsAreDataNotKernels) {
  // A second batch of other lengths runs on the kernel of the first.
  Result out;
  attn_varlen_args a = args(out);
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  attn_stats before{};
  ASSERT_EQ(attn_get_stats(&before), ATTN_OK);
  std::vector<int32_t> cuQ = {0, 9, 9, 40}, cuK = {0, 3, 50, 51};
  a.fwd.batch = 3;
  a.cu_seqlens_q = cuQ.data();
  a.cu_seqlens_k = cuK.data();
  a.max_seqlen_q = 31;
  a.max_seqlen_k = 47;
  ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
  attn_stats after{};
  ASSERT_EQ(attn_get_stats(&after), ATTN_OK);
  EXPECT_EQ(after.compiles, before.compiles);
}

/// Each rule of attn_jit.h on the offsets and bounds that the host can
/// check: an error naming it, and the outputs untouched.
TEST_F(VarlenHostTest, BadArgumentsAreErrors) {
  struct Case {
    const char *what;
    std::function<void(attn_varlen_args &, std::vector<int32_t> &)> change;
    attn_status status;
    const char *message;
  };
  const Case cases[] = {
      {"no sequence", [](attn_varlen_args &a, auto &) { a.fwd.batch = 0; },
       ATTN_ERROR_INVALID_ARGUMENT, "at least one sequence"},
      {"first offset", [](attn_varlen_args &a, auto &cu) { cu[0] = 1; },
       ATTN_ERROR_INVALID_ARGUMENT, "must start at 0"},
      {"decreasing", [](attn_varlen_args &a, auto &cu) { cu[3] = cu[2] - 1; },
       ATTN_ERROR_INVALID_ARGUMENT, "must not decrease"},
      {"longer than max",
       [](attn_varlen_args &a, auto &) { a.max_seqlen_q -= 1; },
       ATTN_ERROR_INVALID_ARGUMENT, "more than max_seqlen_q"},
      {"past the rows",
       [](attn_varlen_args &a, auto &cu) {
         a.fwd.seqlen_q = cu.back() - 1;
         a.fwd.lse_strides[1] = a.fwd.seqlen_q;
       },
       ATTN_ERROR_INVALID_ARGUMENT, "past the"},
      {"max above total",
       [](attn_varlen_args &a, auto &) { a.max_seqlen_k = a.fwd.seqlen_k + 1; },
       ATTN_ERROR_INVALID_ARGUMENT, "max_seqlen_k"},
      {"null offsets",
       [](attn_varlen_args &a, auto &) { a.cu_seqlens_k = nullptr; },
       ATTN_ERROR_INVALID_ARGUMENT, "cu_seqlens_k is a null pointer"},
      {"document variant",
       [](attn_varlen_args &a, auto &) {
         a.fwd.variant.flags = ATTN_VARIANT_DOCUMENT;
       },
       ATTN_ERROR_UNSUPPORTED, "not supported with variable-length"},
  };
  for (const Case &c : cases) {
    Result out;
    attn_varlen_args a = args(out);
    std::vector<int32_t> cuQ = batch.cuQ;
    a.cu_seqlens_q = cuQ.data();
    c.change(a, cuQ);
    EXPECT_EQ(attn_forward_varlen(&a), c.status) << c.what;
    EXPECT_NE(std::string(attn_last_error()).find(c.message),
              std::string::npos)
        << c.what << ": " << attn_last_error();
    EXPECT_TRUE(std::all_of(out.o.begin(), out.o.end(),
                            [](float x) { return std::isnan(x); }))
        << c.what;
  }
}

} // namespace
