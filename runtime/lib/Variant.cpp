//===- Variant.cpp - attn_variant: checks and kernel arguments ------------===//

#include "Variant.h"
#include "Error.h"
#include "Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attn::rt {

// Compared as numbers: the C API's enum and the compiler's are two types.
static_assert(unsigned(ATTN_VARIANT_WINDOW) == abi::kWindow &&
                  unsigned(ATTN_VARIANT_PREFIX_LM) == abi::kPrefixLm &&
                  unsigned(ATTN_VARIANT_DOCUMENT) == abi::kDocument &&
                  unsigned(ATTN_VARIANT_ALIBI) == abi::kAlibi &&
                  unsigned(ATTN_VARIANT_BIAS) == abi::kBias &&
                  unsigned(ATTN_VARIANT_SOFTCAP) == abi::kSoftcap,
              "attn_variant_flags are the compiler's variant bits");

namespace {

Status checkArray(const void *data, const char *name, const char *flag) {
  if (!data)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.{} is a null pointer (needed by {})", name,
                     flag);
  if (reinterpret_cast<uintptr_t>(data) % 4 != 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.{} = {} is not 4-byte aligned", name, data);
  return Status();
}

} // namespace

int64_t windowKeys(const attn_fwd_args &args) {
  const attn_variant &v = args.variant;
  if (!(v.flags & ATTN_VARIANT_WINDOW) || v.window_left < 0)
    return 0;
  // Keys j - (i + shift) in [-left, right]; a causal mask caps right at 0.
  bool causal = args.mask != ATTN_MASK_NONE;
  if (!causal && v.window_right < 0)
    return 0;
  int64_t right = v.window_right < 0 ? 0 : v.window_right;
  if (causal)
    right = std::min<int64_t>(right, 0);
  return v.window_left + right + 1;
}

Status validateVariant(const attn_fwd_args &args) {
  const attn_variant &v = args.variant;
  if (v.flags & ~abi::kAllVariants)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.flags = {:#x}: unknown flags {:#x}", v.flags,
                     v.flags & ~abi::kAllVariants);
  if ((v.flags & ATTN_VARIANT_PREFIX_LM) && args.mask == ATTN_MASK_NONE)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "ATTN_VARIANT_PREFIX_LM needs a causal mask (the prefix "
                     "is seen in addition to the causal keys)");
  if ((v.flags & ATTN_VARIANT_PREFIX_LM) && v.prefix_len < 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.prefix_len = {}: must not be negative",
                     v.prefix_len);
  if ((v.flags & ATTN_VARIANT_SOFTCAP) &&
      !(std::isfinite(v.softcap) && v.softcap > 0))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.softcap = {}: must be finite and positive",
                     v.softcap);
  if ((v.flags & ATTN_VARIANT_BIAS) &&
      (v.bias_strides[0] < 0 || v.bias_strides[1] < 0))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.bias_strides = ({}, {}): must not be negative",
                     v.bias_strides[0], v.bias_strides[1]);
  if (v.num_captures < 0 || v.num_captures > abi::kMaxUserCaptures)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.num_captures = {}: must be in [0, {}]",
                     v.num_captures, abi::kMaxUserCaptures);
  if (v.num_captures > 0 && !v.mods)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.num_captures = {} without variant.mods",
                     v.num_captures);
  if ((v.flags & ATTN_VARIANT_DOCUMENT) && !v.kv_doc_ids &&
      args.seqlen_q != args.seqlen_k)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.kv_doc_ids is null with seqlen_q = {} != "
                     "seqlen_k = {} (only equal lengths share q_doc_ids)",
                     args.seqlen_q, args.seqlen_k);
  // Arrays are read only when there is something to compute.
  if (isEmptyForward(args) || args.seqlen_k == 0)
    return Status();
  if (v.flags & ATTN_VARIANT_ALIBI)
    if (Status s = checkArray(v.alibi_slopes, "alibi_slopes",
                              "ATTN_VARIANT_ALIBI");
        !s.ok())
      return s;
  if (v.flags & ATTN_VARIANT_DOCUMENT) {
    if (Status s =
            checkArray(v.q_doc_ids, "q_doc_ids", "ATTN_VARIANT_DOCUMENT");
        !s.ok())
      return s;
    if (v.kv_doc_ids)
      if (Status s = checkArray(v.kv_doc_ids, "kv_doc_ids",
                                "ATTN_VARIANT_DOCUMENT");
          !s.ok())
        return s;
  }
  if (v.flags & ATTN_VARIANT_BIAS)
    if (Status s = checkArray(v.bias, "bias", "ATTN_VARIANT_BIAS"); !s.ok())
      return s;
  return Status();
}

