//===- TensorMap.cpp - K/V tensor maps of the TMA kernels -----------------===//

#include "TensorMap.h"

#include "Error.h"
#include "Validate.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <tuple>

namespace attn::rt {

namespace {

/// cuTensorMapEncodeTiled's rules: a 16-byte-aligned base, strides (bytes)
/// multiples of 16 below 2^40, dims in [1, 2^32].
constexpr int64_t kTmaAlign = 16;
constexpr int64_t kMaxTmaStride = int64_t(1) << 40;
constexpr int64_t kMaxTmaDim = int64_t(1) << 32;
/// Element size: the TMA kernels are bf16 / f16 (wgmma).
constexpr int64_t kElementBytes = 2;

struct KvTensor {
  const char *name;
  const void *data;
  const int64_t *strides;
};

/// (B, H, N) strides in elements as the map takes them: a dim of size 1 is
/// never stepped over, so whatever stride it came with (0, as expanded
/// tensors have) becomes the dense one, which the inner dim makes valid.
void mapStrides(const KvTensor &t, const int64_t dims[4], int64_t out[3]) {
  for (int i = 2; i >= 0; --i)
    out[i] = dims[i] != 1 ? t.strides[i]
             : i == 2     ? dims[3]
                          : out[i + 1] * dims[i + 1];
}

std::string reasonFor(const KvTensor &t, const int64_t dims[4]) {
  if (reinterpret_cast<uintptr_t>(t.data) % kTmaAlign != 0)
    return fmt::format("{}'s address is not {}-byte aligned", t.name,
                       kTmaAlign);
  if (t.strides[3] != 1)
    return fmt::format("{}'s innermost stride is {}, not 1", t.name,
                       t.strides[3]);
  for (int i = 0; i < 4; ++i)
    if (dims[i] < 1 || dims[i] > kMaxTmaDim)
      return fmt::format("{}'s size {} is outside [1, 2^32]", t.name,
                         dims[i]);
  int64_t strides[3];
  mapStrides(t, dims, strides);
  for (int i = 0; i < 3; ++i) {
    int64_t bytes = strides[i] * kElementBytes;
    if (strides[i] <= 0 || bytes % kTmaAlign != 0 || bytes >= kMaxTmaStride)
      return fmt::format("{}'s stride {} ({} bytes) is not a positive "
                         "multiple of {} bytes below 2^40",
                         t.name, strides[i], bytes, kTmaAlign);
  }
  return "";
}

/// What the maps describe: K and V as (B, Hkv, N, D). A call without keys
/// (or rows) issues no copy -- the prologue's is guarded by "any tile" --
/// yet must run the same kernel as any other length: its maps describe one
/// row (1, 1, 1, D) at Q's address (checked, aligned), never read.
struct MapView {
  int64_t dims[4];
  KvTensor tensors[abi::kTensorMapCount];
};
MapView viewOf(const attn_fwd_args &args) {
  if (args.batch < 1 || args.seqlen_k < 1)
    return {{1, 1, 1, args.head_dim},
            {{"K", args.q, args.k_strides}, {"V", args.q, args.v_strides}}};
  return {{args.batch, kvHeadsOf(args), args.seqlen_k, args.head_dim},
          {{"K", args.k, args.k_strides}, {"V", args.v, args.v_strides}}};
}

/// The ragged form's extra rules (KernelABI.h): a batch of one, N + 1
/// rows in range, and a base N rows back that does not wrap below 0.
std::string raggedReasonFor(const KvTensor &t, const int64_t dims[4]) {
  if (dims[0] != 1)
    return fmt::format("a ragged map views a batch of one, not {}", dims[0]);
  if (dims[2] + 1 > kMaxTmaDim)
    return fmt::format("{}'s {} rows + 1 exceed 2^32", t.name, dims[2]);
  int64_t strides[3];
  mapStrides(t, dims, strides);
  uint64_t back = uint64_t(dims[2]) * uint64_t(strides[2]) * kElementBytes;
  if (reinterpret_cast<uintptr_t>(t.data) < back)
    return fmt::format("{}'s address is below its {} rows' bytes, where a "
                       "ragged map's base lies",
                       t.name, dims[2]);
  return "";
}

} // namespace

std::string tensorMapUnsupportedReason(const attn_fwd_args &args,
                                       abi::TensorMapForm form) {
  if (args.dtype != ATTN_DTYPE_BF16 && args.dtype != ATTN_DTYPE_F16)
    return "TMA kernels are bf16 or f16";
  MapView view = viewOf(args);
  for (const KvTensor &t : view.tensors) {
    if (std::string reason = reasonFor(t, view.dims); !reason.empty())
      return reason;
    if (form == abi::TensorMapForm::Ragged)
      if (std::string reason = raggedReasonFor(t, view.dims); !reason.empty())
        return reason;
  }
  return "";
}

namespace {

/// What a call's maps are a function of: the same inputs encode the same
/// bytes, so a thread's repeated call (a decode step's cache, a training
/// loop's buffers) reuses its last maps instead of two driver calls, which
/// cost ~0.6-1.1 µs of a cached call's host time on the H200 (version 18).
struct MapInputs {
  uint64_t driver; // CudaDriver::id
  const void *q, *k, *v;
  attn_dtype dtype;
  int64_t batch, kvHeads, seqlenK, headDim, boxRows;
  abi::TensorMapForm form;
  int64_t kStrides[4], vStrides[4];

