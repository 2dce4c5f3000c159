//===- Runtime.h - attn-jit runtime, C++ API --------------------*- C++ -*-===//
//
// A header-only C++ veneer over the C API of attn_jit.h: results are Status
// and Expected<T> values instead of codes plus attn_last_error(). Only the C
// API crosses the shared library boundary, so this header makes no demand on
// the C++ ABI of the library. No exceptions are thrown.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_RUNTIME_H
#define ATTN_JIT_RUNTIME_H

#include "attn-jit/attn_jit.h"

#include <optional>
#include <string>
#include <utility>

namespace attn {

/// The outcome of a call: a code and, on failure, what went wrong and why.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(attn_status code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return code_ == ATTN_OK; }
  attn_status code() const { return code_; }
  const std::string &message() const { return message_; }

  /// "INVALID_ARGUMENT: q_strides[3] = 2: ..." (or "OK").
  std::string toString() const {
    std::string text = attn_status_string(code_);
    if (!message_.empty())
      text += ": " + message_;
    return text;
  }

private:
  attn_status code_ = ATTN_OK;
  std::string message_;
};

/// Either a value or the Status that explains why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Status status) : status_(std::move(status)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  /// The failure; a default (OK) Status when there is a value.
  const Status &status() const { return status_; }
  Status takeStatus() { return std::move(status_); }

  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

enum class Layout {
  BHND, ///< (batch, heads, seq, dim), contiguous
  BNHD  ///< (batch, seq, heads, dim), contiguous
};

/// Arguments for a contiguous layout: sizes, strides, pointers and dtype set,
/// no mask, default scale, the default stream. K and V have `kvHeads` heads
/// (grouped-query attention; 0: `heads`).
inline attn_fwd_args makeForwardArgs(Layout layout, const void *q,
                                     const void *k, const void *v, void *o,
                                     float *lse, int64_t batch, int64_t heads,
                                     int64_t seqlenQ, int64_t seqlenK,
                                     int64_t headDim, attn_dtype dtype,
                                     attn_device device = ATTN_DEVICE_CUDA,
                                     int64_t kvHeads = 0) {
  attn_fwd_args args{};
  args.q = q;
  args.k = k;
  args.v = v;
  args.o = o;
  args.lse = lse;
  args.batch = batch;
  args.heads = heads;
  args.kv_heads = kvHeads;
  args.seqlen_q = seqlenQ;
  args.seqlen_k = seqlenK;
  args.head_dim = headDim;
  args.dtype = dtype;
  args.device = device;
  if (layout == Layout::BHND)
    attn_set_bhnd_strides(&args);
  else
    attn_set_bnhd_strides(&args);
  return args;
}

/// Runs forward attention (see attn_forward).
inline Status forward(const attn_fwd_args &args) {
  attn_status code = attn_forward(&args);
  if (code == ATTN_OK)
    return Status();
  return Status(code, attn_last_error());
}

/// Runs forward attention on a variable-length batch (attn_forward_varlen).
inline Status forwardVarlen(const attn_varlen_args &args) {
  attn_status code = attn_forward_varlen(&args);
  if (code == ATTN_OK)
    return Status();
  return Status(code, attn_last_error());
}

/// Runs forward attention over a paged K/V cache (attn_forward_paged).
inline Status forwardPaged(const attn_paged_args &args) {
  attn_status code = attn_forward_paged(&args);
  if (code == ATTN_OK)
    return Status();
  return Status(code, attn_last_error());
}

/// Runs the backward pass (see attn_backward).
inline Status backward(const attn_bwd_args &args) {
  attn_status code = attn_backward(&args);
  if (code == ATTN_OK)
    return Status();
  return Status(code, attn_last_error());
}

inline Expected<attn_stats> getStats() {
  attn_stats stats{};
  attn_status code = attn_get_stats(&stats);
  if (code != ATTN_OK)
    return Status(code, attn_last_error());
  return stats;
}

inline void clearMemoryCache() { attn_clear_memory_cache(); }

/// Waits until no kernel builds in the background (see
/// attn_wait_for_compiles: tiered first calls).
inline void waitForCompiles() { attn_wait_for_compiles(); }

/// Split-KV's count for forward calls (see attn_set_num_splits).
inline Status setNumSplits(int64_t numSplits) {
  attn_status code = attn_set_num_splits(numSplits);
  if (code == ATTN_OK)
    return Status();
  return Status(code, attn_last_error());
}

/// The backward's form (see attn_set_deterministic).
inline Status setDeterministic(bool deterministic) {
  attn_status code = attn_set_deterministic(deterministic ? 1 : 0);
  if (code == ATTN_OK)
    return Status();
  return Status(code, attn_last_error());
}

/// The compiler version hash that is part of every cache key.
inline std::string version() { return attn_version(); }

} // namespace attn

#endif // ATTN_JIT_RUNTIME_H
