// RUN: %vkml-opt %s --split-input-file --pass vkml-bound-bool-fusion | filecheck %s

// v[k+1] = v[k] & ~v[k]: each boolean is read twice, so the cone IREE would copy into a
// reader doubles each step (1 + c + (c + 1) producers). v5's is 62 > 32: its two readers read
// it through a fusion stop (IREE's compute barrier), where v6's cone starts again.
// CHECK-LABEL: func.func @doubling_chain
func.func @doubling_chain(%v0: tensor<4xi1>) -> tensor<4xi1> {
  %n1 = stablehlo.not %v0 : tensor<4xi1>
  %v1 = stablehlo.and %v0, %n1 : tensor<4xi1>
  %n2 = stablehlo.not %v1 : tensor<4xi1>
  %v2 = stablehlo.and %v1, %n2 : tensor<4xi1>
  %n3 = stablehlo.not %v2 : tensor<4xi1>
  %v3 = stablehlo.and %v2, %n3 : tensor<4xi1>
  %n4 = stablehlo.not %v3 : tensor<4xi1>
  %v4 = stablehlo.and %v3, %n4 : tensor<4xi1>
  %n5 = stablehlo.not %v4 : tensor<4xi1>
  %v5 = stablehlo.and %v4, %n5 : tensor<4xi1>
  %n6 = stablehlo.not %v5 : tensor<4xi1>
  %v6 = stablehlo.and %v5, %n6 : tensor<4xi1>
  return %v6 : tensor<4xi1>
}
// CHECK: %[[N1:.*]] = stablehlo.not %arg0
// CHECK-NEXT: %[[V1:.*]] = stablehlo.and %arg0, %[[N1]]
// CHECK-NEXT: %[[N2:.*]] = stablehlo.not %[[V1]]
// CHECK-NEXT: %[[V2:.*]] = stablehlo.and %[[V1]], %[[N2]]
// CHECK-NEXT: %[[N3:.*]] = stablehlo.not %[[V2]]
// CHECK-NEXT: %[[V3:.*]] = stablehlo.and %[[V2]], %[[N3]]
// CHECK-NEXT: %[[N4:.*]] = stablehlo.not %[[V3]]
// CHECK-NEXT: %[[V4:.*]] = stablehlo.and %[[V3]], %[[N4]]
// CHECK-NEXT: %[[N5:.*]] = stablehlo.not %[[V4]]
// CHECK-NEXT: %[[V5:.*]] = stablehlo.and %[[V4]], %[[N5]]
// CHECK-NEXT: %[[KEPT:.*]] = iree_tensor_ext.compute_barrier.end %[[V5]] : tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT: %[[N6:.*]] = stablehlo.not %[[KEPT]]
// CHECK-NEXT: %[[V6:.*]] = stablehlo.and %[[KEPT]], %[[N6]]
// CHECK-NEXT: return %[[V6]]

// -----

// A large cone read once is copied once: nothing to store. (The same chain, but each value
// read by one op only: v[k+1] = ~v[k] & w.)
// CHECK-LABEL: func.func @single_readers
func.func @single_readers(%v0: tensor<4xi1>, %w: tensor<4xi1>) -> tensor<4xi1> {
  %n1 = stablehlo.not %v0 : tensor<4xi1>
  %v1 = stablehlo.and %n1, %w : tensor<4xi1>
  %n2 = stablehlo.not %v1 : tensor<4xi1>
  %v2 = stablehlo.and %n2, %w : tensor<4xi1>
  %n3 = stablehlo.not %v2 : tensor<4xi1>
  %v3 = stablehlo.and %n3, %w : tensor<4xi1>
  return %v3 : tensor<4xi1>
}
// CHECK-NOT: compute_barrier
// CHECK: return

// -----

// A boolean read by a float select counts its cone too; a float value ends a cone (IREE
// does not force it into its readers). Here the cone stays small: nothing changes.
// CHECK-LABEL: func.func @mask_of_floats
func.func @mask_of_floats(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %m = stablehlo.compare GT, %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %a = stablehlo.select %m, %x, %y : tensor<4xi1>, tensor<4xf32>
  %b = stablehlo.select %m, %y, %x : tensor<4xi1>, tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
// CHECK-NOT: compute_barrier
// CHECK: return

// -----

// Neither the function's return nor a barrier already in the input is a reader that copies
// v5's cone of 62 (v5 is left alone), and the barrier starts a cone (w's is 2, not 64): the
// function is unchanged.
// CHECK-LABEL: func.func @returned_and_barriers
func.func @returned_and_barriers(%v0: tensor<i1>) -> (tensor<i1>, tensor<i1>) {
  %n1 = stablehlo.not %v0 : tensor<i1>
  %v1 = stablehlo.and %v0, %n1 : tensor<i1>
  %n2 = stablehlo.not %v1 : tensor<i1>
  %v2 = stablehlo.and %v1, %n2 : tensor<i1>
  %n3 = stablehlo.not %v2 : tensor<i1>
  %v3 = stablehlo.and %v2, %n3 : tensor<i1>
  %n4 = stablehlo.not %v3 : tensor<i1>
  %v4 = stablehlo.and %v3, %n4 : tensor<i1>
  %n5 = stablehlo.not %v4 : tensor<i1>
  %v5 = stablehlo.and %v4, %n5 : tensor<i1>
  %b = stablehlo.optimization_barrier %v5 : tensor<i1>
  %m = stablehlo.not %b : tensor<i1>
  %w = stablehlo.and %b, %m : tensor<i1>
  %x = stablehlo.not %w : tensor<i1>
  %y = stablehlo.and %w, %x : tensor<i1>
  return %v5, %y : tensor<i1>, tensor<i1>
}
// CHECK-COUNT-5: stablehlo.not
// CHECK-NEXT: %[[V5:.*]] = stablehlo.and
// CHECK-NEXT: %[[B:.*]] = stablehlo.optimization_barrier %[[V5]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.not %[[B]]
// CHECK-NEXT: %[[W:.*]] = stablehlo.and %[[B]], %[[M]]
// CHECK-NEXT: %[[X:.*]] = stablehlo.not %[[W]]
// CHECK-NEXT: %[[Y:.*]] = stablehlo.and %[[W]], %[[X]]
// CHECK-NEXT: return %[[V5]], %[[Y]] : tensor<i1>, tensor<i1>
