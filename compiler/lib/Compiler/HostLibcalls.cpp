//===- HostLibcalls.cpp - Runtime functions the host JIT's code may call -===//

#include "attn/Compiler/HostLibcalls.h"

#include <cstdint>
#include <cstring>

uint16_t attn::compiler::truncF32ToBf16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

namespace {

/// __truncsfbf2 itself. x86-64 returns a 16-bit float in the low half of
/// xmm0, as it returns _Float16, so the bits travel as one.
extern "C" _Float16 attnTruncSfBf2(float x) {
  uint16_t bits = attn::compiler::truncF32ToBf16Bits(x);
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
