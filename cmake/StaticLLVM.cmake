# Debian's LLVM 22 sets LLVM_LINK_LLVM_DYLIB, so every exported static MLIR
# target lists the shared `LLVM` target (libLLVM.so) in its link interface.
# attn-jit links MLIR and LLVM statically into one shared library, so that the
# bundle for the GPU machine needs no LLVM installed there. Replace `LLVM` in the
# imported targets' link interfaces with the static LLVM component archives.
set(LLVM_LINK_LLVM_DYLIB OFF)

set(ATTN_LLVM_COMPONENTS
  Core Support Demangle TargetParser BinaryFormat Remarks BitstreamReader
  Analysis TransformUtils ScalarOpts InstCombine AggressiveInstCombine ipo
  Vectorize ObjCARCOpts Coroutines Passes IRReader IRPrinter AsmParser
  BitReader BitWriter Linker MC MCParser MCDisassembler Object Target CodeGen
  CodeGenTypes AsmPrinter SelectionDAG GlobalISel FrontendOpenMP
  FrontendOffloading Instrumentation ProfileData
  NVPTXCodeGen NVPTXDesc NVPTXInfo
  X86CodeGen X86AsmParser X86Desc X86Info
  OrcJIT OrcShared OrcTargetProcess OrcDebugging JITLink ExecutionEngine
  RuntimeDyld PerfJITEvents)
llvm_map_components_to_libnames(ATTN_LLVM_STATIC_LIBS ${ATTN_LLVM_COMPONENTS})

function(attn_replace_llvm_dylib)
  foreach(lib ${MLIR_EXPORTED_TARGETS})
    if(NOT TARGET ${lib})
      continue()
    endif()
    get_target_property(imported ${lib} IMPORTED)
    if(NOT imported)
      continue()
    endif()
    get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
    if(deps AND "LLVM" IN_LIST deps)
      list(REMOVE_ITEM deps "LLVM")
      list(APPEND deps ${ATTN_LLVM_STATIC_LIBS})
    endif()
    # MLIRExecutionEngine lists libMLIR.so itself: linking it beside the
    # static archives would register every option twice.
    if(deps AND "MLIR" IN_LIST deps)
      list(REMOVE_ITEM deps "MLIR")
      list(APPEND deps MLIRTargetLLVMIRExport MLIRLLVMToLLVMIRTranslation
           MLIRBuiltinToLLVMIRTranslation)
    endif()
    if(deps)
      set_target_properties(${lib} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
    endif()
  endforeach()
endfunction()
attn_replace_llvm_dylib()
