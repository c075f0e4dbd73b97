// RUN: %vkml-opt %s --split-input-file --pass vkml-isolate-transposes | filecheck %s

// A transpose of a computed value reads it across a fence, and its readers read it across
// another: no dispatch computes a value and reads it transposed.
// CHECK-LABEL: func.func @computed
func.func @computed(%x: tensor<3x7xf16>) -> (tensor<7x3xf32>, tensor<3x7xf32>) {
  %w = stablehlo.convert %x : (tensor<3x7xf16>) -> tensor<3x7xf32>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x7xf32>) -> tensor<7x3xf32>
  %n = stablehlo.negate %w : tensor<3x7xf32>
  %r = stablehlo.add %t, %t : tensor<7x3xf32>
  return %r, %n : tensor<7x3xf32>, tensor<3x7xf32>
}
// CHECK: %[[W:.*]] = stablehlo.convert %arg0
// CHECK-NEXT: %[[FW:.*]] = iree_tensor_ext.compute_barrier.end %[[W]]
// CHECK-NEXT: %[[T:.*]] = stablehlo.transpose %[[FW]]
// CHECK-NEXT: %[[FT:.*]] = iree_tensor_ext.compute_barrier.end %[[T]]
// CHECK: stablehlo.negate %[[W]]
// CHECK-NEXT: stablehlo.add %[[FT]], %[[FT]]

// -----

// A transpose of an argument reads the argument (already stored); an unsigned result
// crosses its fence as signless bits.
// CHECK-LABEL: func.func @argument_unsigned
func.func @argument_unsigned(%x: tensor<2x5xui32>) -> tensor<5x2xui32> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x5xui32>) -> tensor<5x2xui32>
  %r = stablehlo.add %t, %t : tensor<5x2xui32>
  return %r : tensor<5x2xui32>
}
// CHECK: %[[T:.*]] = stablehlo.transpose %arg0
// CHECK-NEXT: %[[B:.*]] = stablehlo.bitcast_convert %[[T]] : (tensor<5x2xui32>) -> tensor<5x2xi32>
// CHECK-NEXT: %[[F:.*]] = iree_tensor_ext.compute_barrier.end %[[B]]
// CHECK-NEXT: %[[U:.*]] = stablehlo.bitcast_convert %[[F]]
// CHECK-NEXT: stablehlo.add %[[U]], %[[U]]
