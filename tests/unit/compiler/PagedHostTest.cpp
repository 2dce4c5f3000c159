//===- PagedHostTest.cpp - A paged K/V cache on the CPU vs float64 --------===//
//
// attn_forward_paged through the C API on the host device, against a
// float64 reference that reads each sequence's keys from its pages by the
// rule of attn_jit.h -- independently of the compiler. A ragged batch (key
// counts 1 to 5000, random; decode, a few queries and chunked prefill),
// pages shuffled randomly in memory, every cache row no sequence uses
// (unused pages, the tails of last pages) and every unused block-table
// entry poisoned, grouped-query heads (H = 8, Hkv = 2), page sizes 16, 64
// and 256, each mask, window + ALiBi + softcap, and split-KV with forced
// counts; outputs poisoned with NaN, rows outside every sequence must stay
// untouched.
//
//===----------------------------------------------------------------------===//

#include "ReferenceRow.h"
#include "RowErrors.h"
#include "attn-jit/attn_jit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace attn;

constexpr int H = 8, Hkv = 2, D = 32;
/// A block-table entry no sequence uses: never read as a page.
constexpr int32_t kUnusedEntry = 1 << 30;

/// A ragged batch over a paged cache of `pageSize` rows per page.
struct PagedBatch {
  int pageSize;
  std::vector<int32_t> lenQ, lenK, cuQ, blockTable;
  int64_t totalQ = 0, maxQ = 0, maxPages = 0, tableStride = 0, numPages = 0;
  /// page number -> (sequence, first key) it holds, or (-1, 0).
  std::vector<std::pair<int, int>> owner;

  PagedBatch(int pageSize, unsigned seed) : pageSize(pageSize) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> keys(1, 5000);
    // Decode (1 query), a few queries, chunked prefill (48 over the
    // longest context), and random key counts in [1, 5000].
    lenQ = {1, 1, 3, 48, 1, 7};
    lenK = {5000, 1, keys(gen), keys(gen), keys(gen), keys(gen)};
    cuQ = {0};
    for (size_t b = 0; b < lenQ.size(); ++b) {
      cuQ.push_back(cuQ.back() + lenQ[b]);
      maxQ = std::max<int64_t>(maxQ, lenQ[b]);
      maxPages = std::max<int64_t>(maxPages, pagesOf(b));
    }
    totalQ = cuQ.back() + 2; // two rows of no sequence
    maxPages += 1;           // a spare column, unused by every sequence
    tableStride = maxPages + 3;
    int64_t used = 0;
    for (size_t b = 0; b < lenQ.size(); ++b)
      used += pagesOf(b);
    numPages = used + 5; // pages no sequence uses
    std::vector<int32_t> order(numPages);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), gen);
    blockTable.assign(sequences() * tableStride, kUnusedEntry);
    owner.assign(numPages, {-1, 0});
    int next = 0;
    for (int b = 0; b < sequences(); ++b)
      for (int64_t j = 0; j < pagesOf(b); ++j) {
        int32_t page = order[next++];
        blockTable[b * tableStride + j] = page;
        owner[page] = {b, static_cast<int>(j * pageSize)};
      }
  }
  int64_t sequences() const { return static_cast<int64_t>(lenQ.size()); }
  int64_t pagesOf(size_t b) const {
    return (lenK[b] + pageSize - 1) / pageSize;
  }
};

/// Which keys a query sees and its score (positions in the sequence).
using Seen = std::function<bool(int i, int j, int nq, int nk)>;
using Score = std::function<double(int h, int i, int j, double x)>;

struct Result {
  std::vector<float> o, lse;
};

class PagedHostTest : public ::testing::TestWithParam<int> {
protected:
  /// Q for the batch's rows; K and V caches of its pages: the keys of the
  /// sequences (key j of sequence b: keyOf(b, j)) in their pages, NaN in
  /// every row no sequence uses.
  void fill(const PagedBatch &batch) {
    std::mt19937 gen(7);
    std::normal_distribution<float> normal(0, 1);
    q.resize(batch.totalQ * H * D);
    for (float &x : q)
      x = normal(gen);
    size_t rows = batch.numPages * batch.pageSize;
    k.assign(rows * Hkv * D, NAN);
    v.assign(rows * Hkv * D, NAN);
    for (int64_t page = 0; page < batch.numPages; ++page) {
      auto [b, first] = batch.owner[page];
      if (b < 0)
        continue;
      for (int r = 0; r < batch.pageSize && first + r < batch.lenK[b]; ++r)
        for (int i = 0; i < Hkv * D; ++i) {
          size_t at = (page * batch.pageSize + r) * Hkv * D + i;
          k[at] = normal(gen);
          v[at] = normal(gen);
        }
    }
  }

