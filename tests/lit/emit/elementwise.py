# RUN: %python %s | filecheck %s
# The IR vkml emits for small programs, before and after its passes.
import numpy as np

import vkml

a = vkml.tensor(np.ones((2, 3), np.float32))
b = vkml.tensor(np.ones((3,), np.float32))

# Leaves become arguments; broadcasting is explicit; Python scalars are run-time inputs, read
# from one table (the first argument) so that a new number reuses the module (ADR 0017). A
# float multiply goes through `bits ^ %fence` (0 at run time) so that no add can fuse with it
# into an FMA; the fence is the last argument.
# CHECK-LABEL: func.func @main(%arg0: tensor<1xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<3xf32>, %fence: tensor<i32>) -> (tensor<2x3xf32>)
# CHECK: %[[B0:.*]] = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
# CHECK: %[[ADD0:.*]] = stablehlo.add %arg1, %[[B0]] : tensor<2x3xf32>
# CHECK: %[[TWO:.*]] = stablehlo.reshape %arg0 : (tensor<1xf32>) -> tensor<f32>
# CHECK: %[[TWO_ALL:.*]] = stablehlo.broadcast_in_dim %[[TWO]], dims = []
# CHECK: %[[MUL0:.*]] = stablehlo.multiply %[[ADD0]], %[[TWO_ALL]] : tensor<2x3xf32>
# CHECK: %[[BITS0:.*]] = stablehlo.bitcast_convert %[[MUL0]] : (tensor<2x3xf32>) -> tensor<2x3xi32>
# CHECK: %[[FENCE0:.*]] = stablehlo.broadcast_in_dim %fence, dims = []
# CHECK: %[[MIX0:.*]] = stablehlo.xor %[[BITS0]], %[[FENCE0]] : tensor<2x3xi32>
# CHECK: %[[OUT0:.*]] = stablehlo.bitcast_convert %[[MIX0]] : (tensor<2x3xi32>) -> tensor<2x3xf32>
# CHECK: return %[[OUT0]]
print(vkml.emit_mlir((a + b) * 2.0))

# float16 arithmetic computes in float32 and rounds once. The operand of exp reaches it as
# `bits ^ (fence << 1)`: LLVM folded the expansion of exp of a NaN it knew to 0 (ADR 0016).
# CHECK-LABEL: func.func @main(%arg0: tensor<2x3xf16>, %fence: tensor<i32>) -> (tensor<2x3xf16>)
# CHECK: %[[UP:.*]] = stablehlo.convert %arg0 : (tensor<2x3xf16>) -> tensor<2x3xf32>
# CHECK: %[[UP_BITS:.*]] = stablehlo.bitcast_convert %[[UP]]
# CHECK: %[[SHIFTED:.*]] = stablehlo.shift_left %fence,
# CHECK: %[[SHIFTED_ALL:.*]] = stablehlo.broadcast_in_dim %[[SHIFTED]]
# CHECK: %[[UP_MIX:.*]] = stablehlo.xor %[[UP_BITS]], %[[SHIFTED_ALL]]
# CHECK: %[[UP_HID:.*]] = stablehlo.bitcast_convert %[[UP_MIX]]
# CHECK: %[[EXP:.*]] = stablehlo.exponential %[[UP_HID]] : tensor<2x3xf32>
# CHECK: stablehlo.convert %[[EXP]] : (tensor<2x3xf32>) -> tensor<2x3xf16>
h = vkml.tensor(np.ones((2, 3), np.float16))
print(vkml.emit_mlir(h.exp()))

# relu is a compare and select (NaN stays NaN, no native max).
# CHECK-LABEL: func.func @main(%arg0: tensor<2x3xf32>)
# CHECK: %[[LE:.*]] = stablehlo.compare LE, %arg0, %{{.*}}, FLOAT
# CHECK: stablehlo.select %[[LE]], %{{.*}}, %arg0
# CHECK-NOT: stablehlo.maximum
print(vkml.emit_mlir(a.relu()))
