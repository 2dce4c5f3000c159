//===- Version.cpp - attn_version -----------------------------------------===//

#include "attn-jit/attn_jit.h"
#include "attn/Compiler/Compiler.h"

extern "C" const char *attn_version(void) {
  return attn::compiler::compilerVersion();
}
