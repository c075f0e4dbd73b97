# RUN: %python %s | filecheck %s
# The IR vkml emits for Vulkan (ADR 0009): no float op sees a literal, the same value on
# both sides of a subtraction, or the bare result of a unary op or a cast.
import numpy as np

import vkml
from vkml.compiler.lower import lower_to_mlir
from vkml.graph.walk import toposort


def vulkan_mlir(*tensors: vkml.Tensor) -> str:
    roots = [t.node for t in tensors]
    return lower_to_mlir(toposort(roots), roots, output_args=True, fence_float_ops=True)


x = vkml.tensor(np.ones((4,), np.float32))
n = vkml.tensor(np.ones((4,), np.int32))

# Python numbers are run-time inputs read from the scalar table (the first argument, ADR
# 0017): the compiler cannot fold 0.5, so the sum is not fenced. The subtracted 0.25 still
# reaches the subtraction as `bits ^ (fence << 1)`, as every right operand of a subtraction
# does (below). The fence is the last argument.
# CHECK-LABEL: func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32> {iree.abi.output = 0 : index}, %fence: tensor<i32>)
# CHECK: %[[HALF:.*]] = stablehlo.slice %arg0 [0:1:1]
# CHECK: %[[HALF_S:.*]] = stablehlo.reshape %[[HALF]]
# CHECK: %[[HALF_ALL:.*]] = stablehlo.broadcast_in_dim %[[HALF_S]]
# CHECK-NOT: stablehlo.xor
# CHECK: %[[SUM:.*]] = stablehlo.add %arg1, %[[HALF_ALL]]
# CHECK: %[[QUARTER:.*]] = stablehlo.slice %arg0 [1:2:1]
# CHECK: %[[QUARTER_S:.*]] = stablehlo.reshape %[[QUARTER]]
# CHECK: %[[QUARTER_ALL:.*]] = stablehlo.broadcast_in_dim %[[QUARTER_S]]
# CHECK: %[[QUARTER_BITS:.*]] = stablehlo.bitcast_convert %[[QUARTER_ALL]]
# CHECK: %[[SHIFTED:.*]] = stablehlo.shift_left %fence,
# CHECK: %[[SHIFTED_ALL:.*]] = stablehlo.broadcast_in_dim %[[SHIFTED]]
# CHECK: %[[QUARTER_MIX:.*]] = stablehlo.xor %[[QUARTER_BITS]], %[[SHIFTED_ALL]]
# CHECK: %[[QUARTER_HID:.*]] = stablehlo.bitcast_convert %[[QUARTER_MIX]]
# CHECK: %[[DIFF:.*]] = stablehlo.subtract %[[SUM]], %[[QUARTER_HID]]
# CHECK: return %[[DIFF]]
print(vulkan_mlir((x + 0.5) - 0.25))

# x - x: the right operand is `x ^ (fence << 1)`, never the left operand's value.
# CHECK-LABEL: func.func @main(%arg0: tensor<4xf32>,
# CHECK: %[[X_BITS:.*]] = stablehlo.bitcast_convert %arg0
# CHECK: %[[X_SHIFTED:.*]] = stablehlo.shift_left %fence,
# CHECK: %[[X_FENCE:.*]] = stablehlo.broadcast_in_dim %[[X_SHIFTED]]
# CHECK: %[[X_MIX:.*]] = stablehlo.xor %[[X_BITS]], %[[X_FENCE]]
# CHECK: %[[X_OTHER:.*]] = stablehlo.bitcast_convert %[[X_MIX]]
# CHECK: stablehlo.subtract %arg0, %[[X_OTHER]]
print(vulkan_mlir(x - x))

# A unary op's result is fenced: sqrt(x) * sqrt(x) must not become abs(x).
# CHECK-LABEL: func.func @main(%arg0: tensor<4xf32>,
# CHECK: %[[ROOT:.*]] = stablehlo.sqrt %arg0
# CHECK: %[[ROOT_BITS:.*]] = stablehlo.bitcast_convert %[[ROOT]]
# CHECK: %[[ROOT_MIX:.*]] = stablehlo.xor %[[ROOT_BITS]]
# CHECK: %[[ROOT_OUT:.*]] = stablehlo.bitcast_convert %[[ROOT_MIX]]
# CHECK: stablehlo.multiply %[[ROOT_OUT]], %[[ROOT_OUT]]
root = x.sqrt()
print(vulkan_mlir(root * root))

# A cast between int and float is fenced on the integer side too: int -> float -> int is not
# the identity.
# CHECK-LABEL: func.func @main(%arg0: tensor<4xi32>,
# CHECK: %[[F:.*]] = stablehlo.convert %arg0 : (tensor<4xi32>) -> tensor<4xf32>
# CHECK: %[[F_BITS:.*]] = stablehlo.bitcast_convert %[[F]]
# CHECK: %[[F_MIX:.*]] = stablehlo.xor %[[F_BITS]]
# CHECK: %[[F_OUT:.*]] = stablehlo.bitcast_convert %[[F_MIX]]
# CHECK: %[[I:.*]] = stablehlo.convert %[[F_OUT]] : (tensor<4xf32>) -> tensor<4xi32>
# CHECK: %[[I_MIX:.*]] = stablehlo.xor %[[I]], %{{.*}} : tensor<4xi32>
# CHECK: return %[[I_MIX]]
print(vulkan_mlir(n.astype(vkml.float32).astype(vkml.int32)))

# A maximum is a compare and a select: nothing to fold, so nothing fenced.
# CHECK-LABEL: func.func @main(%arg0: tensor<4xf32>,
# CHECK-NOT: %fence
# CHECK: return
print(vulkan_mlir(vkml.maximum(x, x[::-1])))
