// RUN: %vkml-opt %s --split-input-file --pass vkml-bound-scalar-dispatches | filecheck %s

// 26 chained scalars, all returned: after the 24th the function is cut. Every scalar computed
// before the cut and used after it (the 24 returned, the 24th also read by the 25th) passes
// through a fusion stop of its own, so IREE forms a dispatch of at most 24 results on each
// side (its limit is 32 bindings), and the ops after the cut read the stops.
// CHECK-LABEL: func.func @twenty_six
func.func @twenty_six(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %v1 = stablehlo.add %a, %a : tensor<f32>
  %v2 = stablehlo.add %v1, %a : tensor<f32>
  %v3 = stablehlo.add %v2, %a : tensor<f32>
  %v4 = stablehlo.add %v3, %a : tensor<f32>
  %v5 = stablehlo.add %v4, %a : tensor<f32>
  %v6 = stablehlo.add %v5, %a : tensor<f32>
  %v7 = stablehlo.add %v6, %a : tensor<f32>
  %v8 = stablehlo.add %v7, %a : tensor<f32>
  %v9 = stablehlo.add %v8, %a : tensor<f32>
  %v10 = stablehlo.add %v9, %a : tensor<f32>
  %v11 = stablehlo.add %v10, %a : tensor<f32>
  %v12 = stablehlo.add %v11, %a : tensor<f32>
  %v13 = stablehlo.add %v12, %a : tensor<f32>
  %v14 = stablehlo.add %v13, %a : tensor<f32>
  %v15 = stablehlo.add %v14, %a : tensor<f32>
  %v16 = stablehlo.add %v15, %a : tensor<f32>
  %v17 = stablehlo.add %v16, %a : tensor<f32>
  %v18 = stablehlo.add %v17, %a : tensor<f32>
  %v19 = stablehlo.add %v18, %a : tensor<f32>
  %v20 = stablehlo.add %v19, %a : tensor<f32>
  %v21 = stablehlo.add %v20, %a : tensor<f32>
  %v22 = stablehlo.add %v21, %a : tensor<f32>
  %v23 = stablehlo.add %v22, %a : tensor<f32>
  %v24 = stablehlo.add %v23, %a : tensor<f32>
  %v25 = stablehlo.add %v24, %a : tensor<f32>
  %v26 = stablehlo.add %v25, %a : tensor<f32>
  return %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
// CHECK-COUNT-23: stablehlo.add
// CHECK-NEXT: %[[V24:.*]] = stablehlo.add
// CHECK-COUNT-23: iree_tensor_ext.compute_barrier.end
// CHECK-NEXT: %[[S24:.*]] = iree_tensor_ext.compute_barrier.end %[[V24]]
// CHECK-NEXT: %[[V25:.*]] = stablehlo.add %[[S24]], %arg0
// CHECK-NEXT: stablehlo.add %[[V25]], %arg0
// CHECK-NEXT: return

// -----

// 24 returned scalars fit one dispatch: the function is left alone.
// CHECK-LABEL: func.func @twenty_four
func.func @twenty_four(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %v1 = stablehlo.add %a, %a : tensor<f32>
  %v2 = stablehlo.add %v1, %a : tensor<f32>
  %v3 = stablehlo.add %v2, %a : tensor<f32>
  %v4 = stablehlo.add %v3, %a : tensor<f32>
  %v5 = stablehlo.add %v4, %a : tensor<f32>
  %v6 = stablehlo.add %v5, %a : tensor<f32>
  %v7 = stablehlo.add %v6, %a : tensor<f32>
  %v8 = stablehlo.add %v7, %a : tensor<f32>
  %v9 = stablehlo.add %v8, %a : tensor<f32>
  %v10 = stablehlo.add %v9, %a : tensor<f32>
  %v11 = stablehlo.add %v10, %a : tensor<f32>
  %v12 = stablehlo.add %v11, %a : tensor<f32>
  %v13 = stablehlo.add %v12, %a : tensor<f32>
  %v14 = stablehlo.add %v13, %a : tensor<f32>
  %v15 = stablehlo.add %v14, %a : tensor<f32>
  %v16 = stablehlo.add %v15, %a : tensor<f32>
  %v17 = stablehlo.add %v16, %a : tensor<f32>
  %v18 = stablehlo.add %v17, %a : tensor<f32>
  %v19 = stablehlo.add %v18, %a : tensor<f32>
  %v20 = stablehlo.add %v19, %a : tensor<f32>
  %v21 = stablehlo.add %v20, %a : tensor<f32>
  %v22 = stablehlo.add %v21, %a : tensor<f32>
  %v23 = stablehlo.add %v22, %a : tensor<f32>
  %v24 = stablehlo.add %v23, %a : tensor<f32>
  return %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
// CHECK-NOT: compute_barrier
// CHECK: return