  /// Element (h, d) of key j of sequence b, through the block table.
  static size_t keyAt(const PagedBatch &batch, int b, int j, int kh, int d) {
    int32_t page = batch.blockTable[b * batch.tableStride + j / batch.pageSize];
    return ((size_t(page) * batch.pageSize + j % batch.pageSize) * Hkv + kh) *
               D + d;
  }

  attn_paged_args args(const PagedBatch &batch, Result &out) {
    out.o.assign(q.size(), NAN);
    out.lse.assign(batch.totalQ * H, NAN);
    attn_paged_args a{};
    a.fwd.q = q.data();
    a.fwd.k = k.data();
    a.fwd.v = v.data();
    a.fwd.o = out.o.data();
    a.fwd.lse = out.lse.data();
    a.fwd.batch = batch.sequences();
    a.fwd.heads = H;
    a.fwd.kv_heads = Hkv;
    a.fwd.seqlen_q = batch.totalQ;
    a.fwd.head_dim = D;
    a.fwd.dtype = ATTN_DTYPE_F32;
    a.fwd.device = ATTN_DEVICE_HOST;
    // K/V tiles of 64 keys: four pages of 16, a quarter page of 256.
    a.fwd.block_m = 16;
    a.fwd.block_n = 64;
    a.cu_seqlens_q = batch.cuQ.data();
    a.max_seqlen_q = batch.maxQ;
    a.block_table = batch.blockTable.data();
    a.max_pages = batch.maxPages;
    a.block_table_stride = batch.tableStride;
    a.seqused_k = batch.lenK.data();
    a.num_pages = batch.numPages;
    a.page_size = batch.pageSize;
    attn_set_paged_strides(&a);
    return a;
  }

  /// Largest |O - ref| and |LSE - ref| over every row of every sequence;
  /// rows of no sequence must still be NaN.
  void expectMatches(const PagedBatch &batch, const Result &out,
                     const Seen &seen, const Score &score) {
    const double scale = 1 / std::sqrt(double(D));
    test::RowErrors errors;
    for (int b = 0; b < batch.sequences(); ++b) {
      int nq = batch.lenQ[b], nk = batch.lenK[b], q0 = batch.cuQ[b];
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < nq; ++i) {
          int kh = h / (H / Hkv);
          auto row = [&](const std::vector<float> &t) {
            return [&, kh](int j) { return &t[keyAt(batch, b, j, kh, 0)]; };
          };
          test::ReferenceRow ref = test::referenceRow(
              nk, D, scale, &q[((q0 + i) * H + h) * D], row(k), row(v),
              [&](int j) { return seen(i, j, nq, nk); },
              [&](int j, double x) { return score(h, i, j, x); });
          std::string where = "b " + std::to_string(b) + " h " +
                              std::to_string(h) + " i " + std::to_string(i);
          if (!errors.add(ref, &out.o[((q0 + i) * H + h) * D], D,
                          out.lse[h * batch.totalQ + q0 + i], where))
            return;
        }
    }
    errors.expectWithin(2e-5);
    test::expectUntouched(out.o.data(), out.lse.data(), batch.cuQ.back(),
                          batch.totalQ, H, D);
  }

  std::vector<float> q, k, v;
};

Score plainScore() {
  return [](int, int, int, double x) { return x; };
}

/// Each page size with each built-in mask: pages of 16 (a 64-key tile
/// spans four), 64 (one) and 256 (a quarter of one).
TEST_P(PagedHostTest, EveryMask) {
  PagedBatch batch(GetParam(), 11);
  fill(batch);
  const std::pair<attn_mask, Seen> masks[] = {
      {ATTN_MASK_NONE, [](int, int, int, int) { return true; }},
      {ATTN_MASK_CAUSAL, [](int i, int j, int, int) { return j <= i; }},
      {ATTN_MASK_CAUSAL_BOTTOM_RIGHT,
       [](int i, int j, int nq, int nk) { return j <= i + nk - nq; }}};
  for (const auto &[mask, seen] : masks) {
    SCOPED_TRACE(testing::Message() << "mask " << mask);
    Result out;
    attn_paged_args a = args(batch, out);
    a.fwd.mask = mask;
    ASSERT_EQ(attn_forward_paged(&a), ATTN_OK) << attn_last_error();
    expectMatches(batch, out, seen, plainScore());
  }
}

