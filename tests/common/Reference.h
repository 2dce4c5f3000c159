//===- Reference.h - float64 attention reference and test helpers ---------===//
//
// Header-only, standard library only. Used by the CPU unit tests, the runtime
// GPU test and attn-bench:
//   * bf16 / fp16 <-> float conversions, round-to-nearest-even;
//   * reference_forward: unfused attention in exact float64 arithmetic on
//     host arrays with arbitrary element strides, all three mask kinds,
//     grouped-query attention (K/V with fewer heads), any scale, O and LSE
//     (natural log); fully masked rows give O = 0, LSE = -inf;
//   * a seeded, platform-independent random filler (mt19937_64 + our own
//     Box-Muller, since std::normal_distribution differs between standard
//     libraries) with a normal and a large-magnitude distribution;
//   * relative-error / max-abs-error helpers and NaN poisoning.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_TESTS_COMMON_REFERENCE_H
#define ATTN_JIT_TESTS_COMMON_REFERENCE_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace attn_ref {

//===----------------------------------------------------------------------===//
// 16-bit floating-point types (storage only)
//===----------------------------------------------------------------------===//

struct bf16 { uint16_t bits; };
struct f16 { uint16_t bits; };
static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2, "16-bit storage types");

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)            // NaN: keep sign, make quiet
    return uint16_t((x >> 16) | 0x0040u);
  x += 0x7fffu + ((x >> 16) & 1u);                 // round to nearest even
  return uint16_t(x >> 16);                        // overflow carries into inf
}

