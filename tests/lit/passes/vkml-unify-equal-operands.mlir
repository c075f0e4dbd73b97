// RUN: %vkml-opt %s --split-input-file --pass vkml-unify-equal-operands | filecheck %s

// and(fusion stop(x), x): the op reads x twice, once across the fusion stop; it reads the stopped value
// twice instead (IREE folds that away; the dispatch it formed otherwise folded to a copy,
// which its SPIR-V backend failed on).
// CHECK-LABEL: func.func @stopped_beside_itself
func.func @stopped_beside_itself(%x: tensor<20xi32>) -> tensor<20xi32> {
  %f = iree_tensor_ext.compute_barrier.end %x : tensor<20xi32> -> tensor<20xi32>
  %r = stablehlo.and %f, %x : tensor<20xi32>
  return %r : tensor<20xi32>
}
// CHECK: %[[F:.*]] = iree_tensor_ext.compute_barrier.end %arg0
// CHECK-NEXT: stablehlo.and %[[F]], %[[F]]

// -----

// The fuzz campaign's case: a stopped bit cast beside a second bit cast of the same argument
// (one value once duplicates are merged), and the fusion stop of an idempotent op of it.
// CHECK-LABEL: func.func @duplicates_and_idempotent_ops
func.func @duplicates_and_idempotent_ops(%a: tensor<4xf64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %b0 = stablehlo.bitcast_convert %a : (tensor<4xf64>) -> tensor<4xi64>
  %f = iree_tensor_ext.compute_barrier.end %b0 : tensor<4xi64> -> tensor<4xi64>
  %b1 = stablehlo.bitcast_convert %a : (tensor<4xf64>) -> tensor<4xi64>
  %r = stablehlo.and %f, %b1 : tensor<4xi64>
  %o = stablehlo.or %b0, %b0 : tensor<4xi64>
  %g = iree_tensor_ext.compute_barrier.end %o : tensor<4xi64> -> tensor<4xi64>
  %s = stablehlo.xor %g, %b1 : tensor<4xi64>
  return %r, %s : tensor<4xi64>, tensor<4xi64>
}
// CHECK: %[[F:.*]] = iree_tensor_ext.compute_barrier.end
// CHECK: stablehlo.and %[[F]], %[[F]]
// CHECK: %[[G:.*]] = iree_tensor_ext.compute_barrier.end
// CHECK-NEXT: stablehlo.xor %[[G]], %[[G]]

// -----

// An unsigned value crosses a fusion stop as its signless bits; the bit casts out and back are
// the value itself. Different values, and a module without fusion stops, are left alone.
// CHECK-LABEL: func.func @unsigned_and_distinct
func.func @unsigned_and_distinct(%u: tensor<3xui32>, %v: tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>) {
  %bits = stablehlo.bitcast_convert %u : (tensor<3xui32>) -> tensor<3xi32>
  %f = iree_tensor_ext.compute_barrier.end %bits : tensor<3xi32> -> tensor<3xi32>
  %back = stablehlo.bitcast_convert %f : (tensor<3xi32>) -> tensor<3xui32>
  %r = stablehlo.maximum %back, %u : tensor<3xui32>
  %d = stablehlo.maximum %back, %v : tensor<3xui32>
  return %r, %d : tensor<3xui32>, tensor<3xui32>
}
// CHECK: %[[B:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<3xi32>) -> tensor<3xui32>
// CHECK-NEXT: stablehlo.maximum %[[B]], %[[B]]
// CHECK-NEXT: stablehlo.maximum %[[B]], %arg1
