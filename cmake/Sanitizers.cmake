# Sanitizer and fuzzing builds (tools/ci_sanitizers.sh configures them, with
# clang, each in a build directory of its own):
#  ATTN_SANITIZER  a -fsanitize= list for all of attn's code, e.g.
#                  "address,undefined" or "thread"; every report ends the
#                  process (-fno-sanitize-recover=all).
#  ATTN_LIBFUZZER  links attn-opt-fuzzer with libFuzzer, and gives the code it
#                  fuzzes (dialect/, compiler/) the coverage instrumentation
#                  libFuzzer follows (ATTN_FUZZER_COVERAGE_FLAGS).
# MLIR and LLVM themselves come from the installation, uninstrumented.
set(ATTN_SANITIZER "" CACHE STRING
    "-fsanitize= list of a sanitizer build (clang), e.g. address,undefined")
option(ATTN_LIBFUZZER "Link attn-opt-fuzzer with libFuzzer (clang)" OFF)

if(ATTN_SANITIZER)
  add_compile_options(-fsanitize=${ATTN_SANITIZER} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -gline-tables-only)
  add_link_options(-fsanitize=${ATTN_SANITIZER})
endif()

set(ATTN_FUZZER_COVERAGE_FLAGS "")
if(ATTN_LIBFUZZER)
  set(ATTN_FUZZER_COVERAGE_FLAGS -fsanitize=fuzzer-no-link)
endif()

# What libattn-jit and the bundled tools link so that they run where no LLVM
# or newer libstdc++ is installed. A sanitizer build leaves the sanitizer's
# runtime, linked into each executable, to define the symbols a shared
# library leaves undefined (no --no-undefined), and shares one libstdc++ with
# it, whose operator new and delete the sanitizer intercepts.
if(ATTN_SANITIZER)
  set(ATTN_NO_UNDEFINED "")
  set(ATTN_STATIC_CXX_RUNTIME "")
else()
  set(ATTN_NO_UNDEFINED -Wl,--no-undefined)
  set(ATTN_STATIC_CXX_RUNTIME -static-libstdc++ -static-libgcc)
endif()
