// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64" 2>&1 | FileCheck %s

// Each check of a user's mods (UserMods.h) is a diagnostic located in the
// text ("user-mods" line:column), never a crash.

// CHECK: user-mods:1:1: error: user mods hold func.func @score_mod and @mask_mod only
module attributes {attn.user_mods = "func.func @other() {\n  return\n}"} {
}

// -----

// CHECK: user-mods:1:1: error: @mask_mod must be (index, index, index, index, captures...) -> i1, got '(index) -> i1'
module attributes {attn.user_mods = "func.func @mask_mod(%b: index) -> i1 {\n  %t = arith.constant true\n  return %t : i1\n}"} {
}

// -----

// CHECK: user-mods:1:1: error: @score_mod capture #0 has type 'memref<4xf32>': captures are f32, i32, i64 or index, or memrefs of f32 or i32 of rank 1 to 4 with dynamic sizes and strides
module attributes {attn.user_mods = "func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index, %m: memref<4xf32>) -> f32 {\n  return %s : f32\n}"} {
}

// -----

// CHECK: user-mods:{{[0-9]+}}:1: error: @mask_mod and @score_mod must take the same captures
module attributes {attn.user_mods = "func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index, %c: f32) -> f32 {\n  return %s : f32\n}\nfunc.func @mask_mod(%b: index, %h: index, %q: index, %kv: index) -> i1 {\n  %t = arith.constant true\n  return %t : i1\n}"} {
}

// -----

// CHECK: user-mods:1:1: error: user mods define neither @score_mod nor @mask_mod
module attributes {attn.user_mods = ""} {
}

// -----

// CHECK: user-mods:2:8: error: 'math.tanh' op operand #0 must be floating-point-like, but got 'index'
module attributes {attn.user_mods = "func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index) -> f32 {\n  %x = math.tanh %q : index\n  return %s : f32\n}"} {
}

// -----

// The region verifier runs on the user's body: a store is not a mod's.
// CHECK: user-mods:2:3: error: 'memref.store' op is not allowed in 'score_mod': only pure ops without regions and loads of captures
module attributes {attn.user_mods = "func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index, %m: memref<?xf32, strided<[?], offset: ?>>) -> f32 {\n  memref.store %s, %m[%q] : memref<?xf32, strided<[?], offset: ?>>\n  return %s : f32\n}"} {
}
