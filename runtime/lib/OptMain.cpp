//===- OptMain.cpp - attn-opt's driver, exported by libattn-jit -----------===//

#include "attn/Tools/OptMain.h"
#include "attn/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int attnOptMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  mlir::attn::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn-jit optimizer driver\n", registry));
}
