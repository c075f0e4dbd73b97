// RUN: %vkml-opt %s --split-input-file --pass vkml-isolate-widened-operands | filecheck %s

// A float16 operand widened to float32 before the matmul reaches it through a fusion stop,
// so IREE computes the widening in a dispatch of its own; the operand that is float32 all the
// way is left as it is.
// CHECK-LABEL: func.func @widened_lhs
func.func @widened_lhs(%x: tensor<4x8xf16>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %xw = stablehlo.convert %x : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %y = stablehlo.dot_general %xw, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
// CHECK: %[[XW:.*]] = stablehlo.convert %arg0
// CHECK-NEXT: %[[S:.*]] = iree_tensor_ext.compute_barrier.end %[[XW]]
// CHECK-NEXT: stablehlo.dot_general %[[S]], %arg1,

// -----

// What follows the widening (a negate, here) is fused with it, so the walk back finds the
// narrow argument through it; a widened scalar (a value IREE folds into its readers) stays.
// CHECK-LABEL: func.func @through_elementwise_ops
func.func @through_elementwise_ops(%x: tensor<4x8xbf16>, %s: tensor<bf16>, %w: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %xw = stablehlo.convert %x : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %n = stablehlo.negate %xw : tensor<4x8xf32>
  %y = stablehlo.dot_general %n, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %sw = stablehlo.convert %s : (tensor<bf16>) -> tensor<f32>
  %sb = stablehlo.broadcast_in_dim %sw, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %z = stablehlo.dot_general %sb, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %y, %z : tensor<4x3xf32>, tensor<4x3xf32>
}
// CHECK: %[[N:.*]] = stablehlo.negate
// CHECK-NEXT: %[[S:.*]] = iree_tensor_ext.compute_barrier.end %[[N]]
// CHECK-NEXT: stablehlo.dot_general %[[S]], %arg2,
// CHECK: %[[SB:.*]] = stablehlo.broadcast_in_dim
// CHECK-NEXT: stablehlo.dot_general %[[SB]], %arg2,
