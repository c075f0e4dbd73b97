// RUN: not %vkml-opt %s --split-input-file --pass vkml-verify-nan-semantics 2>&1 | filecheck %s

// Each case holds one max/min that returns the non-NaN operand when the other is NaN.

// IEEE maxNum/minNum drop NaN by definition.
// CHECK: error: vkml-verify-nan-semantics: 1 NaN-swallowing operation(s)
// CHECK-NEXT: 'arith.maxnumf' at loc("-":{{[0-9]+}}:{{[0-9]+}}) is a maximum that returns the non-NaN operand{{.*}}use 'arith.maximumf'
func.func @maxnumf(%x: f32, %y: f32) -> f32 {
  %m = arith.maxnumf %x, %y : f32
  return %m : f32
}

// -----

// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'arith.minnumf' at loc({{.*}}) is a minimum that returns the non-NaN operand{{.*}}use 'arith.minimumf'
func.func @minnumf(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %m = arith.minnumf %x, %y : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// The NaN check tests the wrong operand: a NaN x fails both compares and y is picked.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at loc("-":{{[0-9]+}}:{{[0-9]+}}) is a maximum that swallows NaN: when its true operand is NaN it returns the other one
func.func @isnan_of_wrong_operand(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ge = stablehlo.compare GE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %nan = stablehlo.compare NE, %y, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %keep = stablehlo.or %ge, %nan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// AND instead of OR: the NaN check can never make the predicate true.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at {{.*}} is a minimum that swallows NaN: when its true operand is NaN
func.func @and_instead_of_or(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %le = stablehlo.compare LE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %nan = stablehlo.compare NE, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %keep = stablehlo.and %le, %nan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// x == x is the "not NaN" test, not "is NaN": a NaN x gives y.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at {{.*}} is a maximum that swallows NaN: when its true operand is NaN
func.func @eq_instead_of_ne(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %gt = stablehlo.compare GT, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %nan = stablehlo.compare EQ, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %keep = stablehlo.or %gt, %nan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A NaN in the false operand: OR-ing in y != y as well makes a NaN y pick x.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at {{.*}} is a maximum that swallows NaN: when its false operand is NaN it returns the other one
func.func @not_isnan_of_false_operand(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ge = stablehlo.compare GE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %ynan = stablehlo.compare NE, %y, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %xnan = stablehlo.compare NE, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %a = stablehlo.or %ge, %xnan : tensor<4xi1>
  %b = stablehlo.or %a, %ynan : tensor<4xi1>
  %r = stablehlo.select %b, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A reduction combiner is always an emitter's: a single-compare max there is an error.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at {{.*}} is a maximum that swallows NaN: when its true operand is NaN it returns the other one
func.func @reduce_plain_select_max(%x: tensor<4xf32>) -> tensor<f32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%x init: %ninf) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %s = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %r : tensor<f32>
}

// -----

// The same in a min reduction, with the compare's operands the other way round.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at {{.*}} is a minimum that swallows NaN
func.func @reduce_plain_select_min(%x: tensor<4xf32>) -> tensor<f32> {
  %inf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %r = stablehlo.reduce(%x init: %inf) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %gt = stablehlo.compare GT, %b, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %s = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %r : tensor<f32>
}

// -----

// arith spelling: ogt is false on NaN and the "ord" check asks the wrong question.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'arith.select' at {{.*}} is a maximum that swallows NaN: when its true operand is NaN
func.func @arith_select_max(%x: f32, %y: f32) -> f32 {
  %gt = arith.cmpf ogt, %x, %y : f32
  %ord = arith.cmpf ord, %x, %x : f32
  %keep = arith.ori %gt, %ord : i1
  %r = arith.select %keep, %x, %y : f32
  return %r : f32
}

// -----

// The integer NaN test (as vkml-vulkan-nan writes it) reads y's bits where x's are needed.
// CHECK: error: vkml-verify-nan-semantics
// CHECK-NEXT: 'stablehlo.select' at {{.*}} is a maximum that swallows NaN: when its true operand is NaN it returns the other one
func.func @nan_bits_of_wrong_operand(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %mask = stablehlo.constant dense<2147483647> : tensor<4xi32>
  %inf = stablehlo.constant dense<2139095040> : tensor<4xi32>
  %ybits = stablehlo.bitcast_convert %y : (tensor<4xf32>) -> tensor<4xi32>
  %yabs = stablehlo.and %ybits, %mask : tensor<4xi32>
  %ge = stablehlo.compare GE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %ynan = stablehlo.compare GT, %yabs, %inf, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %keep = stablehlo.or %ge, %ynan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Every problem of a module is named, in one error.
// CHECK: error: vkml-verify-nan-semantics: 2 NaN-swallowing operation(s)
// CHECK-NEXT: 'arith.maxnumf'
// CHECK-NEXT: 'arith.minnumf'
func.func @two(%x: f32, %y: f32) -> (f32, f32) {
  %a = arith.maxnumf %x, %y : f32
  %b = arith.minnumf %x, %y : f32
  return %a, %b : f32, f32
}
