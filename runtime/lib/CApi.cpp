//===- CApi.cpp - The C API of attn_jit.h ---------------------------------===//
//
// Compiled into libattn-jit.so directly (not from an archive) so that its
// symbols are exported despite -Wl,--exclude-libs,ALL.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"
#include "attn-jit/attn_jit.h"

#include <cstring>
#include <exception>
#include <string>

using attn::Status;
using attn::rt::Engine;

namespace {

thread_local std::string lastError;

attn_status fail(const Status &status) {
  lastError = status.message();
  return status.code();
}

/// The status of `call()` (an Engine entry), recording a failure's message.
/// No exception may cross into C (or end the process): one is reported as
/// ATTN_ERROR_INTERNAL naming the C entry `name`.
template <typename Call> attn_status guarded(const char *name, Call call) {
  try {
    Status status = call();
    return status.ok() ? ATTN_OK : fail(status);
  } catch (const std::exception &e) {
    return fail(Status(ATTN_ERROR_INTERNAL,
                       std::string(name) + " threw an exception: " + e.what()));
  } catch (...) {
    return fail(Status(ATTN_ERROR_INTERNAL,
                       std::string(name) + " threw an exception that is not a "
                                           "std::exception"));
  }
}

} // namespace

extern "C" {

void attn_set_bhnd_strides(attn_fwd_args *args) {
  if (!args)
    return;
  int64_t H = args->heads, Hkv = args->kv_heads ? args->kv_heads : H,
          Nq = args->seqlen_q, Nk = args->seqlen_k, D = args->head_dim;
  const int64_t q[4] = {H * Nq * D, Nq * D, D, 1};
  const int64_t kv[4] = {Hkv * Nk * D, Nk * D, D, 1};
  for (int i = 0; i < 4; ++i) {
    args->q_strides[i] = args->o_strides[i] = q[i];
    args->k_strides[i] = args->v_strides[i] = kv[i];
  }
  args->lse_strides[0] = H * Nq;
  args->lse_strides[1] = Nq;
  args->lse_strides[2] = 1;
}

void attn_set_bnhd_strides(attn_fwd_args *args) {
  if (!args)
    return;
  int64_t H = args->heads, Hkv = args->kv_heads ? args->kv_heads : H,
          Nq = args->seqlen_q, Nk = args->seqlen_k, D = args->head_dim;
  // Index order stays (b, h, n, d); memory order is (b, n, h, d).
  const int64_t q[4] = {Nq * H * D, D, H * D, 1};
  const int64_t kv[4] = {Nk * Hkv * D, D, Hkv * D, 1};
  for (int i = 0; i < 4; ++i) {
    args->q_strides[i] = args->o_strides[i] = q[i];
    args->k_strides[i] = args->v_strides[i] = kv[i];
  }
  args->lse_strides[0] = H * Nq;
  args->lse_strides[1] = Nq;
  args->lse_strides[2] = 1;
}

attn_status attn_forward(const attn_fwd_args *args) {
  return guarded("attn_forward",
                 [&] { return Engine::global().forward(args); });
}

void attn_set_varlen_strides(attn_varlen_args *args) {
  if (!args)
    return;
  attn_fwd_args &f = args->fwd;
  int64_t H = f.heads, Hkv = f.kv_heads ? f.kv_heads : H, D = f.head_dim;
  // Index order (batch, head, row, dim); memory (row, head, dim). The batch
  // stride is ignored.
  const int64_t q[4] = {0, D, H * D, 1};
  const int64_t kv[4] = {0, D, Hkv * D, 1};
  for (int i = 0; i < 4; ++i) {
    f.q_strides[i] = f.o_strides[i] = q[i];
    f.k_strides[i] = f.v_strides[i] = kv[i];
  }
  // (H, total_q), FlashAttention's varlen LSE.
  f.lse_strides[0] = 0;
  f.lse_strides[1] = f.seqlen_q;
  f.lse_strides[2] = 1;
}

void attn_set_paged_strides(attn_paged_args *args) {
  if (!args)
    return;
  attn_varlen_args varlen{};
  varlen.fwd = args->fwd;
  attn_set_varlen_strides(&varlen);
  attn_fwd_args &f = args->fwd;
  for (int i = 0; i < 4; ++i)
    f.q_strides[i] = f.o_strides[i] = varlen.fwd.q_strides[i];
  for (int i = 0; i < 3; ++i)
    f.lse_strides[i] = varlen.fwd.lse_strides[i];
  // Index order (page, head, row, dim); memory (page, row, head, dim).
  int64_t Hkv = f.kv_heads ? f.kv_heads : f.heads, D = f.head_dim;
  const int64_t kv[4] = {args->page_size * Hkv * D, D, Hkv * D, 1};
  for (int i = 0; i < 4; ++i)
    f.k_strides[i] = f.v_strides[i] = kv[i];
}

attn_status attn_forward_paged(const attn_paged_args *args) {
  return guarded("attn_forward_paged",
                 [&] { return Engine::global().forwardPaged(args); });
}

attn_status attn_forward_fp8(const attn_fp8_args *args) {
  return guarded("attn_forward_fp8",
                 [&] { return Engine::global().forwardFp8(args); });
}

attn_status attn_forward_varlen(const attn_varlen_args *args) {
  return guarded("attn_forward_varlen",
                 [&] { return Engine::global().forwardVarlen(args); });
}

void attn_set_bwd_strides_like_fwd(attn_bwd_args *args) {
  if (!args)
    return;
  for (int i = 0; i < 4; ++i) {
    args->do_strides[i] = args->fwd.o_strides[i];
    args->dq_strides[i] = args->fwd.q_strides[i];
    args->dk_strides[i] = args->fwd.k_strides[i];
    args->dv_strides[i] = args->fwd.v_strides[i];
  }
}

attn_status attn_backward(const attn_bwd_args *args) {
  return guarded("attn_backward",
                 [&] { return Engine::global().backward(args); });
}

const char *attn_last_error(void) { return lastError.c_str(); }

const char *attn_status_string(attn_status status) {
  // C callers may pass any int.
  int raw;
  std::memcpy(&raw, &status, sizeof raw);
  switch (raw) {
  case ATTN_OK:
    return "ATTN_OK";
  case ATTN_ERROR_INVALID_ARGUMENT:
    return "ATTN_ERROR_INVALID_ARGUMENT";
  case ATTN_ERROR_UNSUPPORTED:
    return "ATTN_ERROR_UNSUPPORTED";
  case ATTN_ERROR_NO_DRIVER:
    return "ATTN_ERROR_NO_DRIVER";
  case ATTN_ERROR_NO_DEVICE:
    return "ATTN_ERROR_NO_DEVICE";
  case ATTN_ERROR_CUDA:
    return "ATTN_ERROR_CUDA";
  case ATTN_ERROR_COMPILE:
    return "ATTN_ERROR_COMPILE";
  case ATTN_ERROR_INTERNAL:
    return "ATTN_ERROR_INTERNAL";
  }
  return "unknown attn_status";
}

attn_status attn_get_stats(attn_stats *out) {
  if (!out)
    return fail(Status(ATTN_ERROR_INVALID_ARGUMENT, "out is a null pointer"));
  *out = Engine::global().stats();
  return ATTN_OK;
}

void attn_clear_memory_cache(void) { Engine::global().clearMemoryCache(); }

void attn_wait_for_compiles(void) { Engine::waitForBackgroundBuilds(); }

attn_status attn_set_num_splits(int64_t num_splits) {
  Status status = Engine::global().setNumSplits(num_splits);
  return status.ok() ? ATTN_OK : fail(status);
}

attn_status attn_set_deterministic(int deterministic) {
  Status status = Engine::global().setDeterministic(deterministic);
  return status.ok() ? ATTN_OK : fail(status);
}

} // extern "C"
