//===- OptMain.h - attn-opt entry point -------------------------*- C++ -*-===//

#ifndef ATTN_TOOLS_OPTMAIN_H
#define ATTN_TOOLS_OPTMAIN_H

#ifdef __cplusplus
extern "C" {
#endif

/// Runs attn-opt (mlir-opt with attn's dialects, passes and pipelines).
/// Exported from libattn-jit so that the attn-opt executable stays small.
__attribute__((visibility("default"))) int attnOptMain(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif // ATTN_TOOLS_OPTMAIN_H
