# `ninja bundle`: a self-contained attn-jit for a machine with an NVIDIA driver
# and no LLVM/MLIR (the GPU machine, or a user's deployment): the executables
# and libattn-jit.so (MLIR and LLVM inside), stripped, and the Python package
# in python/ (PYTHONPATH=BUNDLE/python; it loads ../lib/libattn-jit.so), in
# one .tar.xz.
set(ATTN_BUNDLE_DIR ${CMAKE_BINARY_DIR}/bundle/attn-jit)
set(ATTN_BUNDLE_TARBALL ${CMAKE_BINARY_DIR}/bundle/attn-jit.tar.xz)
set(ATTN_BUNDLE_TOOLS attn-opt attn-run attn-bench attn-variants attn-hotpath)
if(TARGET runtime_gpu_test)
  list(APPEND ATTN_BUNDLE_TOOLS runtime_gpu_test)
endif()
file(GLOB ATTN_PYTHON_PACKAGE CONFIGURE_DEPENDS ${ATTN_SOURCE_DIR}/python/attn_jit/*.py)
set(bins "")
foreach(t ${ATTN_BUNDLE_TOOLS})
  list(APPEND bins $<TARGET_FILE:${t}>)
endforeach()
add_custom_command(
  OUTPUT ${ATTN_BUNDLE_TARBALL}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${ATTN_BUNDLE_DIR}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${ATTN_BUNDLE_DIR}/bin ${ATTN_BUNDLE_DIR}/lib
          ${ATTN_BUNDLE_DIR}/python/attn_jit
  COMMAND ${CMAKE_COMMAND} -E copy ${bins} ${ATTN_BUNDLE_DIR}/bin/
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:attn-jit> ${ATTN_BUNDLE_DIR}/lib/
  COMMAND ${CMAKE_COMMAND} -E copy ${ATTN_PYTHON_PACKAGE} ${ATTN_BUNDLE_DIR}/python/attn_jit/
  COMMAND strip --strip-unneeded ${ATTN_BUNDLE_DIR}/lib/libattn-jit.so
  COMMAND sh -c "strip ${ATTN_BUNDLE_DIR}/bin/*"
  COMMAND tar -C ${CMAKE_BINARY_DIR}/bundle -cJf ${ATTN_BUNDLE_TARBALL} attn-jit
  COMMAND ${CMAKE_COMMAND} -E echo "bundle: ${ATTN_BUNDLE_TARBALL}"
  DEPENDS attn-jit ${ATTN_BUNDLE_TOOLS} ${ATTN_PYTHON_PACKAGE}
  COMMENT "Packing the bundle for machines without LLVM"
  VERBATIM)
add_custom_target(bundle DEPENDS ${ATTN_BUNDLE_TARBALL})
