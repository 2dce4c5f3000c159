//===- HostLibcalls.h - Runtime functions the host JIT's code may call ---===//
//
// LLVM lowers some operations of the host kernels to calls into the
// compiler's runtime library (compiler-rt builtins or libgcc). The process
// need not have them: f32 -> bf16 rounding is a call to __truncsfbf2 on an
// x86 CPU without AVX512-BF16, and GCC 12's libgcc (Debian 12) has no such
// function, so the JIT failed to link every bf16 host kernel there.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_HOSTLIBCALLS_H
#define ATTN_COMPILER_HOSTLIBCALLS_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <cstdint>

namespace attn::compiler {

/// The libcalls above, defined here, by their mangled names: what
/// mlir::ExecutionEngine::registerSymbols takes.
llvm::orc::SymbolMap hostLibcalls(llvm::orc::MangleAndInterner interner);

/// The bits of `x` rounded to bf16, to nearest even; a NaN stays a quiet
/// NaN of its sign (compiler-rt's __truncsfbf2, which hostLibcalls wraps).
uint16_t truncF32ToBf16Bits(float x);

} // namespace attn::compiler

#endif // ATTN_COMPILER_HOSTLIBCALLS_H
