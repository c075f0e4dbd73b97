// RUN: %vkml-opt %s --split-input-file --pass vkml-soft-f16 | filecheck %s

// f32 -> f16 becomes 32-bit integer rounding ending in a bitcast from ui16.
// CHECK-LABEL: func.func @to_f16
func.func @to_f16(%a: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %r = stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %r : tensor<2x3xf16>
}
// CHECK-NOT: stablehlo.convert %arg0
// CHECK: %[[U0:.*]] = stablehlo.bitcast_convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xui32>
// the NaN test: |x| > 0x7F800000
// CHECK-DAG: stablehlo.constant dense<2139095040> : tensor<2x3xui32>
// rebias the exponent by 112 << 23, then add 0xFFF and the kept lowest bit (ties to even)
// CHECK-DAG: stablehlo.constant dense<939524096> : tensor<2x3xui32>
// CHECK-DAG: stablehlo.constant dense<4095> : tensor<2x3xui32>
// overflow clamps to 0x7C00 (infinity); below 0x38800000 (2**-14) the subnormal path is taken
// CHECK-DAG: %[[INF0:.*]] = stablehlo.constant dense<31744> : tensor<2x3xui32>
// CHECK-DAG: stablehlo.minimum %{{.*}}, %[[INF0]] : tensor<2x3xui32>
// CHECK-DAG: stablehlo.constant dense<947912704> : tensor<2x3xui32>
// CHECK: %[[H0:.*]] = stablehlo.convert %{{.*}} : (tensor<2x3xui32>) -> tensor<2x3xui16>
// CHECK: %[[F0:.*]] = stablehlo.bitcast_convert %[[H0]] : (tensor<2x3xui16>) -> tensor<2x3xf16>
// CHECK: return %[[F0]] : tensor<2x3xf16>

// -----

// f32 -> bf16 rounds off 16 bits (0x7FFF plus the kept lowest bit); NaN becomes sign | 0x7FC0.
// CHECK-LABEL: func.func @to_bf16
func.func @to_bf16(%a: tensor<4xf32>) -> tensor<4xbf16> {
  %r = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}
// CHECK-NOT: stablehlo.convert %arg0
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xui32>
// CHECK-DAG: stablehlo.constant dense<32704> : tensor<4xui32>
// CHECK-DAG: stablehlo.constant dense<32767> : tensor<4xui32>
// CHECK: %[[H1:.*]] = stablehlo.convert %{{.*}} : (tensor<4xui32>) -> tensor<4xui16>
// CHECK: %[[F1:.*]] = stablehlo.bitcast_convert %[[H1]] : (tensor<4xui16>) -> tensor<4xbf16>
// CHECK: return %[[F1]]

// -----

// A 0-d tensor: the constants are 0-d too.
// CHECK-LABEL: func.func @scalar
func.func @scalar(%a: tensor<f32>) -> tensor<f16> {
  %r = stablehlo.convert %a : (tensor<f32>) -> tensor<f16>
  return %r : tensor<f16>
}
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<f32>) -> tensor<ui32>
// CHECK: stablehlo.constant dense<4095> : tensor<ui32>
// CHECK: %[[F2:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<ui16>) -> tensor<f16>
// CHECK: return %[[F2]] : tensor<f16>

// -----

// Two narrowings in one function: both are rewritten, each feeding its own use.
// CHECK-LABEL: func.func @two
func.func @two(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf16>, tensor<8xbf16>) {
  %s = stablehlo.add %a, %b : tensor<8xf32>
  %h = stablehlo.convert %s : (tensor<8xf32>) -> tensor<8xf16>
  %g = stablehlo.convert %a : (tensor<8xf32>) -> tensor<8xbf16>
  return %h, %g : tensor<8xf16>, tensor<8xbf16>
}
// CHECK-NOT: stablehlo.convert {{.*}}f32>) -> tensor<8xf16>
// CHECK-NOT: stablehlo.convert {{.*}}f32>) -> tensor<8xbf16>
// CHECK: %[[S3:.*]] = stablehlo.add %arg0, %arg1 : tensor<8xf32>
// CHECK: stablehlo.bitcast_convert %[[S3]] : (tensor<8xf32>) -> tensor<8xui32>
// CHECK: %[[H3:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<8xui16>) -> tensor<8xf16>
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<8xf32>) -> tensor<8xui32>
// CHECK: %[[G3:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<8xui16>) -> tensor<8xbf16>
// CHECK: return %[[H3]], %[[G3]] : tensor<8xf16>, tensor<8xbf16>

// -----

// Widening, float -> integer and f64 -> f32 converts are left alone.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%a: tensor<3xf16>, %b: tensor<3xf32>, %c: tensor<3xf64>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) {
  %w = stablehlo.convert %a : (tensor<3xf16>) -> tensor<3xf32>
  %i = stablehlo.convert %b : (tensor<3xf32>) -> tensor<3xi32>
  %n = stablehlo.convert %c : (tensor<3xf64>) -> tensor<3xf32>
  return %w, %i, %n : tensor<3xf32>, tensor<3xi32>, tensor<3xf32>
}
// CHECK-NOT: bitcast_convert
// CHECK: stablehlo.convert %arg0 : (tensor<3xf16>) -> tensor<3xf32>
// CHECK: stablehlo.convert %arg1 : (tensor<3xf32>) -> tensor<3xi32>
// CHECK: stablehlo.convert %arg2 : (tensor<3xf64>) -> tensor<3xf32>
// CHECK-NOT: bitcast_convert

// -----

// f64 -> f16 rounds to odd float32 first (so the result is rounded once), then narrows.
// CHECK-LABEL: func.func @from_f64
func.func @from_f64(%c: tensor<3xf64>) -> tensor<3xf16> {
  %d = stablehlo.convert %c : (tensor<3xf64>) -> tensor<3xf16>
  return %d : tensor<3xf16>
}
// CHECK-NOT: -> tensor<3xf16>{{$}}
// CHECK: %[[NEAR:.*]] = stablehlo.convert %arg0 : (tensor<3xf64>) -> tensor<3xf32>
// CHECK: %[[BACK:.*]] = stablehlo.convert %[[NEAR]] : (tensor<3xf32>) -> tensor<3xf64>
// CHECK: stablehlo.compare  NE, %[[BACK]], %arg0
// CHECK: %[[ODD:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<3xui32>) -> tensor<3xf32>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<3xui16>) -> tensor<3xf16>