inline float f16_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f)                                  // inf / NaN
    return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {                                   // zero / subnormal: mant * 2^-24
    float v = float(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_f16(float f) {
  uint32_t x = float_bits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u | uint16_t((x >> 13) & 0x3ffu); // NaN
  if (x >= 0x477ff000u) return sign | 0x7c00u;       // >= 65520 rounds to inf
  if (x >= 0x38800000u) {                            // normal half (>= 2^-14)
    x += 0xc8000fffu + ((x >> 13) & 1u);             // rebias exponent, RNE
    return sign | uint16_t(x >> 13);
  }
  // Subnormal half or zero: adding 0.5 makes the float adder round the value
  // to a multiple of 2^-24, with round-to-nearest-even.
  const uint32_t magic = 126u << 23;                 // 0.5f
  uint32_t r = float_bits(bits_float(x) + bits_float(magic)) - magic;
  return sign | uint16_t(r);
}

inline double to_double(double v) { return v; }
inline double to_double(float v) { return v; }
inline double to_double(bf16 v) { return bf16_to_float(v.bits); }
inline double to_double(f16 v) { return f16_to_float(v.bits); }

template <class T> T from_float(float v);
template <> inline float from_float<float>(float v) { return v; }
template <> inline double from_float<double>(float v) { return v; }
template <> inline bf16 from_float<bf16>(float v) { return bf16{float_to_bf16(v)}; }
template <> inline f16 from_float<f16>(float v) { return f16{float_to_f16(v)}; }

//===----------------------------------------------------------------------===//
// Reference forward attention
//===----------------------------------------------------------------------===//

// Same values as attn_mask in attn_jit.h.
enum class Mask { None = 0, Causal = 1, CausalBottomRight = 2 };

// Whether query row i may attend to key j. Causal is top-left aligned
// (PyTorch's is_causal), bottom-right aligned shifts the diagonal by Nk - Nq.
inline bool visible(Mask m, int64_t i, int64_t j, int64_t nq, int64_t nk) {
  switch (m) {
  case Mask::None: return true;
  case Mask::Causal: return j <= i;
  case Mask::CausalBottomRight: return j <= i + nk - nq;
  }
  return true;
}

struct Shape {
  int64_t batch, heads, seqlen_q, seqlen_k, head_dim;
  // Heads of K and V (grouped-query attention): must divide `heads`; query
  // head h reads K/V head h / (heads / kv_heads). 0: heads.
  int64_t kv_heads = 0;
};

// Strides in elements for the (batch, head, seq, dim) index order.
struct Strides4 { int64_t s[4]; };
struct Strides3 { int64_t s[3]; };

inline Strides4 bhnd_strides(int64_t h, int64_t n, int64_t d) {
  return {{h * n * d, n * d, d, 1}};
}
inline Strides4 bnhd_strides(int64_t h, int64_t n, int64_t d) {
  return {{n * h * d, d, h * d, 1}};
}
inline Strides3 bhn_strides(int64_t h, int64_t n) { return {{h * n, n, 1}}; }

// O = softmax(scale * Q K^T + mask) V for every (batch, head), in float64;
// K and V are (B, Hkv, Nk, D) with Hkv = sh.kv_heads (GQA, see Shape).
// `o` (double) and `lse` (double, natural log; may be null) are written at the
// given strides. scale == 0 means 1/sqrt(head_dim), computed in double.
// Fully masked rows (only possible with CausalBottomRight and Nq > Nk, or
// Nk == 0) get O = 0 and LSE = -inf.
//
// `rows` restricts the work to query rows begin, begin+step, ... < end (the
// mask still uses the absolute row index); other rows are left untouched.
struct RowRange {
  int64_t begin = 0, end = -1, step = 1; // end < 0: up to Nq
};

template <class T>
void reference_forward(const Shape &sh, const T *q, Strides4 qs, const T *k,
                       Strides4 ks, const T *v, Strides4 vs, double *o,
                       Strides4 os, double *lse, Strides3 ls, Mask mask,
                       double scale, RowRange rows = RowRange()) {
  const int64_t Nq = sh.seqlen_q, Nk = sh.seqlen_k, D = sh.head_dim;
  const int64_t group = sh.kv_heads > 0 ? sh.heads / sh.kv_heads : 1;
  if (scale == 0) scale = 1.0 / std::sqrt(double(D));
  const size_t nkd = size_t(Nk * D), nk = size_t(Nk), nd = size_t(D);
  std::vector<double> kd(nkd), vd(nkd), qd(nd), s(nk), acc(nd);
  const double ninf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t h = 0; h < sh.heads; ++h) {
      // Upcast K and V of this head's K/V head once into contiguous rows.
      const int64_t hk = h / group;
      for (int64_t j = 0; j < Nk; ++j)
        for (int64_t d = 0; d < D; ++d) {
          kd[j * D + d] = to_double(k[b * ks.s[0] + hk * ks.s[1] + j * ks.s[2] + d * ks.s[3]]);
          vd[j * D + d] = to_double(v[b * vs.s[0] + hk * vs.s[1] + j * vs.s[2] + d * vs.s[3]]);
        }
      const int64_t row_end = rows.end < 0 || rows.end > Nq ? Nq : rows.end;
      const int64_t row_step = rows.step < 1 ? 1 : rows.step;
      for (int64_t i = rows.begin; i < row_end; i += row_step) {
        for (int64_t d = 0; d < D; ++d)
          qd[d] = to_double(q[b * qs.s[0] + h * qs.s[1] + i * qs.s[2] + d * qs.s[3]]);
        double mx = ninf;
        for (int64_t j = 0; j < Nk; ++j) {
          if (!visible(mask, i, j, Nq, Nk)) { s[j] = ninf; continue; }
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += qd[d] * kd[j * D + d];
          s[j] = scale * dot;
          if (s[j] > mx) mx = s[j];
        }
        double *orow = o + b * os.s[0] + h * os.s[1] + i * os.s[2];
        if (mx == ninf) {                    // fully masked row
          for (int64_t d = 0; d < D; ++d) orow[d * os.s[3]] = 0.0;
          if (lse) lse[b * ls.s[0] + h * ls.s[1] + i * ls.s[2]] = ninf;
          continue;
        }
        double sum = 0;
        for (int64_t d = 0; d < D; ++d) acc[d] = 0;
        for (int64_t j = 0; j < Nk; ++j) {
          if (s[j] == ninf) continue;
          double p = std::exp(s[j] - mx);
          sum += p;
          const double *vrow = &vd[j * D];
          for (int64_t d = 0; d < D; ++d) acc[d] += p * vrow[d];
        }
        for (int64_t d = 0; d < D; ++d) orow[d * os.s[3]] = acc[d] / sum;
        if (lse) lse[b * ls.s[0] + h * ls.s[1] + i * ls.s[2]] = mx + std::log(sum);
      }
    }
}

//===----------------------------------------------------------------------===//
// Random inputs
//===----------------------------------------------------------------------===//

enum class Dist {
  Normal,        // N(0, 1)
  LargeMagnitude // 2 + 4 N(0, 1): scores of tens to hundreds, very peaked
                 // softmax; catches a missing or wrong running-max rescale.
};

class Rng {
public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform in (0, 1), 53 random bits.
  double uniform() { return (double(gen_() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal by Box-Muller (both values used).
  double normal() {
    if (has_spare_) { has_spare_ = false; return spare_; }
    double u1 = uniform(), u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1)), t = 6.283185307179586 * u2;
    spare_ = r * std::sin(t);
    has_spare_ = true;
    return r * std::cos(t);
  }
  uint64_t next() { return gen_(); }

private:
  std::mt19937_64 gen_;
  double spare_ = 0;
  bool has_spare_ = false;
};

inline double draw(Rng &rng, Dist dist) {
  double z = rng.normal();
  return dist == Dist::Normal ? z : 2.0 + 4.0 * z;
}

// Fills n contiguous elements; values are rounded (RNE) to T through float.
template <class T> void fill_random(T *p, size_t n, Rng &rng, Dist dist) {
  for (size_t i = 0; i < n; ++i) p[i] = from_float<T>(float(draw(rng, dist)));
}

//===----------------------------------------------------------------------===//
// Poisoning and error measures
//===----------------------------------------------------------------------===//

inline void poison_nan(float *p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = std::numeric_limits<float>::quiet_NaN();
}
inline void poison_nan(double *p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = std::numeric_limits<double>::quiet_NaN();
}
inline void poison_nan(bf16 *p, size_t n) { for (size_t i = 0; i < n; ++i) p[i].bits = 0x7fc0; }
inline void poison_nan(f16 *p, size_t n) { for (size_t i = 0; i < n; ++i) p[i].bits = 0x7e00; }

struct ErrorStats {
  double rel_l2 = 0;   // ||out - ref|| / ||ref||; NaN if any out is not finite
  double max_abs = 0;  // max |out - ref| over finite elements
  size_t count = 0;    // elements compared
  size_t nonfinite = 0;// elements of out that are NaN or +-inf where ref is finite
  bool ok(double tol) const { return nonfinite == 0 && rel_l2 <= tol; }
};

// Compares a strided (B, H, Nq, D) output with a strided double reference.
template <class T>
ErrorStats compare_bhnd(const Shape &sh, const T *out, Strides4 os,
                        const double *ref, Strides4 rs) {
  ErrorStats e;
  double num = 0, den = 0;
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t h = 0; h < sh.heads; ++h)
      for (int64_t i = 0; i < sh.seqlen_q; ++i)
        for (int64_t d = 0; d < sh.head_dim; ++d) {
          double x = to_double(out[b * os.s[0] + h * os.s[1] + i * os.s[2] + d * os.s[3]]);
          double r = ref[b * rs.s[0] + h * rs.s[1] + i * rs.s[2] + d * rs.s[3]];
          ++e.count;
          if (!std::isfinite(x)) { ++e.nonfinite; continue; }
          double diff = std::fabs(x - r);
          num += diff * diff;
          den += r * r;
          if (diff > e.max_abs) e.max_abs = diff;
        }
  e.rel_l2 = e.nonfinite ? std::numeric_limits<double>::quiet_NaN()
                         : (den > 0 ? std::sqrt(num / den) : std::sqrt(num));
  return e;
}

// Contiguous variant: n elements of out against n of ref.
template <class T>
ErrorStats compare(const T *out, const double *ref, size_t n) {
  Shape sh{1, 1, int64_t(n), 1, 1};
  return compare_bhnd(sh, out, Strides4{{0, 0, 1, 1}}, ref, Strides4{{0, 0, 1, 1}});
}

// LSE check: max |lse - ref| where ref is finite; a row where exactly one of
// the two is -inf, or where lse is NaN / +inf, counts as nonfinite (mismatch).
inline ErrorStats compare_lse(const Shape &sh, const float *lse, Strides3 ls,
                              const double *ref, Strides3 rs) {
  ErrorStats e;
  const double ninf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t h = 0; h < sh.heads; ++h)
      for (int64_t i = 0; i < sh.seqlen_q; ++i) {
        double x = lse[b * ls.s[0] + h * ls.s[1] + i * ls.s[2]];
        double r = ref[b * rs.s[0] + h * rs.s[1] + i * rs.s[2]];
        ++e.count;
        if (r == ninf || x == ninf) {
          if (r != x) ++e.nonfinite;
          continue;
        }
        if (!std::isfinite(x)) { ++e.nonfinite; continue; }
        double diff = std::fabs(x - r);
        if (diff > e.max_abs) e.max_abs = diff;
      }
  e.rel_l2 = e.max_abs;  // not meaningful for LSE; kept equal to max_abs
  return e;
}

} // namespace attn_ref

#endif // ATTN_JIT_TESTS_COMMON_REFERENCE_H
