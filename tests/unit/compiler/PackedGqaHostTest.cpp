//===- PackedGqaHostTest.cpp - Packed GQA heads in ragged batches vs f64 --===//
//
// attn_forward_varlen and attn_forward_paged through the C API on the host
// device with calls that pack the query heads of each K/V head into one
// query tile (every sequence's group · qLen rows fit block_m), against a
// float64 reference independent of the compiler. Ragged batches with query
// counts 0, 1 and 2-4 (speculative decoding) and key counts up to 2000;
// groups of 2, 4 and 8 and multi-query attention; K/V as packed rows or in
// pages of 16 and 64 shuffled in memory; the built-in masks, a window with
// a softcap, split-KV with a forced count; outputs poisoned with NaN, rows
// of no sequence must stay untouched. A call whose longest query count
// overflows one tile's group uses a kernel of its own (unpacked).
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
#include <tuple>
#include <vector>

namespace {

using namespace attn;

constexpr int D = 32;
/// Query tiles of 32 rows: a group of 8 heads packs up to 4 queries each.
constexpr int kBlockM = 32;
/// A block-table entry no sequence uses: never read as a page.
constexpr int32_t kUnusedEntry = 1 << 30;

struct Heads {
  int H, Hkv;
};

/// Where K and V live: packed rows (varlen) or pages of `pageSize` rows.
struct Layout {
  int pageSize; // 0: packed rows
};

/// A ragged decode batch: the query and key counts of its sequences.
struct Batch {
  std::vector<int32_t> lenQ{1, 0, 3, 1, 4, 2, 1}, lenK, cuQ{0}, cuK{0};
  int64_t totalQ = 0, totalK = 0, maxQ = 0, maxK = 0;

  explicit Batch(unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> keys(1, 2000);
    // One key (fewer than the queries of a sequence of 3: rows that see
    // nothing with a bottom-right mask), keys without queries, 2000.
    lenK = {2000, keys(gen), 1, keys(gen), keys(gen), keys(gen), keys(gen)};
    for (size_t b = 0; b < lenQ.size(); ++b) {
      cuQ.push_back(cuQ.back() + lenQ[b]);
      cuK.push_back(cuK.back() + lenK[b]);
      maxQ = std::max<int64_t>(maxQ, lenQ[b]);
      maxK = std::max<int64_t>(maxK, lenK[b]);
    }
    // Rows of no sequence: enough that a longest query count past one
    // packed tile (17 for a group of 2) is still at most total_q.
    totalQ = cuQ.back() + 6;
    totalK = cuK.back();
  }
  int sequences() const { return static_cast<int>(lenQ.size()); }
};

/// The K/V pages of a batch, shuffled: block-table row b lists sequence
/// b's pages; unused entries and pages are poisoned.
struct Pages {
  int pageSize = 0;
  int64_t maxPages = 0, numPages = 0;
  std::vector<int32_t> table;

