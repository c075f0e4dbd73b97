# RUN: %python %s | filecheck %s
# The GEMM contraction contract (docs/adr/0005-gemm-contraction.md): every matmul vkml emits
# accumulates in float32 at HIGHEST precision, whatever the input dtype; 16-bit operands go
# into the dot_general as they are, with a float32 result (each element is widened exactly as
# the matmul reads it), and 16-bit results are rounded once, after the contraction.
import numpy as np

import vkml

# CHECK-LABEL: func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x3xf32>) -> (tensor<4x3xf32>)
# CHECK: stablehlo.dot_general %arg0, %arg1, batching_dims = [] x [], contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
a = vkml.tensor(np.ones((4, 8), np.float32))
b = vkml.tensor(np.ones((8, 3), np.float32))
print(vkml.emit_mlir(a @ b))

# float16 operands, a float32 accumulator (a convert before the dot would be fused into it by
# IREE and raced through workgroup memory on Vulkan: tests/py/frontend/test_matmul_operands.py).
# CHECK-LABEL: func.func @main(%arg0: tensor<4x8xf16>, %arg1: tensor<8x3xf16>) -> (tensor<4x3xf16>)
# CHECK-NOT: stablehlo.convert %arg
# CHECK: %[[DOT16:.*]] = stablehlo.dot_general %arg0, %arg1, {{.*}} precision = [HIGHEST, HIGHEST] : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf32>
# CHECK: stablehlo.convert %[[DOT16]] : (tensor<4x3xf32>) -> tensor<4x3xf16>
h = vkml.tensor(np.ones((4, 8), np.float16))
k = vkml.tensor(np.ones((8, 3), np.float16))
print(vkml.emit_mlir(h @ k))

# bfloat16 the same way, with broadcast batch dimensions.
# CHECK-LABEL: func.func @main(%arg0: tensor<2x4x8xbf16>, %arg1: tensor<8x3xbf16>) -> (tensor<2x4x3xbf16>)
# CHECK: stablehlo.dot_general {{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, HIGHEST] : (tensor<2x4x8xbf16>, tensor<2x8x3xbf16>) -> tensor<2x4x3xf32>
# CHECK-NOT: -> tensor<2x4x3xbf16>{{.*}}dot_general
c = vkml.tensor(np.ones((2, 4, 8), np.float32), dtype="bfloat16")
d = vkml.tensor(np.ones((8, 3), np.float32), dtype="bfloat16")
print(vkml.emit_mlir(c @ d))
