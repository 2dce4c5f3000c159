# cmake -DIN=<file.ptx> -DOUT=<header> -DNAME=<identifier> -P EmbedPtx.cmake
# Wraps PTX text into a C++ raw string literal so attn-bench can hand it to
# cuModuleLoadData without shipping a separate file.
file(READ "${IN}" ptx)
file(WRITE "${OUT}" "// Generated from ${IN} by EmbedPtx.cmake; do not edit.\n"
  "#pragma once\nstatic const char ${NAME}[] = R\"attnptx(${ptx})attnptx\";\n")
