// RUN: %vkml-opt %s --split-input-file --pass vkml-pairwise-reductions | filecheck %s

// A length-5 axis is padded with -0.0 to 8, then halved three times.
// CHECK-LABEL: func.func @sum_rows
func.func @sum_rows(%a: tensor<5x3xf32>) -> tensor<3xf32> {
  %z = stablehlo.constant dense<-0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<5x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
// CHECK-NOT: stablehlo.reduce
// CHECK: %[[PAD0:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 0], high = [3, 0]{{.*}} -> tensor<8x3xf32>
// Three halvings fused into one block: eight row slices, combined as the halvings would.
// CHECK: %[[R0:.*]] = stablehlo.slice %[[PAD0]] [0:1, 0:3]
// CHECK: %[[R1:.*]] = stablehlo.slice %[[PAD0]] [1:2, 0:3]
// CHECK: %[[R2:.*]] = stablehlo.slice %[[PAD0]] [2:3, 0:3]
// CHECK: %[[R3:.*]] = stablehlo.slice %[[PAD0]] [3:4, 0:3]
// CHECK: %[[R4:.*]] = stablehlo.slice %[[PAD0]] [4:5, 0:3]
// CHECK: %[[R5:.*]] = stablehlo.slice %[[PAD0]] [5:6, 0:3]
// CHECK: %[[R6:.*]] = stablehlo.slice %[[PAD0]] [6:7, 0:3]
// CHECK: %[[R7:.*]] = stablehlo.slice %[[PAD0]] [7:8, 0:3]
// CHECK: %[[H04:.*]] = stablehlo.add %[[R0]], %[[R4]]
// CHECK: %[[H15:.*]] = stablehlo.add %[[R1]], %[[R5]]
// CHECK: %[[H26:.*]] = stablehlo.add %[[R2]], %[[R6]]
// CHECK: %[[H37:.*]] = stablehlo.add %[[R3]], %[[R7]]
// CHECK: %[[Q0:.*]] = stablehlo.add %[[H04]], %[[H26]]
// CHECK: %[[Q1:.*]] = stablehlo.add %[[H15]], %[[H37]]
// CHECK: stablehlo.add %[[Q0]], %[[Q1]] : tensor<1x3xf32>

// -----

// Two reduced axes are moved to the front and flattened row-major (2*4 = 8, no padding).
// CHECK-LABEL: func.func @sum_two_axes
func.func @sum_two_axes(%a: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %z = stablehlo.constant dense<-0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
// CHECK: %[[T1:.*]] = stablehlo.transpose %arg0, dims = [0, 2, 1]
// CHECK: %[[FLAT1:.*]] = stablehlo.reshape %[[T1]] : (tensor<2x4x3xf32>) -> tensor<8x3xf32>
// CHECK-NOT: stablehlo.pad
// CHECK: stablehlo.slice %[[FLAT1]] [0:1, 0:3]

// -----

// n = 1: no padding and no halving; the init is still added.
// CHECK-LABEL: func.func @sum_single
func.func @sum_single(%a: tensor<1xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<-0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
// CHECK-NOT: stablehlo.reduce
// CHECK-NOT: stablehlo.slice
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<f32>

// -----

// Integer sums and max reductions are order-independent: left alone.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%a: tensor<5xi32>, %b: tensor<5xf32>) -> (tensor<i32>, tensor<f32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<5xi32>, tensor<i32>) -> tensor<i32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %s = stablehlo.reduce(%b init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  return %r, %s : tensor<i32>, tensor<f32>
}
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add
// CHECK: stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.maximum

// -----

// A float16 sum (vkml itself widens to f32 first) is rewritten in its own type; keepdims is a
// reshape after the reduce and stays as it is.
// CHECK-LABEL: func.func @sum_f16_keepdims
func.func @sum_f16_keepdims(%a: tensor<3x2xf16>) -> tensor<1x2xf16> {
  %z = stablehlo.constant dense<-0.0> : tensor<f16>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3x2xf16>, tensor<f16>) -> tensor<2xf16>
  %k = stablehlo.reshape %r : (tensor<2xf16>) -> tensor<1x2xf16>
  return %k : tensor<1x2xf16>
}
// CHECK-NOT: stablehlo.reduce
// CHECK: stablehlo.pad %arg0, %{{.*}}, low = [0, 0], high = [1, 0]{{.*}} -> tensor<4x2xf16>
// CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<1x2xf16>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2xf16>) -> tensor<1x2xf16>

// -----

// bfloat16 over the last axis of a 3-D tensor, length 3 padded to 4.
// CHECK-LABEL: func.func @sum_bf16_last_axis
func.func @sum_bf16_last_axis(%a: tensor<2x2x3xbf16>) -> tensor<2x2xbf16> {
  %z = stablehlo.constant dense<-0.0> : tensor<bf16>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [2] : (tensor<2x2x3xbf16>, tensor<bf16>) -> tensor<2x2xbf16>
  return %r : tensor<2x2xbf16>
}
// CHECK: %[[TB:.*]] = stablehlo.transpose %arg0, dims = [2, 0, 1]
// CHECK: stablehlo.pad %[[TB]], %{{.*}}, high = [1, 0, 0]{{.*}} -> tensor<4x2x2xbf16>
// CHECK-NOT: stablehlo.reduce
