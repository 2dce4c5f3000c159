//===- KernelBlob.h - A compiled PTX kernel as bytes ----------------------===//
//
// The payload of a disk cache entry: the PTX and what is needed to launch it
// (entry name, threads, blockM, dynamic shared memory bytes).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELBLOB_H
#define ATTN_RUNTIME_KERNELBLOB_H

#include "attn/Compiler/Compiler.h"

#include <string>
#include <string_view>

namespace attn::rt {

std::string encodeKernelBlob(const compiler::PtxKernel &kernel);

/// Decodes `blob` into `out`; on failure returns false and says why in
/// `reason` (a checksum only proves the bytes are the ones written, this
/// also rejects impossible launch metadata).
bool decodeKernelBlob(std::string_view blob, compiler::PtxKernel &out,
                      std::string &reason);

/// Why `kernel` cannot be launched, or "" when its metadata is plausible.
std::string checkKernelMetadata(const compiler::PtxKernel &kernel);

} // namespace attn::rt

#endif // ATTN_RUNTIME_KERNELBLOB_H
