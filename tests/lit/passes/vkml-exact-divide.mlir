// RUN: %vkml-opt %s --split-input-file --pass vkml-exact-divide | filecheck %s

// An f32 divide becomes integer long division between bitcasts: no float op is left.
// CHECK-LABEL: func.func @divide
func.func @divide(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %q = stablehlo.divide %a, %b : tensor<2x3xf32>
  return %q : tensor<2x3xf32>
}
// CHECK-NOT: stablehlo.divide
// CHECK: %[[X0:.*]] = stablehlo.bitcast_convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK: %[[Y0:.*]] = stablehlo.bitcast_convert %arg1 : (tensor<2x3xf32>) -> tensor<2x3xi32>
// subnormal significands are normalised by their leading zeros, one operand after the other
// CHECK: stablehlo.count_leading_zeros
// CHECK: stablehlo.count_leading_zeros
// the divisor (bit 23 forced, never 0) and its multiples by 8, 4 and 2, as unsigned integers
// CHECK: %[[D0:.*]] = stablehlo.or %{{.*}}, %{{.*}} : tensor<2x3xui32>
// CHECK: %[[D8:.*]] = stablehlo.shift_left %[[D0]], %{{.*}} : tensor<2x3xui32>
// CHECK: %[[D4:.*]] = stablehlo.shift_left %[[D0]], %{{.*}} : tensor<2x3xui32>
// CHECK: %[[D2:.*]] = stablehlo.shift_left %[[D0]], %{{.*}} : tensor<2x3xui32>
// six times: shift the remainder by 4, take out 8d, 4d, 2d, d where each fits (unsigned min)
// CHECK: %[[R0:.*]] = stablehlo.shift_left
// CHECK: %[[T0:.*]] = stablehlo.subtract %[[R0]], %[[D8]] : tensor<2x3xui32>
// CHECK: %[[M0:.*]] = stablehlo.minimum %[[R0]], %[[T0]] : tensor<2x3xui32>
// CHECK: %[[T1:.*]] = stablehlo.subtract %[[M0]], %[[D4]] : tensor<2x3xui32>
// CHECK: %[[M1:.*]] = stablehlo.minimum %[[M0]], %[[T1]] : tensor<2x3xui32>
// CHECK: %[[T2:.*]] = stablehlo.subtract %[[M1]], %[[D2]] : tensor<2x3xui32>
// CHECK: %[[M2:.*]] = stablehlo.minimum %[[M1]], %[[T2]] : tensor<2x3xui32>
// CHECK: %[[T3:.*]] = stablehlo.subtract %[[M2]], %[[D0]] : tensor<2x3xui32>
// CHECK: stablehlo.minimum %[[M2]], %[[T3]] : tensor<2x3xui32>
// CHECK-COUNT-20: stablehlo.minimum %{{.*}}, %{{.*}} : tensor<2x3xui32>
// CHECK-NOT: stablehlo.minimum %{{.*}} : tensor<2x3xui32>
// the quotient: an exact division, by the inverse of the divisor's odd part modulo 2**32
// CHECK-COUNT-8: stablehlo.multiply %{{.*}}, %{{.*}} : tensor<2x3xui32>
// CHECK-NOT: stablehlo.divide
// past the largest binade (254) the result is infinity (0x7F800000)
// CHECK-DAG: stablehlo.constant dense<254> : tensor<2x3xi32>
// CHECK-DAG: stablehlo.constant dense<2139095040> : tensor<2x3xi32>
// 0 / 0 and inf / inf: the default NaN 0xFFC00000; a NaN operand gets its quiet bit 0x400000
// CHECK-DAG: stablehlo.constant dense<-4194304> : tensor<2x3xi32>
// CHECK-DAG: %[[QUIET0:.*]] = stablehlo.constant dense<4194304> : tensor<2x3xi32>
// CHECK: stablehlo.or %[[Y0]], %[[QUIET0]]
// CHECK: stablehlo.or %[[X0]], %[[QUIET0]]
// CHECK: %[[F0:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK: return %[[F0]] : tensor<2x3xf32>

// -----

// A 0-d divide: the recipe's constants are 0-d too.
// CHECK-LABEL: func.func @scalar
func.func @scalar(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %q = stablehlo.divide %a, %b : tensor<f32>
  return %q : tensor<f32>
}
// CHECK-NOT: stablehlo.divide
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<f32>) -> tensor<i32>
// CHECK: stablehlo.constant dense<2147483647> : tensor<i32>
// CHECK: %[[F1:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<i32>) -> tensor<f32>
// CHECK: return %[[F1]] : tensor<f32>

// -----

// Only float32 divides are rewritten: f64, f16 and integer divides stay as they are.
// CHECK-LABEL: func.func @other_types
func.func @other_types(%a: tensor<4xf64>, %b: tensor<4xf16>, %c: tensor<4xi32>) -> (tensor<4xf64>, tensor<4xf16>, tensor<4xi32>) {
  %d = stablehlo.divide %a, %a : tensor<4xf64>
  %h = stablehlo.divide %b, %b : tensor<4xf16>
  %i = stablehlo.divide %c, %c : tensor<4xi32>
  return %d, %h, %i : tensor<4xf64>, tensor<4xf16>, tensor<4xi32>
}
// CHECK: %[[D2:.*]] = stablehlo.divide %arg0, %arg0 : tensor<4xf64>
// CHECK: %[[H2:.*]] = stablehlo.divide %arg1, %arg1 : tensor<4xf16>
// CHECK: %[[I2:.*]] = stablehlo.divide %arg2, %arg2 : tensor<4xi32>
// CHECK: return %[[D2]], %[[H2]], %[[I2]]

// -----

// Two divides in one function: each is rewritten and feeds its own use.
// CHECK-LABEL: func.func @two
func.func @two(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %p = stablehlo.divide %a, %b : tensor<8xf32>
  %q = stablehlo.divide %b, %a : tensor<8xf32>
  %s = stablehlo.add %p, %q : tensor<8xf32>
  return %s : tensor<8xf32>
}
// CHECK-NOT: stablehlo.divide
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<8xf32>) -> tensor<8xi32>
// CHECK: %[[P3:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<8xi32>) -> tensor<8xf32>
// CHECK: stablehlo.bitcast_convert %arg1 : (tensor<8xf32>) -> tensor<8xi32>
// CHECK: %[[Q3:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<8xi32>) -> tensor<8xf32>
// CHECK: %[[S3:.*]] = stablehlo.add %[[P3]], %[[Q3]] : tensor<8xf32>
// CHECK: return %[[S3]]
