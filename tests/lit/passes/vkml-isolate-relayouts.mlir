// RUN: %vkml-opt %s --split-input-file --pass vkml-isolate-relayouts | filecheck %s

// A transpose of a computed value (here widened, so stored for every reader) reads it across
// a fusion stop, and its readers read it across another: no dispatch computes a value and reads it
// transposed.
// CHECK-LABEL: func.func @computed
func.func @computed(%x: tensor<3x7xf16>) -> (tensor<7x3xf32>, tensor<3x7xf32>) {
  %w = stablehlo.convert %x : (tensor<3x7xf16>) -> tensor<3x7xf32>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x7xf32>) -> tensor<7x3xf32>
  %n = stablehlo.negate %w : tensor<3x7xf32>
  %r = stablehlo.add %t, %t : tensor<7x3xf32>
  return %r, %n : tensor<7x3xf32>, tensor<3x7xf32>
}
// CHECK: %[[W:.*]] = stablehlo.convert %arg0
// CHECK-NEXT: %[[FW:.*]] = iree_tensor_ext.compute_barrier.end %[[W]]
// CHECK-NEXT: %[[T:.*]] = stablehlo.transpose %[[FW]]
// CHECK-NEXT: %[[FT:.*]] = iree_tensor_ext.compute_barrier.end %[[T]]
// CHECK: stablehlo.negate %[[FW]]
// CHECK-NEXT: stablehlo.add %[[FT]], %[[FT]]

// -----

// A transpose of an argument reads the argument (already stored); an unsigned result
// crosses its fusion stop as signless bits.
// CHECK-LABEL: func.func @argument_unsigned
func.func @argument_unsigned(%x: tensor<2x5xui32>) -> tensor<5x2xui32> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x5xui32>) -> tensor<5x2xui32>
  %r = stablehlo.add %t, %t : tensor<5x2xui32>
  return %r : tensor<5x2xui32>
}
// CHECK: %[[T:.*]] = stablehlo.transpose %arg0
// CHECK-NEXT: %[[B:.*]] = stablehlo.bitcast_convert %[[T]] : (tensor<5x2xui32>) -> tensor<5x2xi32>
// CHECK-NEXT: %[[F:.*]] = iree_tensor_ext.compute_barrier.end %[[B]]
// CHECK-NEXT: %[[U:.*]] = stablehlo.bitcast_convert %[[F]]
// CHECK-NEXT: stablehlo.add %[[U]], %[[U]]

// -----

// A broadcast and a reverse read a computed operand across a fusion stop; their results are not
// stored (a broadcast's may be large). A constant operand is left alone.
// CHECK-LABEL: func.func @broadcast_reverse
func.func @broadcast_reverse(%x: tensor<3xf16>) -> (tensor<2x3xf16>, tensor<3xf16>, tensor<2x3xf32>) {
  %n = stablehlo.negate %x : tensor<3xf16>
  %b = stablehlo.broadcast_in_dim %n, dims = [1] : (tensor<3xf16>) -> tensor<2x3xf16>
  %r = stablehlo.reverse %n, dims = [0] : tensor<3xf16>
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %k = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  return %b, %r, %k : tensor<2x3xf16>, tensor<3xf16>, tensor<2x3xf32>
}
// CHECK: %[[N:.*]] = stablehlo.negate %arg0
// CHECK-NEXT: %[[F1:.*]] = iree_tensor_ext.compute_barrier.end %[[N]]
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[F1]]
// CHECK-NEXT: %[[F2:.*]] = iree_tensor_ext.compute_barrier.end %[[N]]
// CHECK-NEXT: %[[R:.*]] = stablehlo.reverse %[[F2]]
// CHECK: %[[K:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = []
// CHECK-NEXT: return %[[B]], %[[R]], %[[K]]

// -----

// A widening conversion's result is stored (IREE clones it into every reader otherwise), and
// a contraction of float16 operands into float32 reads them converted and stored.
// CHECK-LABEL: func.func @widened_and_contracted
func.func @widened_and_contracted(%a: tensor<3x1xf16>, %b: tensor<1x3xf16>) -> (tensor<3x1xf32>, tensor<3x3xf32>) {
  %w = stablehlo.convert %a : (tensor<3x1xf16>) -> tensor<3x1xf32>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x1xf16>, tensor<1x3xf16>) -> tensor<3x3xf32>
  return %w, %d : tensor<3x1xf32>, tensor<3x3xf32>
}
// CHECK: %[[W:.*]] = stablehlo.convert %arg0
// CHECK: %[[CA:.*]] = stablehlo.convert %arg0
// CHECK-NEXT: %[[FA:.*]] = iree_tensor_ext.compute_barrier.end %[[CA]]
// CHECK-NEXT: %[[CB:.*]] = stablehlo.convert %arg1
// CHECK-NEXT: %[[FB:.*]] = iree_tensor_ext.compute_barrier.end %[[CB]]
// CHECK-NEXT: stablehlo.dot_general %[[FA]], %[[FB]]
