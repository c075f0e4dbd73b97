// RUN: %vkml-opt %s --split-input-file --pass vkml-pairwise-integer-reductions | filecheck %s

// An integer sum becomes the tree of adds (padding with 0); a float sum is left to
// vkml-pairwise-reductions.
// CHECK-LABEL: func.func @integer_sum
func.func @integer_sum(%a: tensor<5xi32>, %b: tensor<5xf32>) -> (tensor<i32>, tensor<f32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<5xi32>, tensor<i32>) -> tensor<i32>
  %f = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%b init: %f) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  return %r, %s : tensor<i32>, tensor<f32>
}
// CHECK: stablehlo.pad %arg0, %{{.*}}, low = [0], high = [3]{{.*}} -> tensor<8xi32>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<1xi32>
// CHECK-NOT: stablehlo.reduce(%arg0
// CHECK: stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.add

// -----

// An integer minimum (argmax's first index) pads with the type's largest value, halves
// pairwise and takes the init last; a float maximum is left alone.
// CHECK-LABEL: func.func @integer_minimum
func.func @integer_minimum(%b: tensor<5xf32>, %c: tensor<3xi64>) -> (tensor<f32>, tensor<i64>) {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %s = stablehlo.reduce(%b init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %n = stablehlo.constant dense<3> : tensor<i64>
  %t = stablehlo.reduce(%c init: %n) applies stablehlo.minimum across dimensions = [0] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %s, %t : tensor<f32>, tensor<i64>
}
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.maximum
// CHECK: %[[IMAX:.*]] = stablehlo.constant dense<9223372036854775807> : tensor<i64>
// CHECK: stablehlo.pad %arg1, %[[IMAX]], low = [0], high = [1]{{.*}} -> tensor<4xi64>
// CHECK: %[[M01:.*]] = stablehlo.minimum %{{.*}}, %{{.*}} : tensor<1xi64>
// CHECK: %[[M23:.*]] = stablehlo.minimum %{{.*}}, %{{.*}} : tensor<1xi64>
// CHECK: %[[M:.*]] = stablehlo.minimum %[[M01]], %[[M23]] : tensor<1xi64>
// CHECK: %[[MR:.*]] = stablehlo.reshape %[[M]] : (tensor<1xi64>) -> tensor<i64>
// CHECK: stablehlo.minimum %[[MR]], %{{.*}} : tensor<i64>
// CHECK-NOT: applies stablehlo.minimum

// -----

// An integer maximum over the last axis: the reduced axis is moved first, then halved.
// CHECK-LABEL: func.func @integer_maximum_axis
func.func @integer_maximum_axis(%c: tensor<2x3xi32>) -> tensor<2xi32> {
  %n = stablehlo.constant dense<-2147483648> : tensor<i32>
  %t = stablehlo.reduce(%c init: %n) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
  return %t : tensor<2xi32>
}
// CHECK: %[[T:.*]] = stablehlo.transpose %arg0, dims = [1, 0]
// CHECK: stablehlo.pad %[[T]], %{{.*}}, low = [0, 0], high = [1, 0]{{.*}} -> tensor<4x2xi32>
// CHECK: stablehlo.maximum %{{.*}}, %{{.*}} : tensor<1x2xi32>
// CHECK-NOT: applies stablehlo.maximum
