# RUN: %python %s | filecheck %s
# The GEMM contraction contract (docs/adr/0005-gemm-contraction.md): every matmul vkml emits
# contracts float32 operands into a float32 accumulator at HIGHEST precision, whatever the
# input dtype; 16-bit results are rounded once, after the contraction.
import numpy as np

import vkml

# CHECK-LABEL: func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x3xf32>) -> (tensor<4x3xf32>)
# CHECK: stablehlo.dot_general %arg0, %arg1, batching_dims = [] x [], contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
a = vkml.tensor(np.ones((4, 8), np.float32))
b = vkml.tensor(np.ones((8, 3), np.float32))
print(vkml.emit_mlir(a @ b))

# float16 operands are widened first; the accumulator is float32.
# CHECK-LABEL: func.func @main(%arg0: tensor<4x8xf16>, %arg1: tensor<8x3xf16>) -> (tensor<4x3xf16>)
# CHECK: %[[WA:.*]] = stablehlo.convert %arg0 : (tensor<4x8xf16>) -> tensor<4x8xf32>
# CHECK: %[[WB:.*]] = stablehlo.convert %arg1 : (tensor<8x3xf16>) -> tensor<8x3xf32>
# CHECK: %[[DOT16:.*]] = stablehlo.dot_general %[[WA]], %[[WB]], {{.*}} precision = [HIGHEST, HIGHEST] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
# CHECK: stablehlo.convert %[[DOT16]] : (tensor<4x3xf32>) -> tensor<4x3xf16>
h = vkml.tensor(np.ones((4, 8), np.float16))
k = vkml.tensor(np.ones((8, 3), np.float16))
print(vkml.emit_mlir(h @ k))

# bfloat16 the same way, with broadcast batch dimensions.
# CHECK-LABEL: func.func @main(%arg0: tensor<2x4x8xbf16>, %arg1: tensor<8x3xbf16>) -> (tensor<2x4x3xbf16>)
# CHECK: stablehlo.dot_general {{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, HIGHEST] : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
# CHECK-NOT: dot_general {{.*}}bf16
c = vkml.tensor(np.ones((2, 4, 8), np.float32), dtype="bfloat16")
d = vkml.tensor(np.ones((8, 3), np.float32), dtype="bfloat16")
print(vkml.emit_mlir(c @ d))
