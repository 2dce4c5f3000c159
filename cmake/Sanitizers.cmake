# Sanitizer and fuzzing builds (tools/ci_sanitizers.sh configures them, each
# in a build directory of its own; gcc or clang, libFuzzer clang only):
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
  # Line tables only: reports name files and lines at a fraction of full
  # debug information's size (gcc's spelling is -g1).
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(ATTN_SANITIZER_DEBUG -gline-tables-only)
  else()
    set(ATTN_SANITIZER_DEBUG -g1)
  endif()
  add_compile_options(-fsanitize=${ATTN_SANITIZER} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer ${ATTN_SANITIZER_DEBUG})
  add_link_options(-fsanitize=${ATTN_SANITIZER})
  # LLVM's HandleLLVMOptions links shared libraries with -z defs; the
  # sanitizer's runtime is linked into the executables only, so a shared
  # library (libattn-jit.so) leaves its symbols undefined: -z undefs, later
  # on the command line, lifts that for this build.
  add_link_options(LINKER:-z,undefs)
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
