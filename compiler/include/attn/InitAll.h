//===- InitAll.h - dialects and passes attn tools register ------*- C++ -*-===//

#ifndef ATTN_INITALL_H
#define ATTN_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::attn {

/// The attn dialect, the upstream dialects its pipelines produce, and the
/// interfaces those need for bufferization and translation to LLVM IR.
void registerAllDialects(DialectRegistry &registry);

/// attn's passes and pipelines, and the upstream passes the pipelines use.
void registerAllPasses();

} // namespace mlir::attn

#endif // ATTN_INITALL_H