/// Split-KV over the paged cache (counts forced: auto never splits on the
/// host): each split gathers its own range of a sequence's K/V tiles
/// through the block table. 2 and 7 splits, and 40, more than the 64-key
/// tiles of most sequences (empty splits); the split kernel is one of its
/// own, and another count reuses it.
TEST_P(PagedHostTest, ForcedSplitsMatchFloat64) {
  struct AutoAfter {
    ~AutoAfter() { EXPECT_EQ(attn_set_num_splits(0), ATTN_OK); }
  } autoAfter;
  PagedBatch batch(GetParam(), 13);
  fill(batch);
  auto kernelsBuilt = [] {
    attn_stats s{};
    EXPECT_EQ(attn_get_stats(&s), ATTN_OK);
    return s.compiles + s.disk_hits;
  };
  const std::pair<attn_mask, Seen> masks[] = {
      {ATTN_MASK_NONE, [](int, int, int, int) { return true; }},
      {ATTN_MASK_CAUSAL_BOTTOM_RIGHT,
       [](int i, int j, int nq, int nk) { return j <= i + nk - nq; }}};
  for (const auto &[mask, seen] : masks) {
    Result out;
    attn_paged_args a = args(batch, out);
    a.fwd.mask = mask;
    ASSERT_EQ(attn_set_num_splits(1), ATTN_OK);
    ASSERT_EQ(attn_forward_paged(&a), ATTN_OK) << attn_last_error();
    uint64_t unsplit = kernelsBuilt();
    for (int64_t splits : {2, 7, 40}) {
      SCOPED_TRACE(testing::Message()
                   << "mask " << mask << " splits " << splits);
      a = args(batch, out);
      a.fwd.mask = mask;
      ASSERT_EQ(attn_set_num_splits(splits), ATTN_OK);
      ASSERT_EQ(attn_forward_paged(&a), ATTN_OK) << attn_last_error();
      EXPECT_EQ(kernelsBuilt(), unsplit + 1);
      expectMatches(batch, out, seen, plainScore());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PageSizes, PagedHostTest,
                         ::testing::Values(16, 64, 256));

TEST_F(PagedHostTest, WindowAlibiAndSoftcap) {
  PagedBatch batch(16, 5);
  fill(batch);
  float slopes[H];
  // Slopes / 256: distances reach 5000 (see VarlenHostTest).
  for (int h = 0; h < H; ++h)
    slopes[h] = static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / H) / 256);
  Result out;
  attn_paged_args a = args(batch, out);
  a.fwd.mask = ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  a.fwd.variant.flags =
      ATTN_VARIANT_WINDOW | ATTN_VARIANT_ALIBI | ATTN_VARIANT_SOFTCAP;
  a.fwd.variant.window_left = 300;
  a.fwd.variant.window_right = -1;
  a.fwd.variant.alibi_slopes = slopes;
  a.fwd.variant.softcap = 2.0f;
  ASSERT_EQ(attn_forward_paged(&a), ATTN_OK) << attn_last_error();
  const float *s = slopes;
  expectMatches(
      batch, out,
      [](int i, int j, int nq, int nk) {
        int diag = i + nk - nq;
        return j <= diag && j >= diag - 300;
      },
      [s](int h, int i, int j, double x) {
        // ALiBi, then the softcap (attn_jit.h: the softcap comes last).
        double y = x + s[h] * double(j - i);
        return 2.0 * std::tanh(y / 2.0);
      });
}

TEST_F(PagedHostTest, TablesAreDataNotKernels) {
  // Another batch over other pages and tables runs on the same kernel.
  PagedBatch first(64, 1), second(64, 2);
  fill(first);
  Result out;
  attn_paged_args a = args(first, out);
  ASSERT_EQ(attn_forward_paged(&a), ATTN_OK) << attn_last_error();
  attn_stats before{};
  ASSERT_EQ(attn_get_stats(&before), ATTN_OK);
  fill(second);
  a = args(second, out);
  ASSERT_EQ(attn_forward_paged(&a), ATTN_OK) << attn_last_error();
  attn_stats after{};
  ASSERT_EQ(attn_get_stats(&after), ATTN_OK);
  EXPECT_EQ(after.compiles, before.compiles);
  expectMatches(second, out, [](int, int, int, int) { return true; },
                plainScore());
}

