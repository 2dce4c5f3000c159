//===- attn-opt.cpp - mlir-opt for the attn dialect -----------------------===//

#include "attn/Tools/OptMain.h"

int main(int argc, char **argv) { return attnOptMain(argc, argv); }
