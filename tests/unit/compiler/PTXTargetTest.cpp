//===- PTXTargetTest.cpp - The PTX ISA version follows the chip -----------===//
//
// resolvePTXFeatures and serializeToPTX on a small gpu.module, through the
// NVPTX backend (no attn passes, so it runs while the rest of the compiler
// does not build). tests/compiler/Target/ptx-isa.mlir checks the same through
// attn-opt.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/PTX.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

constexpr const char *kModule = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @add_one(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %one = llvm.mlir.constant(1.0 : f32) : f32
      %y = llvm.fadd %x, %one : f32
      llvm.store %y, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
)mlir";

class PTXTargetTest : public ::testing::Test {
protected:
  PTXTargetTest() {
    DialectRegistry registry;
    registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
    });
  }

  /// The features for `chip`, or "error: <diagnostics>".
  std::string resolve(StringRef chip, StringRef features) {
    diagnostics.clear();
    FailureOr<std::string> resolved =
        attn::resolvePTXFeatures(chip, features, [&] {
          return emitError(UnknownLoc::get(context.get()));
        });
    return succeeded(resolved) ? *resolved : "error: " + diagnostics;
  }

  /// The PTX of kModule for `chip`, or "error: <diagnostics>".
  std::string ptxFor(StringRef chip, StringRef features = "auto") {
    diagnostics.clear();
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kModule, context.get());
    if (!module)
      return "error: parse: " + diagnostics;
    auto gpuModule = *module->getOps<gpu::GPUModuleOp>().begin();
    attn::PTXTarget target;
    target.chip = chip.str();
    target.features = features.str();
    FailureOr<std::string> ptx = attn::serializeToPTX(gpuModule, target);
    return succeeded(ptx) ? *ptx : "error: " + diagnostics;
  }

  std::unique_ptr<MLIRContext> context;
  std::string diagnostics;
};

TEST_F(PTXTargetTest, AutoIsTheChipsLowestVersionButAtLeast80) {
  EXPECT_EQ(resolve("sm_80", "auto"), "+ptx80");
  EXPECT_EQ(resolve("sm_86", "auto"), "+ptx80");
  EXPECT_EQ(resolve("sm_89", "auto"), "+ptx80");
  EXPECT_EQ(resolve("sm_90", "auto"), "+ptx80");
  EXPECT_EQ(resolve("sm_90a", "auto"), "+ptx80");
  EXPECT_EQ(resolve("sm_100a", "auto"), "+ptx86");
  EXPECT_EQ(resolve("sm_101a", "auto"), "+ptx86");
  EXPECT_EQ(resolve("sm_103a", "auto"), "+ptx88");
  EXPECT_EQ(resolve("sm_120a", "auto"), "+ptx87");
  EXPECT_EQ(resolve("sm_121a", "auto"), "+ptx88");
}

TEST_F(PTXTargetTest, ExplicitFeaturesAreCheckedAgainstTheChip) {
  EXPECT_EQ(resolve("sm_100a", "+ptx87"), "+ptx87");
  EXPECT_EQ(resolve("sm_80", "+ptx70"), "+ptx70");
  EXPECT_EQ(resolve("sm_100a", "+ptx80"),
            "error: features '+ptx80' ask for PTX ISA 8.0, but sm_100a needs "
            "PTX ISA 8.6 or newer (features=auto chooses it)\n");
  EXPECT_EQ(resolve("sm_90a", "+ptx78").rfind("error: features '+ptx78'", 0),
            0u);
}

TEST_F(PTXTargetTest, UnknownChipsAreDiagnostics) {
  for (StringRef features : {"auto", "+ptx80"})
    EXPECT_EQ(resolve("sm_1", features),
              "error: unknown NVIDIA chip 'sm_1' (expected an NVPTX processor "
              "such as sm_80 or sm_90a)\n");
  // Known to LLVM, but older than attn's kernels: refused whatever the
  // features (with +ptx80, LLVM aborted selecting cp.async; issue 14).
  for (StringRef chip : {"sm_70", "sm_75"})
    for (StringRef features : {"auto", "+ptx63", "+ptx80"})
      EXPECT_EQ(resolve(chip, features),
                "error: chip '" + chip.str() +
                    "' is not supported: attn kernels need sm_80 or newer\n")
          << chip.str() << " " << features.str();
}

TEST_F(PTXTargetTest, PtxVersionLineFollowsTheChip) {
  struct {
    const char *chip, *version;
  } cases[] = {{"sm_80", ".version 8.0"},
               {"sm_90a", ".version 8.0"},
               {"sm_100a", ".version 8.6"},
               {"sm_120a", ".version 8.7"}};
  for (auto [chip, version] : cases) {
    std::string ptx = ptxFor(chip);
    EXPECT_NE(ptx.find(version), std::string::npos) << chip << ":\n" << ptx;
    EXPECT_NE(ptx.find(std::string(".target ") + chip), std::string::npos)
        << chip << ":\n" << ptx;
  }
  // What ended the process before: sm_100a with PTX 8.0.
  EXPECT_EQ(ptxFor("sm_100a", "+ptx80").rfind("error: features '+ptx80'", 0),
            0u);
}

} // namespace