/// Each rule of attn_jit.h that the host can check: an error naming it,
/// and the outputs untouched.
TEST_F(PagedHostTest, BadArgumentsAreErrors) {
  PagedBatch batch(16, 3);
  fill(batch);
  struct Case {
    const char *what;
    std::function<void(attn_paged_args &, std::vector<int32_t> &,
                       std::vector<int32_t> &)>
        change; // (args, block table, key counts)
    attn_status status;
    const char *message;
  };
  const Case cases[] = {
      {"page size 24", [](auto &a, auto &, auto &) { a.page_size = 24; },
       ATTN_ERROR_UNSUPPORTED, "page_size = 24"},
      {"page size 8", [](auto &a, auto &, auto &) { a.page_size = 8; },
       ATTN_ERROR_UNSUPPORTED, "page_size = 8"},
      {"page size 512", [](auto &a, auto &, auto &) { a.page_size = 512; },
       ATTN_ERROR_UNSUPPORTED, "page_size = 512"},
      {"page size 0", [](auto &a, auto &, auto &) { a.page_size = 0; },
       ATTN_ERROR_INVALID_ARGUMENT, "must be positive"},
      {"no pages", [](auto &a, auto &, auto &) { a.num_pages = 0; },
       ATTN_ERROR_INVALID_ARGUMENT, "must be positive"},
      {"rows overlap",
       [](auto &a, auto &, auto &) {
         a.block_table_stride = a.max_pages - 1;
       },
       ATTN_ERROR_INVALID_ARGUMENT, "must not overlap"},
      {"page out of range",
       [&batch](auto &a, auto &table, auto &) {
         table[2 * batch.tableStride] = static_cast<int32_t>(a.num_pages);
       },
       ATTN_ERROR_INVALID_ARGUMENT, "block_table[2][0]"},
      {"negative page",
       [&batch](auto &, auto &table, auto &) {
         table[3 * batch.tableStride + 1] = -1;
       },
       ATTN_ERROR_INVALID_ARGUMENT, "block_table[3][1] = -1"},
      {"more keys than pages",
       [](auto &a, auto &, auto &used) {
         used[1] = static_cast<int32_t>(a.max_pages * a.page_size + 1);
       },
       ATTN_ERROR_INVALID_ARGUMENT, "seqused_k[1]"},
      {"negative key count",
       [](auto &, auto &, auto &used) { used[0] = -1; },
       ATTN_ERROR_INVALID_ARGUMENT, "seqused_k[0] = -1"},
      {"null block table",
       [](auto &a, auto &, auto &) { a.block_table = nullptr; },
       ATTN_ERROR_INVALID_ARGUMENT, "block_table is a null pointer"},
      {"null key counts",
       [](auto &a, auto &, auto &) { a.seqused_k = nullptr; },
       ATTN_ERROR_INVALID_ARGUMENT, "seqused_k is a null pointer"},
      {"query offsets", [](auto &a, auto &, auto &) { a.max_seqlen_q -= 1; },
       ATTN_ERROR_INVALID_ARGUMENT, "more than max_seqlen_q"},
      {"cache strides",
       [](auto &a, auto &, auto &) { a.fwd.k_strides[3] = 2; },
       ATTN_ERROR_INVALID_ARGUMENT, "k_strides[3] = 2"},
      {"output in the cache",
       [this](auto &a, auto &, auto &) { a.fwd.o = v.data(); },
       ATTN_ERROR_INVALID_ARGUMENT, "overlaps input v"},
      {"document variant",
       [](auto &a, auto &, auto &) {
         a.fwd.variant.flags = ATTN_VARIANT_DOCUMENT;
       },
       ATTN_ERROR_UNSUPPORTED, "not supported with variable-length"},
  };
  for (const Case &c : cases) {
    Result out;
    attn_paged_args a = args(batch, out);
    std::vector<int32_t> table = batch.blockTable, used = batch.lenK;
    a.block_table = table.data();
    a.seqused_k = used.data();
    c.change(a, table, used);
    EXPECT_EQ(attn_forward_paged(&a), c.status) << c.what;
    EXPECT_NE(std::string(attn_last_error()).find(c.message),
              std::string::npos)
        << c.what << ": " << attn_last_error();
    EXPECT_TRUE(std::all_of(out.o.begin(), out.o.end(),
                            [](float x) { return std::isnan(x); }))
        << c.what;
  }
}

} // namespace
