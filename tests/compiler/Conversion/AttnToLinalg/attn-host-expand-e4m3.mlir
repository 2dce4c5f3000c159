// RUN: attn-opt %s --attn-host-expand-e4m3 --split-input-file | FileCheck %s

// FP8 (e4m3) extensions and truncations on the host become operations on
// the i8 code, scalar or vector; other conversions stay as they are. The
// values are checked by the FP8 host test (tests/unit/compiler/
// Fp8HostTest.cpp), against codes made by brute force.

// CHECK-LABEL: func.func @extend
// CHECK-SAME: (%[[X:.*]]: f8E4M3FN)
// CHECK: %[[CODE:.*]] = arith.bitcast %[[X]] : f8E4M3FN to i8
// CHECK: arith.extui %[[CODE]] : i8 to i32
// Normal codes: (exponent, mantissa) << 20, rebiased by (127 - 7) << 23.
// CHECK: arith.shli %{{.*}}, %c20_i32
// CHECK: arith.addi %{{.*}}, %c1006632960_i32
// Subnormal codes: the mantissa times 2^-9.
// CHECK: arith.uitofp
// CHECK: arith.mulf %{{.*}}, %cst : f32
// CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: arith.extf
// CHECK: return %[[F]]
func.func @extend(%x: f8E4M3FN) -> f32 {
  %y = arith.extf %x : f8E4M3FN to f32
  return %y : f32
}

// -----

// CHECK-LABEL: func.func @truncate_vector
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK: arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// Round to nearest even: add 2^19 - 1 plus the kept lowest bit, drop 20.
// CHECK: arith.shrui %{{.*}}, %{{.*}} : vector<16xi32>
// Saturate at 448 (code 0x7e = 126).
// CHECK: arith.minsi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: %[[BYTE:.*]] = arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
// CHECK: %[[Y:.*]] = arith.bitcast %[[BYTE]] : vector<16xi8> to vector<16xf8E4M3FN>
// CHECK-NOT: arith.truncf
// CHECK: return %[[Y]]
func.func @truncate_vector(%x: vector<16xf32>) -> vector<16xf8E4M3FN> {
  %y = arith.truncf %x : vector<16xf32> to vector<16xf8E4M3FN>
  return %y : vector<16xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @others_stay
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @others_stay(%x: bf16) -> f16 {
  %y = arith.extf %x : bf16 to f32
  %z = arith.truncf %y : f32 to f16
  return %z : f16
}
