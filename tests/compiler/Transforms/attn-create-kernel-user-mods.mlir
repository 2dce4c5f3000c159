// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 mask=causal variants=window" | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 variants=softcap" 2>&1 | FileCheck %s --check-prefix=SCORE

// A user's mods (attn.user_mods, UserMods.h): their captures become kernel
// arguments after the named variants' (window: left, right), the score_mod
// body the sdpa's score_mod, and the mask_mod is and-ed with the window's.
// CHECK-LABEL: func.func @attn_fwd(
// CHECK-SAME: %{{.*}}: f32, %[[LEFT:.*]]: i64, %[[RIGHT:.*]]: i64, %[[TABLE:.*]]: memref<?xf32, strided<[?], offset: ?>>)
// CHECK: attn.sdpa {{.*}} captures(%[[LEFT]], %[[RIGHT]], %{{.*}}, %[[TABLE]] : i64, i64, index, memref<?xf32, strided<[?], offset: ?>>) score_mod {
// CHECK:   ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: index, %[[T:.*]]: memref<?xf32, strided<[?], offset: ?>>):
// CHECK:     %[[X:.*]] = memref.load %[[T]][%[[H]]]
// CHECK:     %[[Y:.*]] = arith.addf %[[S]], %[[X]] : f32
// CHECK:     attn.yield %[[Y]] : f32
// CHECK: } mask_mod {
// CHECK:     %[[WINDOW:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:     %[[MINE:.*]] = arith.cmpi sge, %{{.*}}, %c0{{.*}} : index
// CHECK-NEXT: %[[BOTH:.*]] = arith.andi %{{.*}}, %[[MINE]] : i1
// CHECK:     attn.yield %[[BOTH]] : i1
// A user's score_mod cannot join a named score variant: which comes first?
// SCORE: error: 'attn.sdpa' op a user's @score_mod cannot be combined with named score variants (alibi, bias, softcap)
module attributes {attn.user_mods = "func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index, %t: memref<?xf32, strided<[?], offset: ?>>) -> f32 {\n  %x = memref.load %t[%h] : memref<?xf32, strided<[?], offset: ?>>\n  %y = arith.addf %s, %x : f32\n  return %y : f32\n}\nfunc.func @mask_mod(%b: index, %h: index, %q: index, %kv: index, %t: memref<?xf32, strided<[?], offset: ?>>) -> i1 {\n  %c0 = arith.constant 0 : index\n  %in = arith.cmpi sge, %kv, %c0 : index\n  return %in : i1\n}"} {
}
