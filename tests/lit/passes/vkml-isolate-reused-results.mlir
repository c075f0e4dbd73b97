// RUN: %vkml-opt %s --split-input-file --pass vkml-isolate-reused-results | filecheck %s

// x1 = a - x0 and x2 = a - x1 are both results, and x2 reads x1: x2 reads it through a
// fusion stop of its own; the return still returns x1 itself. x2 is read by nothing else.
// CHECK-LABEL: func.func @folding_chain
func.func @folding_chain(%x0: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %a = stablehlo.add %x0, %c : tensor<i32>
  %x1 = stablehlo.subtract %a, %x0 : tensor<i32>
  %x2 = stablehlo.subtract %a, %x1 : tensor<i32>
  return %x1, %x2 : tensor<i32>, tensor<i32>
}
// CHECK: %[[A:.*]] = stablehlo.add %arg0
// CHECK-NEXT: %[[X1:.*]] = stablehlo.subtract %[[A]], %arg0
// CHECK-NEXT: %[[F:.*]] = iree_tensor_ext.compute_barrier.end %[[X1]] : tensor<i32> -> tensor<i32>
// CHECK-NEXT: %[[X2:.*]] = stablehlo.subtract %[[A]], %[[F]]
// CHECK-NEXT: return %[[X1]], %[[X2]]

// -----

// A float result read further is stopped too (IREE merged v8 + v12 with v12 + v8 and mapped
// a float64 result onto the wrong value); an integer that is not returned is left alone.
// CHECK-LABEL: func.func @floats_and_temporaries
func.func @floats_and_temporaries(%x: tensor<4xf32>, %n: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %y = stablehlo.add %x, %x : tensor<4xf32>
  %z = stablehlo.multiply %y, %y : tensor<4xf32>
  %m = stablehlo.add %n, %n : tensor<4xi32>
  %k = stablehlo.multiply %m, %m : tensor<4xi32>
  return %y, %z, %k : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}
// CHECK: %[[Y:.*]] = stablehlo.add %arg0, %arg0
// CHECK-NEXT: %[[F:.*]] = iree_tensor_ext.compute_barrier.end %[[Y]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[Z:.*]] = stablehlo.multiply %[[F]], %[[F]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.add %arg1, %arg1
// CHECK-NEXT: %[[K:.*]] = stablehlo.multiply %[[M]], %[[M]]
// CHECK-NEXT: return %[[Y]], %[[Z]], %[[K]]

// -----

// An unsigned result crosses the fusion stop as its signless bits; a bool as itself.
// CHECK-LABEL: func.func @unsigned_and_bool
func.func @unsigned_and_bool(%u: tensor<ui32>, %b: tensor<i1>) -> (tensor<ui32>, tensor<ui32>, tensor<i1>, tensor<i1>) {
  %u1 = stablehlo.xor %u, %u : tensor<ui32>
  %u2 = stablehlo.xor %u1, %u : tensor<ui32>
  %b1 = stablehlo.not %b : tensor<i1>
  %b2 = stablehlo.and %b1, %b : tensor<i1>
  return %u1, %u2, %b1, %b2 : tensor<ui32>, tensor<ui32>, tensor<i1>, tensor<i1>
}
// CHECK: %[[U1:.*]] = stablehlo.xor %arg0, %arg0
// CHECK-NEXT: %[[BITS:.*]] = stablehlo.bitcast_convert %[[U1]] : (tensor<ui32>) -> tensor<i32>
// CHECK-NEXT: %[[F:.*]] = iree_tensor_ext.compute_barrier.end %[[BITS]] : tensor<i32> -> tensor<i32>
// CHECK-NEXT: %[[BACK:.*]] = stablehlo.bitcast_convert %[[F]] : (tensor<i32>) -> tensor<ui32>
// CHECK-NEXT: %[[U2:.*]] = stablehlo.xor %[[BACK]], %arg0
// CHECK: %[[B1:.*]] = stablehlo.not %arg1
// CHECK-NEXT: %[[G:.*]] = iree_tensor_ext.compute_barrier.end %[[B1]] : tensor<i1> -> tensor<i1>
// CHECK-NEXT: %[[B2:.*]] = stablehlo.and %[[G]], %arg1
// CHECK-NEXT: return %[[U1]], %[[U2]], %[[B1]], %[[B2]]

// -----

// A constant result is read as it is: no chain computes it (and a stopped constant read in a
// device loop failed to compile for Vulkan).
// CHECK-LABEL: func.func @constant_result
func.func @constant_result(%b: tensor<i1>) -> (tensor<i1>, tensor<i1>) {
  %f = stablehlo.constant dense<false> : tensor<i1>
  %r = stablehlo.compare EQ, %b, %f, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
  return %r, %f : tensor<i1>, tensor<i1>
}
// CHECK-NOT: compute_barrier
// CHECK: return