  Pages(const Batch &batch, int pageSize, unsigned seed) : pageSize(pageSize) {
    int64_t used = 0;
    for (int32_t n : batch.lenK) {
      maxPages = std::max<int64_t>(maxPages, pagesOf(n));
      used += pagesOf(n);
    }
    numPages = used + 3; // pages no sequence uses
    std::vector<int32_t> order(numPages);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    table.assign(batch.sequences() * maxPages, kUnusedEntry);
    int next = 0;
    for (int b = 0; b < batch.sequences(); ++b)
      for (int64_t j = 0; j < pagesOf(batch.lenK[b]); ++j)
        table[b * maxPages + j] = order[next++];
  }
  int64_t pagesOf(int64_t keys) const {
    return (keys + pageSize - 1) / pageSize;
  }
  /// Cache row of key j of sequence b.
  int64_t rowOf(int b, int j) const {
    return int64_t(table[b * maxPages + j / pageSize]) * pageSize +
           j % pageSize;
  }
};

using Seen = std::function<bool(int i, int j, int nq, int nk)>;
using Score = std::function<double(double x)>;

struct Result {
  std::vector<float> o, lse;
};

class PackedGqaHostTest
    : public ::testing::TestWithParam<std::tuple<Heads, Layout>> {
protected:
  PackedGqaHostTest()
      : heads(std::get<0>(GetParam())), batch(17),
        pages(batch, std::max(std::get<1>(GetParam()).pageSize, 16), 23),
        paged(std::get<1>(GetParam()).pageSize != 0) {
    std::mt19937 gen(7);
    std::normal_distribution<float> normal(0, 1);
    q.resize(batch.totalQ * heads.H * D);
    for (float &x : q)
      x = normal(gen);
    // Every cache row starts as NaN: a row read that belongs to no key of
    // the sequence poisons the output.
    int64_t rows = paged ? pages.numPages * pages.pageSize : batch.totalK;
    k.assign(rows * heads.Hkv * D, NAN);
    v.assign(rows * heads.Hkv * D, NAN);
    for (int b = 0; b < batch.sequences(); ++b)
      for (int j = 0; j < batch.lenK[b]; ++j)
        for (int i = 0; i < heads.Hkv * D; ++i) {
          size_t at = keyRow(b, j) * heads.Hkv * D + i;
          k[at] = normal(gen);
          v[at] = normal(gen);
        }
  }

  int64_t keyRow(int b, int j) const {
    return paged ? pages.rowOf(b, j) : batch.cuK[b] + j;
  }

  /// The call's forward arguments, outputs poisoned.
  attn_fwd_args fwd(Result &out) {
    out.o.assign(q.size(), NAN);
    out.lse.assign(batch.totalQ * heads.H, NAN);
    attn_fwd_args a{};
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    a.o = out.o.data();
    a.lse = out.lse.data();
    a.batch = batch.sequences();
    a.heads = heads.H;
    a.kv_heads = heads.Hkv;
    a.seqlen_q = batch.totalQ;
    a.seqlen_k = batch.totalK;
    a.head_dim = D;
    a.dtype = ATTN_DTYPE_F32;
    a.device = ATTN_DEVICE_HOST;
    a.block_m = kBlockM;
    a.block_n = 64; // four pages of 16, one of 64
    return a;
  }

  /// Runs the call (`maxQ`: its max_seqlen_q) with `mask` and `variant`.
  attn_status run(Result &out, attn_mask mask, const attn_variant &variant,
                  int64_t maxQ) {
    attn_fwd_args f = fwd(out);
    f.mask = mask;
    f.variant = variant;
    if (!paged) {
      attn_varlen_args a{};
      a.fwd = f;
      a.cu_seqlens_q = batch.cuQ.data();
      a.cu_seqlens_k = batch.cuK.data();
      a.max_seqlen_q = maxQ;
      a.max_seqlen_k = batch.maxK;
      attn_set_varlen_strides(&a);
      return attn_forward_varlen(&a);
    }
    attn_paged_args a{};
    a.fwd = f;
    a.cu_seqlens_q = batch.cuQ.data();
    a.max_seqlen_q = maxQ;
    a.block_table = pages.table.data();
    a.max_pages = pages.maxPages;
    a.block_table_stride = pages.maxPages;
    a.seqused_k = batch.lenK.data();
    a.num_pages = pages.numPages;
    a.page_size = pages.pageSize;
    attn_set_paged_strides(&a);
    return attn_forward_paged(&a);
  }

  /// Every row of every sequence against float64; rows of no sequence
  /// must still be NaN.
  void expectMatches(const Result &out, const Seen &seen, const Score &score) {
    const int H = heads.H, Hkv = heads.Hkv;
    const double scale = 1 / std::sqrt(double(D));
    test::RowErrors errors;
    for (int b = 0; b < batch.sequences(); ++b) {
      int nq = batch.lenQ[b], nk = batch.lenK[b], q0 = batch.cuQ[b];
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < nq; ++i) {
          int kh = h / (H / Hkv);
          auto row = [&](const std::vector<float> &t) {
            return [&, kh](int j) {
              return &t[(keyRow(b, j) * Hkv + kh) * D];
            };
          };
          test::ReferenceRow ref = test::referenceRow(
              nk, D, scale, &q[((q0 + i) * H + h) * D], row(k), row(v),
              [&](int j) { return seen(i, j, nq, nk); },
              [&](int, double x) { return score(x); });
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

  Heads heads;
  Batch batch;
  Pages pages;
  bool paged;
  std::vector<float> q, k, v;
};

uint64_t kernelsBuilt() {
  attn_stats s{};
  EXPECT_EQ(attn_get_stats(&s), ATTN_OK);
  return s.compiles + s.disk_hits;
}

Score plain() {
  return [](double x) { return x; };
}

Seen bottomRight() {
  return [](int i, int j, int nq, int nk) { return j <= i + nk - nq; };
}

/// The built-in masks, packed; then the same batch announced with a
/// longest query count whose group overflows a tile: another kernel
/// (unpacked; counted from an empty memory cache, so that the suite's
/// other cases in this process do not hold it already), the same results.
TEST_P(PackedGqaHostTest, MasksMatchFloat64) {
  attn_clear_memory_cache();
  const std::pair<attn_mask, Seen> masks[] = {
      {ATTN_MASK_NONE, [](int, int, int, int) { return true; }},
      {ATTN_MASK_CAUSAL, [](int i, int j, int, int) { return j <= i; }},
      {ATTN_MASK_CAUSAL_BOTTOM_RIGHT, bottomRight()}};
  ASSERT_LE(heads.H / heads.Hkv * batch.maxQ, kBlockM);
  for (const auto &[mask, seen] : masks) {
    SCOPED_TRACE(testing::Message() << "mask " << mask);
    Result out;
    ASSERT_EQ(run(out, mask, attn_variant{}, batch.maxQ), ATTN_OK)
        << attn_last_error();
    expectMatches(out, seen, plain());
  }
  uint64_t packed = kernelsBuilt();
  int64_t unpackedMaxQ = kBlockM / (heads.H / heads.Hkv) + 1;
  Result out;
  ASSERT_EQ(run(out, ATTN_MASK_CAUSAL_BOTTOM_RIGHT, attn_variant{},
                unpackedMaxQ),
            ATTN_OK)
      << attn_last_error();
  EXPECT_EQ(kernelsBuilt(), packed + 1);
  expectMatches(out, bottomRight(), plain());
}

/// A sliding window with a softcap (variants that read no tensor, so they
/// pack), unsplit and split-KV with forced counts (3, and 40: more than
/// the K/V tiles of most sequences, empty splits).
TEST_P(PackedGqaHostTest, WindowSoftcapAndSplitsMatchFloat64) {
  struct AutoAfter {
    ~AutoAfter() { EXPECT_EQ(attn_set_num_splits(0), ATTN_OK); }
  } autoAfter;
  attn_variant variant{};
  variant.flags = ATTN_VARIANT_WINDOW | ATTN_VARIANT_SOFTCAP;
  variant.window_left = 100;
  variant.window_right = 0;
  variant.softcap = 2.0f;
  Seen window = [](int i, int j, int nq, int nk) {
    int diag = i + nk - nq;
    return j <= diag && j >= diag - 100;
  };
  Score softcap = [](double x) { return 2.0 * std::tanh(x / 2.0); };
  for (int64_t splits : {1, 3, 40}) {
    SCOPED_TRACE(testing::Message() << "splits " << splits);
    ASSERT_EQ(attn_set_num_splits(splits), ATTN_OK);
    Result out;
    ASSERT_EQ(run(out, ATTN_MASK_CAUSAL_BOTTOM_RIGHT, variant, batch.maxQ),
              ATTN_OK)
        << attn_last_error();
    expectMatches(out, window, softcap);
    ASSERT_EQ(
        run(out, ATTN_MASK_CAUSAL_BOTTOM_RIGHT, attn_variant{}, batch.maxQ),
        ATTN_OK)
        << attn_last_error();
    expectMatches(out, bottomRight(), plain());
  }
}

std::string name(
    const ::testing::TestParamInfo<std::tuple<Heads, Layout>> &info) {
  auto [h, layout] = info.param;
  return "H" + std::to_string(h.H) + "Hkv" + std::to_string(h.Hkv) +
         (layout.pageSize ? "Pages" + std::to_string(layout.pageSize)
                          : std::string("Varlen"));
}

// Groups of 2, 4 and 8, multi-query attention (one K/V head).
INSTANTIATE_TEST_SUITE_P(
    GroupsAndLayouts, PackedGqaHostTest,
    ::testing::Combine(::testing::Values(Heads{8, 4}, Heads{8, 2},
                                         Heads{16, 2}, Heads{4, 1}),
                       ::testing::Values(Layout{0}, Layout{16}, Layout{64})),
    name);

} // namespace
