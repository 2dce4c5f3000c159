//===- KernelBlob.cpp - A compiled PTX kernel as bytes --------------------===//

#include "KernelBlob.h"
#include "ByteIO.h"

#include <fmt/format.h>

namespace attn::rt {

namespace {

/// A configuration compiles to at most this many kernels (the backward: 2
/// or 3).
constexpr int32_t kMaxKernels = 8;

} // namespace

std::string encodeKernelBlob(const compiler::PtxKernel &kernel) {
  ByteWriter writer;
  writer.i32(static_cast<int32_t>(kernel.kernels.size()));
  for (const compiler::KernelLaunch &launch : kernel.kernels) {
    writer.string(launch.name);
    writer.i32(launch.threads);
    writer.i32(launch.blockM);
    writer.i32(launch.sharedBytes);
    writer.i32(launch.packGqa ? 1 : 0);
    writer.i32(launch.overKeys ? 1 : 0);
    writer.i32(launch.overSplits ? 1 : 0);
  }
  writer.string(kernel.ptx);
  return writer.take();
}

std::string checkKernelMetadata(const compiler::PtxKernel &kernel) {
  if (kernel.kernels.empty() || kernel.kernels.size() > size_t(kMaxKernels))
    return fmt::format("{} kernels (expected 1..{})", kernel.kernels.size(),
                       kMaxKernels);
  if (kernel.ptx.empty())
    return "empty PTX";
  for (const compiler::KernelLaunch &launch : kernel.kernels) {
    if (launch.name.empty())
      return "empty kernel name";
    if (launch.threads <= 0 || launch.threads > 1024)
      return fmt::format("{}: threads = {} (expected 1..1024)", launch.name,
                         launch.threads);
    if (launch.blockM <= 0)
      return fmt::format("{}: blockM = {} (expected > 0)", launch.name,
                         launch.blockM);
    if (launch.sharedBytes < 0)
      return fmt::format("{}: sharedBytes = {} (expected >= 0)", launch.name,
                         launch.sharedBytes);
  }
  return "";
}

bool decodeKernelBlob(std::string_view blob, compiler::PtxKernel &out,
                      std::string &reason) {
  ByteReader reader(blob);
  compiler::PtxKernel kernel;
  int32_t count = 0;
  if (!reader.i32(count)) {
    reason = "kernel payload is truncated";
    return false;
  }
  if (count < 1 || count > kMaxKernels) {
    reason = fmt::format("bad kernel metadata: {} kernels", count);
    return false;
  }
  for (int32_t i = 0; i < count; ++i) {
    compiler::KernelLaunch launch;
    int32_t packGqa = 0, overKeys = 0, overSplits = 0;
    if (!reader.string(launch.name) || !reader.i32(launch.threads) ||
        !reader.i32(launch.blockM) || !reader.i32(launch.sharedBytes) ||
        !reader.i32(packGqa) || !reader.i32(overKeys) ||
        !reader.i32(overSplits)) {
      reason = "kernel payload is truncated";
      return false;
    }
    auto isFlag = [](int32_t v) { return v == 0 || v == 1; };
    if (!isFlag(packGqa) || !isFlag(overKeys) || !isFlag(overSplits)) {
      reason = fmt::format("bad kernel metadata: pack_gqa = {}, over_keys = "
                           "{}, over_splits = {}",
                           packGqa, overKeys, overSplits);
      return false;
    }
    launch.packGqa = packGqa == 1;
    launch.overKeys = overKeys == 1;
    launch.overSplits = overSplits == 1;
    kernel.kernels.push_back(std::move(launch));
  }
  if (!reader.string(kernel.ptx)) {
    reason = "kernel payload is truncated";
    return false;
  }
  if (reader.remaining() != 0) {
    reason = fmt::format("{} unexpected bytes after the kernel payload",
                         reader.remaining());
    return false;
  }
  reason = checkKernelMetadata(kernel);
  if (!reason.empty()) {
    reason = "bad kernel metadata: " + reason;
    return false;
  }
  out = std::move(kernel);
  return true;
}

} // namespace attn::rt
