# RUN: %python %s | filecheck %s
# Sums are emitted as stablehlo.reduce and become the pairwise tree after vkml's passes.
import numpy as np

import vkml

x = vkml.tensor(np.ones((6, 4), np.float32))

# CHECK-LABEL: func.func @main(%arg0: tensor<6x4xf32>) -> (tensor<4xf32>)
# CHECK: stablehlo.constant dense<0x80000000> : tensor<f32>
# CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [0]
print(vkml.emit_mlir(x.sum(axis=0)))

# After the pipeline: padded from 6 to 8 rows with -0.0, then three halvings.
# CHECK-LABEL: func.func @main(%arg0: tensor<6x4xf32>) -> tensor<4xf32>
# CHECK-NOT: stablehlo.reduce
# CHECK: stablehlo.pad %arg0, %{{.*}}, low = [0, 0], high = [2, 0]
# CHECK-COUNT-3: stablehlo.add %{{.*}}, %{{.*}} : tensor<{{[421]}}x4xf32>
print(vkml.emit_mlir(x.sum(axis=0), passes=True))

# mean divides the pairwise sum by the count.
# CHECK-LABEL: func.func @main(%arg0: tensor<6x4xf32>) -> (tensor<6xf32>)
# CHECK: %[[SUM1:.*]] = stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
# CHECK: stablehlo.constant dense<0x40800000> : tensor<f32>
# CHECK: stablehlo.divide %[[SUM1]], %{{.*}} : tensor<6xf32>
print(vkml.emit_mlir(x.mean(axis=1)))
