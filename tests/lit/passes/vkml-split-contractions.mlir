// RUN: %vkml-opt %s --split-input-file --pass vkml-split-contractions | filecheck %s

// K = 40,000 = 2 * 16,384 + 7,232: two chunks become a batch axis of one product, summed,
// then the remainder's product is added last.
// CHECK-LABEL: func.func @long_k
func.func @long_k(%a: tensor<2x40000xf32>, %b: tensor<40000x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<2x40000xf32>, tensor<40000x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// CHECK: %[[XS:.*]] = stablehlo.slice %arg0 [0:2, 0:32768]
// CHECK: %[[YS:.*]] = stablehlo.slice %arg1 [0:32768, 0:3]
// CHECK: %[[XR:.*]] = stablehlo.reshape %[[XS]] : (tensor<2x32768xf32>) -> tensor<2x2x16384xf32>
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[XR]], dims = [1, 0, 2] : (tensor<2x2x16384xf32>) -> tensor<2x2x16384xf32>
// CHECK: %[[YR:.*]] = stablehlo.reshape %[[YS]] : (tensor<32768x3xf32>) -> tensor<2x16384x3xf32>
// CHECK: %[[P:.*]] = stablehlo.dot_general %[[XT]], %[[YR]], batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, HIGHEST] : (tensor<2x2x16384xf32>, tensor<2x16384x3xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[P0:.*]] = stablehlo.slice %[[P]] [0:1, 0:2, 0:3]
// CHECK: %[[P1:.*]] = stablehlo.slice %[[P]] [1:2, 0:2, 0:3]
// CHECK: %[[S:.*]] = stablehlo.add %[[P0]], %[[P1]]
// CHECK: %[[SUM:.*]] = stablehlo.reshape %[[S]] : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[AR:.*]] = stablehlo.slice %arg0 [0:2, 32768:40000]
// CHECK: %[[BR:.*]] = stablehlo.slice %arg1 [32768:40000, 0:3]
// CHECK: %[[REM:.*]] = stablehlo.dot_general %[[AR]], %[[BR]], contracting_dims = [1] x [0]{{.*}} -> tensor<2x3xf32>
// CHECK: %[[ALL:.*]] = stablehlo.add %[[SUM]], %[[REM]] : tensor<2x3xf32>
// CHECK: return %[[ALL]]

// -----

// A batched product keeps its batch axes in front of the chunk axis; K a multiple of the
// chunk leaves no remainder.
// CHECK-LABEL: func.func @batched_exact
func.func @batched_exact(%a: tensor<5x2x32768xi32>, %b: tensor<5x32768x4xi32>) -> tensor<5x2x4xi32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, HIGHEST] : (tensor<5x2x32768xi32>, tensor<5x32768x4xi32>) -> tensor<5x2x4xi32>
  return %0 : tensor<5x2x4xi32>
}
// CHECK: stablehlo.reshape %{{.*}} : (tensor<5x2x32768xi32>) -> tensor<5x2x2x16384xi32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [0, 2, 1, 3]
// CHECK: stablehlo.dot_general {{.*}}batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2]{{.*}} -> tensor<5x2x2x4xi32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0, 2, 3] : (tensor<5x2x2x4xi32>) -> tensor<2x5x2x4xi32>
// CHECK: stablehlo.add {{.*}} : tensor<1x5x2x4xi32>
// CHECK-NOT: stablehlo.dot_general
// CHECK: return

// -----

// At most one chunk long: left as it is.
// CHECK-LABEL: func.func @short_k
func.func @short_k(%a: tensor<2x16384xf32>, %b: tensor<16384x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<2x16384xf32>, tensor<16384x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// CHECK-NOT: stablehlo.slice
// CHECK: stablehlo.dot_general %arg0, %arg1
