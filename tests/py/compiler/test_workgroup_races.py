"""The workgroup-race check of IREE's Vulkan code (vkml.compiler.workgroup_races) and what
compile_module does with a racy module: compile it again with every transpose isolated, or
refuse it.

Found by the fuzz campaign (seed 14): ``argsort`` along axis 0 of a float16 (2, 3, 5) tensor,
realized beside an elementwise result of the same tensor, was wrong on lavapipe. IREE staged
the widened input in workgroup memory, each invocation writing a row and reading a column,
with no barrier between.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from numerics import assert_bit_exact

import vkml
from vkml.compiler import compile as compiling, workgroup_races
from vkml.compiler.target import vulkan_target
from vkml.errors import CompileError

needs_vulkan = importlib.import_module("frontend.test_vulkan_device").pytestmark

# IREE's code for the racy dispatch (trimmed): the first region writes rows, the second
# reads columns; the printer reuses the names %5-%8 in the second region.
RACY = """
  func.func @main_dispatch_0_elementwise_transpose_7x3_f32xi32() {
    %thread_id_x = gpu.thread_id x upper_bound 4
    %thread_id_y = gpu.thread_id y upper_bound 8
    %2 = arith.index_castui %thread_id_y : index to i32
    %alloc = memref.alloc() : memref<21xf32, #spirv.storage_class<Workgroup>>
    scf.if %3 {
      %5 = arith.index_castui %thread_id_x : index to i32
      scf.for %arg0 = %5 to %c7_i32 step %c4_i32  : i32 {
        %6 = arith.muli %2, %c7_i32 overflow<nsw> : i32
        %7 = arith.addi %arg0, %6 : i32
        %8 = arith.index_castui %7 : i32 to index
        %9 = memref.load %0[%8] : memref<?xf16, #spirv.storage_class<StorageBuffer>>
        %10 = arith.extf %9 : f16 to f32
        memref.store %10, %alloc[%8] : memref<21xf32, #spirv.storage_class<Workgroup>>
      }
    }
    scf.if %4 {
      %5 = arith.index_castui %thread_id_x : index to i32
      %6 = arith.muli %5, %c7_i32 overflow<nsw> : i32
      %7 = arith.addi %6, %2 : i32
      %8 = arith.index_castui %7 : i32 to index
      %10 = memref.load %alloc[%8] : memref<21xf32, #spirv.storage_class<Workgroup>>
      memref.store %10, %1[%8] : memref<?xf32, #spirv.storage_class<StorageBuffer>>
    }
    return
  }
"""

# Every float16 elementwise dispatch: each invocation reads back the element it wrote.
OWN_ELEMENT = """
  func.func @main_dispatch_1_elementwise_21_f32xf16() {
    %thread_id_x = gpu.thread_id x upper_bound 8
    %alloc = memref.alloc() : memref<8xf32, #spirv.storage_class<Workgroup>>
    scf.if %7 {
      %11 = memref.load %0[%10] : memref<?xf16, #spirv.storage_class<StorageBuffer>>
      %12 = arith.extf %11 : f16 to f32
      memref.store %12, %alloc[%thread_id_x] : memref<8xf32, #spirv.storage_class<Workgroup>>
      %13 = memref.load %alloc[%thread_id_x] : memref<8xf32, #spirv.storage_class<Workgroup>>
      %14 = arith.negf %13 : f32
    }
    return
  }
"""


def test_a_read_of_another_invocations_element_is_a_race() -> None:
    assert workgroup_races.racy_functions(RACY) == [
        "main_dispatch_0_elementwise_transpose_7x3_f32xi32"
    ]


def test_reading_back_ones_own_element_is_not_a_race() -> None:
    assert workgroup_races.racy_functions(OWN_ELEMENT) == []
    assert workgroup_races.racy_functions(RACY + OWN_ELEMENT) == [
        "main_dispatch_0_elementwise_transpose_7x3_f32xi32"
    ]


def test_a_barrier_or_an_unread_access_decides() -> None:
    synced = RACY.replace("    scf.if %4 {", "    gpu.barrier\n    scf.if %4 {")
    assert workgroup_races.racy_functions(synced) == []
    viewed = OWN_ELEMENT.replace(
        "      %14 = arith.negf %13 : f32",
        "      %v = memref.subview %alloc[0] [4] [1] : memref<8xf32, #spirv.storage_class<Workgroup>> to memref<4xf32>",
    )  # a use the check cannot follow: not proven safe
    assert workgroup_races.racy_functions(viewed) == ["main_dispatch_1_elementwise_21_f32xf16"]


def test_a_module_still_racy_with_transposes_isolated_is_refused(monkeypatch) -> None:
    seen = []

    def always_racy(directory):
        seen.append(directory)
        return ["main_dispatch_0_elementwise_transpose_7x3_f32xi32"]

    monkeypatch.setattr(workgroup_races, "racy_dispatches", always_racy)
    text = "func.func @main(%x: tensor<3x7xf32>) -> tensor<7x3xf32> {\n"
    text += "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<3x7xf32>) -> tensor<7x3xf32>\n"
    text += "  return %t : tensor<7x3xf32>\n}\n"
    with pytest.raises(CompileError, match="could read workgroup memory that another shader"):
        compiling.compile_module(text, vulkan_target("llvmpipe", True, loop_cap=65535))
    assert len(seen) == 2  # compiled as is, then with every transpose isolated


def _float16_graphs(device: vkml.Device, x0: np.ndarray) -> list[vkml.Tensor]:
    x = vkml.tensor(x0, device=device)
    sorted0 = vkml.take_along_axis(x, vkml.argsort(x, axis=0), axis=0)
    return [x.T + 1, -x, sorted0, vkml.abs(x)]


@needs_vulkan
@pytest.mark.parametrize("shape", [(3, 7), (5, 3), (2, 3, 5)])
def test_a_transposed_read_beside_an_elementwise_result_is_right(shape) -> None:
    """``x.T + 1`` with ``-x``, and the campaign's argsort along axis 0 with ``abs(x)``, for
    float16 ``x``: wrong on lavapipe before the check (rows of the transposed value read
    before they were written)."""
    rng = np.random.default_rng(14)
    x0 = rng.integers(-6, 7, size=shape).astype(np.float16)
    got = _float16_graphs(vkml.device("vulkan:0"), x0)
    vkml.realize(*got)
    want = _float16_graphs(vkml.reference, x0)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"value {k}")
