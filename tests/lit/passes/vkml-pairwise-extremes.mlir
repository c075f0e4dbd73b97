// RUN: %vkml-opt %s --split-input-file --pass vkml-pairwise-extremes | filecheck %s

// A float maximum from -inf becomes the tree of select_max (compare GE, or with x != x,
// select), padded with -inf to 8 rows; the init, the identity, is not combined again. An
// integer maximum is left to vkml-pairwise-integer-reductions.
// CHECK-LABEL: func.func @float_maximum
func.func @float_maximum(%a: tensor<5xf32>, %b: tensor<5xi32>) -> (tensor<f32>, tensor<i32>) {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%a init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %n = stablehlo.constant dense<-2147483648> : tensor<i32>
  %s = stablehlo.reduce(%b init: %n) applies stablehlo.maximum across dimensions = [0] : (tensor<5xi32>, tensor<i32>) -> tensor<i32>
  return %r, %s : tensor<f32>, tensor<i32>
}
// CHECK: stablehlo.pad %arg0, %{{.*}}, low = [0], high = [3]{{.*}} -> tensor<8xf32>
// CHECK: stablehlo.compare GE
// CHECK: stablehlo.compare NE
// CHECK: stablehlo.or
// CHECK: stablehlo.select
// CHECK-NOT: stablehlo.reduce(%arg0
// CHECK: stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.maximum

// -----

// A float minimum from another init takes that init last, with select_min (compare LE).
// CHECK-LABEL: func.func @float_minimum_from_an_init
func.func @float_minimum_from_an_init(%a: tensor<4xf64>, %i: tensor<f64>) -> tensor<f64> {
  %r = stablehlo.reduce(%a init: %i) applies stablehlo.minimum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
  return %r : tensor<f64>
}
// CHECK-NOT: stablehlo.reduce
// CHECK: stablehlo.compare LE, %0, %2
// CHECK: stablehlo.compare LE, %{{.*}}, %arg1
// CHECK: stablehlo.select %{{.*}}, %{{.*}}, %arg1
// CHECK-NOT: stablehlo.reduce
