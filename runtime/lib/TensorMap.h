//===- TensorMap.h - K/V/O tensor maps of the TMA kernels -------*- C++ -*-===//
//
// A kernel compiled with TMA (KernelConfig::tma) reads K and V, and may
// read Q and store O, through tensor maps that the runtime encodes per call (the
// pointers change) with the driver's cuTensorMapEncodeTiled -- a thread's
// call with the same inputs as its last reuses those maps -- and passes by
// value after every other argument (KernelABI.h's kTensorMaps; a packed
// batch's K and V in the ragged form, TensorMapForm). A call whose Q, K, V
// or O the copy engine cannot describe (a base not 16-byte aligned, a stride
// not a multiple of 16 bytes, a non-unit innermost stride), or a driver
// without the entry point, runs the cp.async kernel instead.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_TENSORMAP_H
#define ATTN_RUNTIME_TENSORMAP_H

#include "CudaDriver.h"
#include "attn/Compiler/KernelABI.h"
#include "attn-jit/attn_jit.h"

#include <string>

namespace attn::rt {

// The kernel parameter promises 64-byte alignment; cuda.h aligns to 128.
static_assert(sizeof(CUtensorMap) == abi::kTensorMapBytes &&
                  alignof(CUtensorMap) % abi::kTensorMapAlign == 0,
              "KernelABI.h's tensor maps are CUtensorMap objects");

/// The tensor maps of one call, in kTensorMaps' order.
struct TensorMaps {
  CUtensorMap maps[abi::kTensorMapCount];
};

/// Why the K/V (maps of `form`), Q or O (tiled) of `args` cannot be mapped
/// (a variable-length call's `args` is its packed view); empty when they
/// can.
/// With `backward`, of the backward's maps (kBackwardTensorMaps): K, V, Q,
/// and dO, which `args` carries in O's place.
std::string
tensorMapUnsupportedReason(const attn_fwd_args &args,
                           abi::TensorMapForm form = abi::TensorMapForm::Tiled,
                           bool backward = false);

/// The tensors of a backward call's maps as tensorMapUnsupportedReason and
/// encodeTensorMaps take them with `backward`: the forward's arguments with
/// dO (pointer and strides) in O's place.
attn_fwd_args backwardMapView(const attn_bwd_args &args);

/// Rows of a kernel's boxes: its K/V tiles' (block_n) and Q's (block_m).
struct MapBoxRows {
  int64_t kv = 0, query = 0;
};

/// Encodes K's and V's maps of `form` and O's and Q's tiled maps for a
/// kernel whose tiles have `rows`. ATTN_ERROR_UNSUPPORTED without
/// cuTensorMapEncodeTiled or for a layout tensorMapUnsupportedReason
/// refuses; ATTN_ERROR_CUDA when the driver rejects the encoding.
/// With `backward`, the backward's maps (K, V, Q and dO -- which `args`
/// carries in O's place -- kBackwardTensorMaps), each of `rows.query` rows
/// for Q and dO.
Status encodeTensorMaps(const CudaDriver &driver, const attn_fwd_args &args,
                        MapBoxRows rows, TensorMaps &out,
                        abi::TensorMapForm form = abi::TensorMapForm::Tiled,
                        bool backward = false);

} // namespace attn::rt

#endif // ATTN_RUNTIME_TENSORMAP_H
