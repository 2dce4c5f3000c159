# Writes OUTPUT with the version and a hash of the compiler's sources; the file
# is rewritten only when the hash changes, so unchanged builds stay cached.
file(GLOB_RECURSE sources
  ${SOURCE_DIR}/dialect/*.td ${SOURCE_DIR}/dialect/*.h ${SOURCE_DIR}/dialect/*.cpp
  ${SOURCE_DIR}/compiler/*.td ${SOURCE_DIR}/compiler/*.h ${SOURCE_DIR}/compiler/*.cpp)
list(SORT sources)
set(all "")
foreach(f ${sources})
  file(SHA256 ${f} h)
  string(APPEND all "${h}")
endforeach()
string(SHA256 digest "${all}")
string(SUBSTRING "${digest}" 0 16 digest)
set(content "#define ATTN_COMPILER_VERSION \"${VERSION}+${digest}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE ${OUTPUT} "${content}")
endif()
