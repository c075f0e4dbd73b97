// RUN: %vkml-opt %s --split-input-file --pass vkml-verify-nan-semantics | filecheck %s

// The verifier changes nothing: every case here propagates NaN (or is a user's select) and
// comes back as it went in.

// vkml's maximum (emitters.select_max): x >= y OR x != x picks x when x is NaN, y when y is.
// CHECK-LABEL: func.func @select_max
func.func @select_max(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ge = stablehlo.compare GE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %nan = stablehlo.compare NE, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %keep = stablehlo.or %ge, %nan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[GE0:.*]] = stablehlo.compare GE, %arg0, %arg1
// CHECK: %[[NAN0:.*]] = stablehlo.compare NE, %arg0, %arg0
// CHECK: %[[KEEP0:.*]] = stablehlo.or %[[GE0]], %[[NAN0]]
// CHECK: stablehlo.select %[[KEEP0]], %arg0, %arg1

// -----

// vkml's minimum with a constant first operand (minimum(1.0, y)): 1.0 is never NaN, and a
// NaN y fails LE, so y (NaN) is picked.
// CHECK-LABEL: func.func @select_min_constant
func.func @select_min_constant(%y: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %le = stablehlo.compare LE, %c, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %nan = stablehlo.compare NE, %c, %c, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %keep = stablehlo.or %le, %nan : tensor<4xi1>
  %r = stablehlo.select %keep, %c, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[KEEP1:.*]] = stablehlo.or
// CHECK: stablehlo.select %[[KEEP1]], %{{.*}}, %arg0

// -----

// vkml's relu: 0 if x <= 0 else x; NaN <= 0 is false, so NaN comes through.
// CHECK-LABEL: func.func @relu
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %le = stablehlo.compare LE, %x, %zero, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %r = stablehlo.select %le, %zero, %x : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[LE2:.*]] = stablehlo.compare LE, %arg0
// CHECK: stablehlo.select %[[LE2]], %{{.*}}, %arg0

// -----

// A user's vkml.where(x > y, x, y) swallows NaN as torch.where does; it is not a maximum
// vkml promised, and the IR cannot tell it apart from one, so it passes.
// CHECK-LABEL: func.func @user_where
func.func @user_where(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %gt = stablehlo.compare GT, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %r = stablehlo.select %gt, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[GT3:.*]] = stablehlo.compare GT, %arg0, %arg1
// CHECK: stablehlo.select %[[GT3]], %arg0, %arg1

// -----

// StableHLO's maximum and clamp propagate NaN by specification; integer selects cannot see NaN.
// CHECK-LABEL: func.func @native_and_integer
func.func @native_and_integer(%x: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xi32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %lo = stablehlo.constant dense<-1.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %c = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %gt = stablehlo.compare GT, %i, %j, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %s = stablehlo.select %gt, %i, %j : tensor<4xi1>, tensor<4xi32>
  return %m, %c, %s : tensor<f32>, tensor<4xf32>, tensor<4xi32>
}
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.maximum
// CHECK: stablehlo.clamp
// CHECK: stablehlo.select %{{.*}}, %arg1, %arg2

// -----

// A reduction whose body is vkml's select_max combine propagates NaN.
// CHECK-LABEL: func.func @reduce_select_max
func.func @reduce_select_max(%x: tensor<4xf32>) -> tensor<f32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%x init: %ninf) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %ge = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %nan = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %keep = stablehlo.or %ge, %nan : tensor<i1>
      %s = stablehlo.select %keep, %a, %b : tensor<i1>, tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %r : tensor<f32>
}
// CHECK: stablehlo.reduce
// CHECK: stablehlo.or
// CHECK: stablehlo.select

// -----

// arith: maximumf propagates NaN; an unordered compare is true for NaN, so this select
// (x if x >=u y else y, i.e. "uge") propagates a NaN x, and a NaN y fails the ori's uno check.
// CHECK-LABEL: func.func @arith_propagating
func.func @arith_propagating(%x: f32, %y: f32) -> (f32, f32) {
  %m = arith.maximumf %x, %y : f32
  %uge = arith.cmpf uge, %x, %y : f32
  %ynan = arith.cmpf ord, %y, %y : f32
  %keep = arith.andi %uge, %ynan : i1
  %s = arith.select %keep, %x, %y : f32
  return %m, %s : f32, f32
}
// CHECK: arith.maximumf %arg0, %arg1
// CHECK: arith.select %{{.*}}, %arg0, %arg1

// -----

// vkml-vulkan-nan's spelling of select_max: (bits & MASK) > INF reads as x != x, <= INF as
// x == x, and GE joined with its operands' "not NaN" tests reads as GE alone.
// CHECK-LABEL: func.func @select_max_by_bits
func.func @select_max_by_bits(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %mask = stablehlo.constant dense<2147483647> : tensor<4xi32>
  %inf = stablehlo.constant dense<2139095040> : tensor<4xi32>
  %xbits = stablehlo.bitcast_convert %x : (tensor<4xf32>) -> tensor<4xi32>
  %xabs = stablehlo.and %xbits, %mask : tensor<4xi32>
  %ybits = stablehlo.bitcast_convert %y : (tensor<4xf32>) -> tensor<4xi32>
  %yabs = stablehlo.and %ybits, %mask : tensor<4xi32>
  %xord = stablehlo.compare LE, %xabs, %inf, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %yord = stablehlo.compare LE, %yabs, %inf, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %ord = stablehlo.and %xord, %yord : tensor<4xi1>
  %ge = stablehlo.compare GE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %guarded = stablehlo.and %ge, %ord : tensor<4xi1>
  %xnan = stablehlo.compare GT, %xabs, %inf, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %keep = stablehlo.or %guarded, %xnan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[KEEP9:.*]] = stablehlo.or
// CHECK: stablehlo.select %[[KEEP9]], %arg0, %arg1

// -----

// A user's where(x > y, x, y) after vkml-vulkan-nan: the guarded compare reads as x > y, so
// this stays a select on one compare, which the verifier leaves to torch.where's meaning.
// CHECK-LABEL: func.func @user_where_by_bits
func.func @user_where_by_bits(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %mask = stablehlo.constant dense<2147483647> : tensor<4xi32>
  %inf = stablehlo.constant dense<2139095040> : tensor<4xi32>
  %xbits = stablehlo.bitcast_convert %x : (tensor<4xf32>) -> tensor<4xi32>
  %xabs = stablehlo.and %xbits, %mask : tensor<4xi32>
  %ybits = stablehlo.bitcast_convert %y : (tensor<4xf32>) -> tensor<4xi32>
  %yabs = stablehlo.and %ybits, %mask : tensor<4xi32>
  %xord = stablehlo.compare LE, %xabs, %inf, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %yord = stablehlo.compare LE, %yabs, %inf, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %ord = stablehlo.and %xord, %yord : tensor<4xi1>
  %gt = stablehlo.compare GT, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %guarded = stablehlo.and %gt, %ord : tensor<4xi1>
  %r = stablehlo.select %guarded, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[GT10:.*]] = stablehlo.compare GT, %arg0, %arg1, FLOAT
// CHECK: %[[GUARDED10:.*]] = stablehlo.and %[[GT10]], %{{.*}} : tensor<4xi1>
// CHECK: stablehlo.select %[[GUARDED10]], %arg0, %arg1