  static MapInputs of(const CudaDriver &driver, const attn_fwd_args &args,
                      int64_t boxRows, abi::TensorMapForm form) {
    // clang-format off
    MapInputs in{driver.id, args.q, args.k, args.v, args.dtype, args.batch,
                 kvHeadsOf(args), args.seqlen_k, args.head_dim, boxRows, form,
                 {}, {}};
    // clang-format on
    std::copy(std::begin(args.k_strides), std::end(args.k_strides),
              in.kStrides);
    std::copy(std::begin(args.v_strides), std::end(args.v_strides),
              in.vStrides);
    return in;
  }
  bool operator==(const MapInputs &o) const {
    auto fields = [](const MapInputs &m) {
      return std::tie(m.driver, m.q, m.k, m.v, m.dtype, m.batch, m.kvHeads,
                      m.seqlenK, m.headDim, m.boxRows, m.form);
    };
    return fields(*this) == fields(o) &&
           std::equal(std::begin(kStrides), std::end(kStrides),
                      std::begin(o.kStrides)) &&
           std::equal(std::begin(vStrides), std::end(vStrides),
                      std::begin(o.vStrides));
  }
};

struct LastMaps {
  bool valid = false;
  MapInputs inputs;
  TensorMaps maps;
};

Status encodeUncached(const CudaDriver &driver, const attn_fwd_args &args,
                      int64_t boxRows, abi::TensorMapForm form,
                      TensorMaps &out);

} // namespace

Status encodeTensorMaps(const CudaDriver &driver, const attn_fwd_args &args,
                        int64_t boxRows, TensorMaps &out,
                        abi::TensorMapForm form) {
  thread_local LastMaps last;
  MapInputs inputs = MapInputs::of(driver, args, boxRows, form);
  if (last.valid && last.inputs == inputs) {
    out = last.maps;
    return Status();
  }
  if (Status status = encodeUncached(driver, args, boxRows, form, out);
      !status.ok())
    return status;
  last = {true, inputs, out};
  return Status();
}

namespace {

Status encodeUncached(const CudaDriver &driver, const attn_fwd_args &args,
                      int64_t boxRows, abi::TensorMapForm form,
                      TensorMaps &out) {
  if (!driver.cuTensorMapEncodeTiled)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA "
                     "12.0): no TMA kernels");
  if (std::string reason = tensorMapUnsupportedReason(args, form);
      !reason.empty())
    return makeError(ATTN_ERROR_UNSUPPORTED, "K/V cannot be read by TMA: {}",
                     reason);
  if (boxRows < 1 || boxRows > 256)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "a TMA box has 1 to 256 rows, got {}", boxRows);
  MapView view = viewOf(args);
  static_assert(abi::kTensorMaps[0].tensor == 1 &&
                    abi::kTensorMaps[1].tensor == 2,
                "kTensorMaps lists K, then V");
  CUtensorMapDataType type = args.dtype == ATTN_DTYPE_BF16
                                 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const int64_t *sizes = view.dims;
  for (int m = 0; m < abi::kTensorMapCount; ++m) {
    const KvTensor &t = view.tensors[m];
    int64_t s[3];
    mapStrides(t, sizes, s);
    // Innermost first: (D, N, Hkv, B); strides of the outer three in bytes.
    // Ragged (KernelABI.h): (D, N, Hkv, N + 1), the last dimension stepping
    // rows too, from a base N rows back.
    bool ragged = form == abi::TensorMapForm::Ragged;
    cuuint64_t dims[4] = {cuuint64_t(sizes[3]), cuuint64_t(sizes[2]),
                          cuuint64_t(sizes[1]),
                          cuuint64_t(ragged ? sizes[2] + 1 : sizes[0])};
    cuuint64_t strides[3] = {
        cuuint64_t(s[2] * kElementBytes), cuuint64_t(s[1] * kElementBytes),
        cuuint64_t((ragged ? s[2] : s[0]) * kElementBytes)};
    // An address, not a pointer into the tensor: integer arithmetic.
    uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
    if (ragged)
      base -= uintptr_t(sizes[2]) * uintptr_t(s[2]) * kElementBytes;
    cuuint32_t box[4] = {cuuint32_t(abi::kTmaBoxCols), cuuint32_t(boxRows), 1,
                         1};
    cuuint32_t elementStrides[4] = {1, 1, 1, 1};
    // Out-of-bounds elements (rows past N, columns past D) read as zero.
    CUresult result = driver.cuTensorMapEncodeTiled(
        &out.maps[m], type, 4, reinterpret_cast<void *>(base), dims, strides,
        box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS)
      return makeError(ATTN_ERROR_CUDA,
                       "cuTensorMapEncodeTiled of {} ({}x{}x{}x{}, strides "
                       "{}/{}/{} elements, box {}x{}) failed: {}",
                       t.name, args.batch, kvHeadsOf(args), args.seqlen_k,
                       args.head_dim, t.strides[0], t.strides[1],
                       t.strides[2], boxRows, abi::kTmaBoxCols,
                       driver.describe(result));
  }
  return Status();
}

} // namespace

} // namespace attn::rt