Status validateUserCaptures(const attn_fwd_args &args,
                            const compiler::UserModsInfo &user) {
  const attn_variant &v = args.variant;
  if (v.num_captures != static_cast<int64_t>(user.captures.size()))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.num_captures = {}: the mods take {} captures",
                     v.num_captures, user.captures.size());
  if (v.num_captures > 0 && !v.captures)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "variant.captures is a null pointer ({} captures)",
                     v.num_captures);
  for (size_t i = 0; i < user.captures.size(); ++i) {
    const abi::UserCapture &kind = user.captures[i];
    const attn_capture &c = v.captures[i];
    if (kind.rank == 0)
      continue;
    for (int r = 0; r < kind.rank; ++r)
      if (c.sizes[r] < 0 || c.strides[r] < 0)
        return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                         "variant.captures[{}]: sizes and strides must not "
                         "be negative (dim {}: size {}, stride {})",
                         i, r, c.sizes[r], c.strides[r]);
    if (Status s = checkArray(c.data, "captures[].data", "a memref capture");
        !s.ok())
      return s;
  }
  return Status();
}

std::vector<abi::CaptureValue>
captureValues(const attn_fwd_args &args, const compiler::UserModsInfo *user,
              const VarlenCall *varlen, const SplitCall *split) {
  const attn_variant &v = args.variant;
  auto window = [](int64_t bound) {
    return bound < 0 ? kUnboundedWindow : bound;
  };
  std::vector<abi::CaptureValue> out;
  if (varlen)
    out = varlen->values();
  if (split) {
    std::vector<abi::CaptureValue> values = split->values();
    out.insert(out.end(), values.begin(), values.end());
  }
  for (const abi::CaptureArg &arg : abi::kCaptureArgs) {
    if (!(v.flags & arg.variant))
      continue;
    abi::CaptureValue c;
    std::string_view name = arg.name;
    if (name == "window_left")
      c.i64 = window(v.window_left);
    else if (name == "window_right")
      c.i64 = window(v.window_right);
    else if (name == "prefix_len")
      c.i64 = v.prefix_len;
    else if (name == "softcap")
      c.f32 = v.softcap;
    else if (name == "alibi_slopes")
      c = {0, 0, v.alibi_slopes, {args.heads, 0}, {1, 0}};
    else if (name == "q_doc_ids")
      c = {0, 0, v.q_doc_ids, {args.seqlen_q, 0}, {1, 0}};
    else if (name == "kv_doc_ids")
      c = {0, 0, v.kv_doc_ids ? v.kv_doc_ids : v.q_doc_ids,
           {args.seqlen_k, 0}, {1, 0}};
    else if (name == "bias")
      c = {0, 0, v.bias, {args.seqlen_q, args.seqlen_k},
           {v.bias_strides[0], v.bias_strides[1]}};
    out.push_back(c);
  }
  if (user)
    for (size_t i = 0; i < user->captures.size(); ++i) {
      const attn_capture &in = v.captures[i];
      abi::CaptureValue c;
      c.f32 = in.f32;
      c.i64 = in.i64;
      c.data = in.data;
      for (int r = 0; r < user->captures[i].rank; ++r) {
        c.sizes[r] = in.sizes[r];
        c.strides[r] = in.strides[r];
      }
      out.push_back(c);
    }
  return out;
}

} // namespace attn::rt
