// RUN: %vkml-opt %s --split-input-file --pass vkml-vulkan-nan | filecheck %s
// RUN: %vkml-opt %s --split-input-file --pass vkml-vulkan-nan --pass vkml-verify-nan-semantics > /dev/null

// The float NaN tests x != x and x == x become integer tests of x's bits:
// (bits & 0x7FFFFFFF) > 0x7F800000 is NaN, <= is not NaN. No float compare is left.
// CHECK-LABEL: func.func @self_compares
func.func @self_compares(%x: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %ne = stablehlo.compare NE, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %eq = stablehlo.compare EQ, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %ne, %eq : tensor<4xi1>, tensor<4xi1>
}
// CHECK-NOT: FLOAT
// CHECK: %[[BITS0:.*]] = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[MASK0:.*]] = stablehlo.constant dense<2147483647> : tensor<4xi32>
// CHECK: %[[ABS0:.*]] = stablehlo.and %[[BITS0]], %[[MASK0]] : tensor<4xi32>
// CHECK: %[[INF0:.*]] = stablehlo.constant dense<2139095040> : tensor<4xi32>
// CHECK: %[[NAN0:.*]] = stablehlo.compare GT, %[[ABS0]], %[[INF0]], SIGNED
// CHECK-NOT: FLOAT
// CHECK: %[[ORD0:.*]] = stablehlo.compare LE, %{{.*}}, %{{.*}}, SIGNED
// CHECK-NOT: FLOAT
// CHECK: return %[[NAN0]], %[[ORD0]]

// -----

// relu's x <= 0 is true for NaN where the driver assumes no NaN: it is joined with "x is
// not NaN". The constant 0 is not tested.
// CHECK-LABEL: func.func @relu
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %le = stablehlo.compare LE, %x, %zero, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %r = stablehlo.select %le, %zero, %x : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[ZERO1:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[LE1:.*]] = stablehlo.compare LE, %arg0, %[[ZERO1]], FLOAT
// CHECK: stablehlo.bitcast_convert %arg0
// CHECK-NOT: bitcast_convert %[[ZERO1]]
// CHECK: %[[ORD1:.*]] = stablehlo.compare LE, %{{.*}}, %{{.*}}, SIGNED
// CHECK-NOT: bitcast_convert %[[ZERO1]]
// CHECK: %[[KEEP1:.*]] = stablehlo.and %[[LE1]], %[[ORD1]] : tensor<4xi1>
// CHECK: stablehlo.select %[[KEEP1]], %[[ZERO1]], %arg0

// -----

// vkml's maximum: x >= y only where neither is NaN, or x is NaN (by its bits).
// CHECK-LABEL: func.func @select_max
func.func @select_max(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ge = stablehlo.compare GE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %nan = stablehlo.compare NE, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %keep = stablehlo.or %ge, %nan : tensor<4xi1>
  %r = stablehlo.select %keep, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK: %[[GE2:.*]] = stablehlo.compare GE, %arg0, %arg1, FLOAT
// CHECK: stablehlo.bitcast_convert %arg0
// CHECK: %[[XORD2:.*]] = stablehlo.compare LE, %{{.*}}, %{{.*}}, SIGNED
// CHECK: stablehlo.bitcast_convert %arg1
// CHECK: %[[YORD2:.*]] = stablehlo.compare LE, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[ORD2:.*]] = stablehlo.and %[[XORD2]], %[[YORD2]]
// CHECK: %[[GUARDED2:.*]] = stablehlo.and %[[GE2]], %[[ORD2]]
// CHECK: stablehlo.bitcast_convert %arg0
// CHECK: %[[XNAN2:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[KEEP2:.*]] = stablehlo.or %[[GUARDED2]], %[[XNAN2]]
// CHECK: stablehlo.select %[[KEEP2]], %arg0, %arg1

// -----

// NE is true for NaN: it is joined with "x or y is NaN" by or.
// CHECK-LABEL: func.func @not_equal
func.func @not_equal(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %ne = stablehlo.compare NE, %x, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %ne : tensor<4xi1>
}
// CHECK: %[[NE3:.*]] = stablehlo.compare NE, %arg0, %arg1, FLOAT
// CHECK: %[[XNAN3:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[YNAN3:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[ANY3:.*]] = stablehlo.or %[[XNAN3]], %[[YNAN3]]
// CHECK: %[[R3:.*]] = stablehlo.or %[[NE3]], %[[ANY3]]
// CHECK: return %[[R3]]

// -----

// exp(NaN) gave 0 on the H200: a NaN x is returned as it is.
// CHECK-LABEL: func.func @exp
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.exponential %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
// CHECK: %[[E4:.*]] = stablehlo.exponential %arg0
// CHECK: %[[NAN4:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[R4:.*]] = stablehlo.select %[[NAN4]], %arg0, %[[E4]]
// CHECK: return %[[R4]]

// -----

// log: below -0.0 (sign bit set, magnitude above 0) is the default NaN; a NaN x is x.
// CHECK-LABEL: func.func @log
func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.log %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
// CHECK: %[[L5:.*]] = stablehlo.log %arg0
// CHECK: %[[QNAN5:.*]] = stablehlo.constant dense<0x7FC00000> : tensor<4xf32>
// CHECK: %[[ZERO5:.*]] = stablehlo.constant dense<0> : tensor<4xi32>
// CHECK: %[[SIGN5:.*]] = stablehlo.compare LT, %{{.*}}, %[[ZERO5]], SIGNED
// CHECK: %[[SOME5:.*]] = stablehlo.compare GT, %{{.*}}, %[[ZERO5]], SIGNED
// CHECK: %[[NEG5:.*]] = stablehlo.and %[[SIGN5]], %[[SOME5]]
// CHECK: %[[DOM5:.*]] = stablehlo.select %[[NEG5]], %[[QNAN5]], %[[L5]]
// CHECK: %[[NAN5:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[R5:.*]] = stablehlo.select %[[NAN5]], %arg0, %[[DOM5]]
// CHECK: return %[[R5]]

// -----

// sin(±inf) is NaN: |bits| equal to infinity's.
// CHECK-LABEL: func.func @sine
func.func @sine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.sine %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
// CHECK: %[[S6:.*]] = stablehlo.sine %arg0
// CHECK: %[[INF6:.*]] = stablehlo.compare EQ, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[DOM6:.*]] = stablehlo.select %[[INF6]], %{{.*}}, %[[S6]]
// CHECK: stablehlo.select %{{.*}}, %arg0, %[[DOM6]]

// -----

// pow: a NaN y gives NaN unless x is 1.0 (bits 0x3F800000); a NaN x unless y is ±0.
// CHECK-LABEL: func.func @power
func.func @power(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.power %x, %y : tensor<4xf32>
  return %e : tensor<4xf32>
}
// CHECK: %[[P7:.*]] = stablehlo.power %arg0, %arg1
// CHECK: %[[YNAN7:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[ONE7:.*]] = stablehlo.constant dense<1065353216> : tensor<4xi32>
// CHECK: %[[XONE7:.*]] = stablehlo.compare EQ, %{{.*}}, %[[ONE7]], SIGNED
// CHECK: %[[NOTONE7:.*]] = stablehlo.not %[[XONE7]]
// CHECK: %[[YPROP7:.*]] = stablehlo.and %[[YNAN7]], %[[NOTONE7]]
// CHECK: %[[RY7:.*]] = stablehlo.select %[[YPROP7]], %arg1, %[[P7]]
// CHECK: %[[XNAN7:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[YZERO7:.*]] = stablehlo.compare EQ, %{{.*}}, %{{.*}}, SIGNED
// CHECK: %[[NOTZERO7:.*]] = stablehlo.not %[[YZERO7]]
// CHECK: %[[XPROP7:.*]] = stablehlo.and %[[XNAN7]], %[[NOTZERO7]]
// CHECK: stablehlo.select %[[XPROP7]], %arg0, %[[RY7]]

// -----

// chlo ops too (vkml's erf, and erfc inside gelu).
// CHECK-LABEL: func.func @erf
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
  return %e : tensor<4xf32>
}
// CHECK: %[[E8:.*]] = chlo.erf %arg0
// CHECK: stablehlo.select %{{.*}}, %arg0, %[[E8]]

