//===- KernelBlob.cpp - A compiled PTX kernel as bytes --------------------===//

#include "KernelBlob.h"
#include "ByteIO.h"

#include <fmt/format.h>

namespace attn::rt {

std::string encodeKernelBlob(const compiler::PtxKernel &kernel) {
  ByteWriter writer;
  writer.string(kernel.name);
  writer.i32(kernel.threads);
  writer.i32(kernel.blockM);
  writer.i32(kernel.sharedBytes);
  writer.i32(kernel.packGqa ? 1 : 0);
  writer.string(kernel.ptx);
  return writer.take();
}

std::string checkKernelMetadata(const compiler::PtxKernel &kernel) {
  if (kernel.name.empty())
    return "empty kernel name";
  if (kernel.ptx.empty())
    return "empty PTX";
  if (kernel.threads <= 0 || kernel.threads > 1024)
    return fmt::format("threads = {} (expected 1..1024)", kernel.threads);
  if (kernel.blockM <= 0)
    return fmt::format("blockM = {} (expected > 0)", kernel.blockM);
  if (kernel.sharedBytes < 0)
    return fmt::format("sharedBytes = {} (expected >= 0)", kernel.sharedBytes);
  return "";
}

bool decodeKernelBlob(std::string_view blob, compiler::PtxKernel &out,
                      std::string &reason) {
  ByteReader reader(blob);
  compiler::PtxKernel kernel;
  int32_t packGqa = 0;
  if (!reader.string(kernel.name) || !reader.i32(kernel.threads) ||
      !reader.i32(kernel.blockM) || !reader.i32(kernel.sharedBytes) ||
      !reader.i32(packGqa) || !reader.string(kernel.ptx)) {
    reason = "kernel payload is truncated";
    return false;
  }
  if (reader.remaining() != 0) {
    reason = fmt::format("{} unexpected bytes after the kernel payload",
                         reader.remaining());
    return false;
  }
  if (packGqa != 0 && packGqa != 1) {
    reason = fmt::format("bad kernel metadata: pack_gqa = {}", packGqa);
    return false;
  }
  kernel.packGqa = packGqa == 1;
  reason = checkKernelMetadata(kernel);
  if (!reason.empty()) {
    reason = "bad kernel metadata: " + reason;
    return false;
  }
  out = std::move(kernel);
  return true;
}

} // namespace attn::rt
