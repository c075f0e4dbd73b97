// RUN: not %vkml-opt %s --pass vkml-pairwise-reductions 2>&1 | filecheck %s
// RUN: not %vkml-opt %s --pass vkml-no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN

// Input that does not verify is reported as an MLIR diagnostic with a non-zero exit.
// CHECK: error: the MLIR does not parse
// CHECK: error: "-":10:24: Out-of-bounds dimension 3, expected to be in range [0, 1)
// UNKNOWN: error: unknown pass 'vkml-no-such-pass'; known passes: vkml-pairwise-reductions
func.func @bad(%a: tensor<5xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<-0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [3] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
