//===- HostLibcalls.cpp - Runtime functions the host JIT's code may call -===//

#include "HostLibcalls.h"

#include <cstdint>
#include <cstring>

namespace {

/// f32 -> bf16, rounded to nearest even, NaNs kept quiet (compiler-rt's
/// __truncsfbf2). The result travels as x86-64 returns a 16-bit float: in
/// the low half of xmm0, as _Float16 does, so the bits are passed through
/// one.
extern "C" _Float16 attnTruncSfBf2(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  uint16_t bits;
  if ((u & 0x7fffffffu) > 0x7f800000u)
    bits = static_cast<uint16_t>((u >> 16) | 0x40u);
  else
    bits = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  _Float16 out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

} // namespace

llvm::orc::SymbolMap
attn::compiler::hostLibcalls(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  symbols[interner("__truncsfbf2")] = {
      llvm::orc::ExecutorAddr::fromPtr(&attnTruncSfBf2),
      llvm::JITSymbolFlags::Exported};
  return symbols;
}