// -----

// clamp with 0-d bounds: a NaN bound is broadcast; the constant bound is not tested.
// CHECK-LABEL: func.func @clamp
func.func @clamp(%lo: tensor<f32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %e = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}
// CHECK: %[[HI9:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[C9:.*]] = stablehlo.clamp %arg0, %arg1, %[[HI9]]
// CHECK: %[[RX9:.*]] = stablehlo.select %{{.*}}, %arg1, %[[C9]]
// CHECK: %[[LO9:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<4xf32>
// CHECK: stablehlo.select %{{.*}}, %[[LO9]], %[[RX9]]
// CHECK-NOT: bitcast_convert %[[HI9]]

// -----

// Each width reads its own bits: f16 and bf16 as i16 (infinity 0x7C00, 0x7F80), f64 as i64.
// CHECK-LABEL: func.func @widths
func.func @widths(%h: tensor<2xf16>, %b: tensor<2xbf16>, %d: tensor<2xf64>) -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %0 = stablehlo.compare NE, %h, %h, FLOAT : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xi1>
  %1 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xi1>
  %2 = stablehlo.compare NE, %d, %d, FLOAT : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}
// CHECK: stablehlo.bitcast_convert %arg0 : (tensor<2xf16>) -> tensor<2xi16>
// CHECK: stablehlo.constant dense<32767> : tensor<2xi16>
// CHECK: stablehlo.constant dense<31744> : tensor<2xi16>
// CHECK: stablehlo.bitcast_convert %arg1 : (tensor<2xbf16>) -> tensor<2xi16>
// CHECK: stablehlo.constant dense<32640> : tensor<2xi16>
// CHECK: stablehlo.bitcast_convert %arg2 : (tensor<2xf64>) -> tensor<2xi64>
// CHECK: stablehlo.constant dense<9223372036854775807> : tensor<2xi64>
// CHECK: stablehlo.constant dense<9218868437227405312> : tensor<2xi64>

// -----

// Integer and TOTALORDER compares and float arithmetic are left alone.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%i: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>) {
  %0 = stablehlo.compare LT, %i, %i, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = stablehlo.add %x, %y : tensor<4xf32>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>
}
// CHECK-NEXT: %[[I10:.*]] = stablehlo.compare LT, %arg0, %arg0, SIGNED
// CHECK-NEXT: %[[T10:.*]] = stablehlo.compare LT, %arg1, %arg2, TOTALORDER
// CHECK-NEXT: %[[A10:.*]] = stablehlo.add %arg1, %arg2
// CHECK-NEXT: return %[[I10]], %[[T10]], %[[A10]]
