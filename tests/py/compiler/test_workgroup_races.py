"""The workgroup-race check of IREE's Vulkan code (vkml.compiler.workgroup_races) and what
run_pipeline does with a racy module: compile it again with its transposes, broadcasts and
reverses reading stored values (vkml-isolate-relayouts), or refuse it.

Found by the fuzz campaign (seed 14): ``argsort`` along axis 0 of a float16 (2, 3, 5) tensor,
realized beside an elementwise result of the same tensor, was wrong on lavapipe. IREE staged
the widened input in workgroup memory, each invocation writing a row and reading a column,
with no barrier between.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.devices import needs_vulkan
from support.numerics import assert_bit_exact

import vkml
from vkml.compiler import compile as compiling, dispatch_dump, workgroup_races
from vkml.compiler.target import vulkan_target
from vkml.errors import CompileError

# IREE's code for the racy dispatch (trimmed): the first region writes rows, the second
# reads columns; the printer reuses the names %5-%8 in the second region.
RACY = """
  func.func @main_dispatch_0_elementwise_transpose_7x3_f32xi32() attributes {gpu.known_block_size = array<i32: 4, 8, 1>} {
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
  func.func @main_dispatch_1_elementwise_21_f32xf16() attributes {gpu.known_block_size = array<i32: 8, 1, 1>} {
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


def test_a_barrier_between_the_write_and_the_read_synchronizes() -> None:
    synced = RACY.replace("    scf.if %4 {", "    gpu.barrier\n    scf.if %4 {")
    assert workgroup_races.racy_functions(synced) == []


WG = "memref<8xf32, #spirv.storage_class<Workgroup>>"
OWN = f"      memref.store %12, %alloc[%thread_id_x] : {WG}\n"


def _racy_after(text: str, change: tuple[str, str]) -> list[str]:
    """The racy functions of ``text`` with ``change`` (old, new) made; old must be in it."""
    old, new = change
    assert old in text
    return workgroup_races.racy_functions(text.replace(old, new))


# What the check must not take for safe (each found in review; the check fails closed)
@pytest.mark.parametrize(
    "change",
    [
        ("%alloc[%thread_id_x]", "%alloc[%c0]"),  # one element for every invocation
        (OWN, OWN + f"      memref.store %12, %alloc[%j] : {WG}\n"),  # a second write
        ("%alloc[%thread_id_x]", "%alloc[%arg0]"),  # a counter every invocation shares
        ("%14 = arith.negf %13 : f32", f"%v = memref.subview %alloc[0] [4] [1] : {WG} to {WG}"),
        ("      %13 = memref.load %alloc[%thread_id_x]", "      %13 = memref.load %alloc[%c1]"),
    ],
    ids=["constant-index", "second-write", "shared-counter", "subview", "other-element"],
)  # fmt: skip
def test_what_the_check_cannot_prove_is_a_race(change: tuple[str, str]) -> None:
    assert _racy_after(OWN_ELEMENT, change) == ["main_dispatch_1_elementwise_21_f32xf16"]


FOREIGN = OWN_ELEMENT.replace(
    "%13 = memref.load %alloc[%thread_id_x]", "%13 = memref.load %alloc[%c1]"
)


@pytest.mark.parametrize(
    "change",
    [
        ("memref<8xf32, #spirv", "memref<8xvector<4xf32>, #spirv"),  # a vector element type
        ("memref.alloc() :", "memref.alloc() {alignment = 64 : i64} :"),
        ("    %alloc = ", "    gpu.barrier\n    %alloc = "),  # a barrier before the write
    ],
    ids=["vector-type", "alignment", "barrier-before"],
)
def test_a_read_of_another_element_is_found_however_the_buffer_is_spelled(
    change: tuple[str, str],
) -> None:
    assert _racy_after(FOREIGN, change) == ["main_dispatch_1_elementwise_21_f32xf16"]


def test_a_barrier_in_another_region_or_a_string_does_not_synchronize() -> None:
    in_if = RACY.replace(
        "    scf.if %4 {", "    scf.if %4 {\n      gpu.barrier\n    }\n    scf.if %4 {"
    )
    assert workgroup_races.racy_functions(in_if) != []
    quoted = RACY.replace(
        "    scf.if %4 {", '    %q = "x.y"() {s = "gpu.barrier"} : () -> i32\n    scf.if %4 {'
    )
    assert workgroup_races.racy_functions(quoted) != []
    helper = RACY + "  func.func private @helper() {\n    gpu.barrier\n    return\n  }\n"
    assert "main_dispatch_0_elementwise_transpose_7x3_f32xi32" in workgroup_races.racy_functions(
        helper
    )


# IREE's code for a float32 matmul on ``ampere`` (4096^3, trimmed): each turn stores the
# tile loaded the turn before, waits, reads it, and waits at the top of the next turn before
# storing again; the last tile is stored after the loop from the loop's results (``%33#4``).
PIPELINED = """
  func.func @main_dispatch_0_matmul_4096x4096x4096_f32() attributes {gpu.known_block_size = array<i32: 32, 8, 1>} {
    %thread_id_x = gpu.thread_id x upper_bound 32
    %thread_id_y = gpu.thread_id y upper_bound 8
    %0 = arith.index_castui %thread_id_y : index to i32
    %alloc_0 = memref.alloc() : memref<288xvector<4xf32>, #spirv.storage_class<Workgroup>>
    %33:2 = scf.for %arg0 = %c0_i32 to %c4064_i32 step %c32_i32 iter_args(%arg1 = %cst, %arg5 = %17) -> (vector<4xf32>, vector<4xf32>)  : i32 {
      gpu.barrier memfence [#gpu.address_space<workgroup>]
      %632 = arith.addi %0, %c9_i32 : i32
      %633 = arith.index_castui %632 : i32 to index
      memref.store %arg5, %alloc_0[%633] : memref<288xvector<4xf32>, #spirv.storage_class<Workgroup>>
      gpu.barrier memfence [#gpu.address_space<workgroup>]
      %643 = arith.muli %0, %c36_i32 overflow<nsw> : i32
      %644 = arith.index_castui %643 : i32 to index
      %645 = memref.load %alloc_0[%644] : memref<288xvector<4xf32>, #spirv.storage_class<Workgroup>>
      %646 = arith.addf %arg1, %645 : vector<4xf32>
      %1221 = memref.load %4[%644] : memref<?xvector<4xf32>, #spirv.storage_class<StorageBuffer>>
      scf.yield %646, %1221 : vector<4xf32>, vector<4xf32>
    }
    gpu.barrier memfence [#gpu.address_space<workgroup>]
    %36 = arith.index_castui %0 : i32 to index
    memref.store %33#1, %alloc_0[%36] : memref<288xvector<4xf32>, #spirv.storage_class<Workgroup>>
    gpu.barrier memfence [#gpu.address_space<workgroup>]
    %48 = memref.load %alloc_0[%c0] : memref<288xvector<4xf32>, #spirv.storage_class<Workgroup>>
    return
  }
"""
TOP = "      gpu.barrier memfence [#gpu.address_space<workgroup>]\n      %632"


def test_a_tile_stored_read_and_waited_for_each_turn_is_not_a_race() -> None:
    """IREE's matmuls on NVIDIA targets: refused as racy until the check followed results
    named ``%33#1`` and barriers from one turn of a loop to the next (every float32 matmul of
    the digits demo and scripts/gpu/throughput.py was refused on ``ampere``)."""
    assert TOP in PIPELINED
    assert workgroup_races.racy_functions(PIPELINED) == []


@pytest.mark.parametrize(
    "change",
    [
        (TOP, "      %632"),  # the next turn's store could overwrite a tile still being read
        ("    gpu.barrier memfence [#gpu.address_space<workgroup>]\n    %48", "    %48"),
        ("%33:2 = scf.for %arg0 = %c0_i32 to %c4064_i32 step %c32_i32", "%33:2 = scf.while"),
        ("    %36 = ", "    cf.br ^bb1\n    %36 = "),
    ],
    ids=["no-barrier-before-the-next-turn", "no-barrier-after-the-last-store", "while", "cf"],
)
def test_a_tile_without_every_wait_is_a_race(change: tuple[str, str]) -> None:
    assert _racy_after(PIPELINED, change) == ["main_dispatch_0_matmul_4096x4096x4096_f32"]


@pytest.mark.parametrize("shape", [(64, 128, 128), (4096, 4096, 4096)])
def test_float32_matmuls_compile_for_nvidia(shape: tuple[int, int, int]) -> None:
    """Compiled (no device needed) for ``ampere``, the target of NVIDIA GPUs: IREE's tiled
    matmul is not taken for a race (the digits demo's and the 4096^3 benchmark's)."""
    m, k, n = shape
    a = vkml.tensor(np.ones((m, k), np.float32))
    b = vkml.tensor(np.ones((k, n), np.float32))
    assert compiling.run_pipeline(vkml.emit_mlir(a @ b), vulkan_target("ampere", True))


# IREE's code for a bfloat16 value broadcast along a row (fuzz seed 19, trimmed): every
# invocation loads the workgroup's element, widens it, stores it at [0] and reads it back
ALIKE = """
  func.func @main_dispatch_1_elementwise_broadcast_5x5_f32xbf16xbf16() attributes {gpu.known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %c5_i32 = arith.constant 5 : i32
    %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">]>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<?xi16, #spirv.storage_class<StorageBuffer>>{%c5}
    %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, Indirect>]>) binding(1) alignment(64) offset(%c0) flags(Indirect) : memref<?xf32, #spirv.storage_class<StorageBuffer>>{%c5}
    %thread_id_x = gpu.thread_id x upper_bound 32
    %2 = arith.index_castui %thread_id_x : index to i32
    %3 = arith.cmpi slt, %2, %c5_i32 : i32
    %workgroup_id_x = hal.interface.workgroup.id[0] upper_bound 5 : index
    %alloc = memref.alloc() alignment = 64 : memref<1xf32, #spirv.storage_class<Workgroup>>
    %4 = memref.load %0[%workgroup_id_x] : memref<?xi16, #spirv.storage_class<StorageBuffer>>
    %5 = arith.bitcast %4 : i16 to bf16
    %6 = arith.extf %5 : bf16 to f32
    memref.store %6, %alloc[%c0] : memref<1xf32, #spirv.storage_class<Workgroup>>
    scf.if %3 {
      %7 = memref.load %alloc[%c0] : memref<1xf32, #spirv.storage_class<Workgroup>>
      memref.store %7, %1[%thread_id_x] : memref<?xf32, #spirv.storage_class<StorageBuffer>>
    }
    return
  }
"""
ALIKE_STORE = "    memref.store %6, %alloc[%c0] : memref<1xf32, #spirv.storage_class<Workgroup>>\n"


def test_a_value_every_invocation_stores_alike_is_not_a_race() -> None:
    """Refused on lavapipe until the check followed values that do not depend on the
    invocation: each stores the same value at the same place before reading it back."""
    assert ALIKE_STORE in ALIKE
    assert workgroup_races.racy_functions(ALIKE) == []


@pytest.mark.parametrize(
    "change",
    [
        ("%4 = memref.load %0[%workgroup_id_x]", "%4 = memref.load %0[%thread_id_x]"),
        (ALIKE_STORE, "    scf.if %3 {\n  " + ALIKE_STORE + "    }\n"),
        (ALIKE_STORE, ALIKE_STORE + ALIKE_STORE.replace("%6", "%5")),
        (ALIKE_STORE, ALIKE_STORE.replace("%alloc[%c0]", "%alloc[%2]")),
        ("%1[%thread_id_x]", "%0[%thread_id_x]"),
        ("%6 = arith.extf %5", "%6 = memref.atomic_rmw addf %5"),
    ],
    ids=["per-thread-value", "stored-in-a-branch", "second-store", "per-thread-index",
         "read-from-written-buffer", "atomic"],
)  # fmt: skip
def test_a_value_not_stored_alike_by_every_invocation_is_a_race(
    change: tuple[str, str],
) -> None:
    assert _racy_after(ALIKE, change) == ["main_dispatch_1_elementwise_broadcast_5x5_f32xbf16xbf16"]


# The fuzz case reduced: argsort's keys of a transposed float16 input, and -x
SORT_KEYS_BESIDE_A_NEGATION = """
func.func @main(%arg0: tensor<3x7xf16>) -> (tensor<7x3xi32>, tensor<3x7xf16>) {
    %v0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<3x7xf16>) -> tensor<7x3xf16>
    %v1 = stablehlo.convert %v0 : (tensor<7x3xf16>) -> tensor<7x3xf32>
    %v2 = stablehlo.bitcast_convert %v1 : (tensor<7x3xf32>) -> tensor<7x3xi32>
    %v3 = stablehlo.constant dense<2147483647> : tensor<7x3xi32>
    %v4 = stablehlo.and %v2, %v3 : tensor<7x3xi32>
    %v5 = stablehlo.constant dense<0> : tensor<7x3xi32>
    %v6 = stablehlo.compare LT, %v2, %v5, SIGNED : (tensor<7x3xi32>, tensor<7x3xi32>) -> tensor<7x3xi1>
    %v7 = stablehlo.xor %v2, %v3 : tensor<7x3xi32>
    %v8 = stablehlo.select %v6, %v7, %v2 : tensor<7x3xi1>, tensor<7x3xi32>
    %v9 = stablehlo.compare EQ, %v4, %v5, SIGNED : (tensor<7x3xi32>, tensor<7x3xi32>) -> tensor<7x3xi1>
    %v10 = stablehlo.select %v9, %v5, %v8 : tensor<7x3xi1>, tensor<7x3xi32>
    %v11 = stablehlo.constant dense<2139095040> : tensor<7x3xi32>
    %v12 = stablehlo.compare GT, %v4, %v11, SIGNED : (tensor<7x3xi32>, tensor<7x3xi32>) -> tensor<7x3xi1>
    %v13 = stablehlo.select %v12, %v3, %v10 : tensor<7x3xi1>, tensor<7x3xi32>
    %v14 = stablehlo.constant dense<2147483647> : tensor<i32>
    %v15 = stablehlo.pad %v13, %v14, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<7x3xi32>, tensor<i32>) -> tensor<7x4xi32>
    %v66 = stablehlo.convert %arg0 : (tensor<3x7xf16>) -> tensor<3x7xf32>
    %v67 = stablehlo.negate %v66 : tensor<3x7xf32>
    %v68 = stablehlo.convert %v67 : (tensor<3x7xf32>) -> tensor<3x7xf16>
    return %v13, %v68 : tensor<7x3xi32>, tensor<3x7xf16>
}
"""


def test_iree_still_writes_the_code_the_check_reads(tmp_path) -> None:
    """Compiled (no device needed) for lavapipe: the check finds the race of the fuzz case in
    IREE's own output, so an IREE that stopped writing it, or wrote it otherwise, fails here
    instead of letting every module through."""
    target = vulkan_target("llvmpipe", True, loop_cap=65535)
    compiling._iree(SORT_KEYS_BESIDE_A_NEGATION, target, dispatch_dump.dump_flags(tmp_path))
    racy = workgroup_races.racy_dispatches(tmp_path)
    assert racy and all("transpose" in name for name in racy)


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
        compiling.run_pipeline(text, vulkan_target("llvmpipe", True, loop_cap=65535))
    assert len(seen) == 2  # compiled as is, then with the relayouts isolated


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


# IREE's code for a small f32 matmul on lavapipe (trimmed): a 1x8x1 workgroup whose every
# invocation accumulates the whole row in workgroup memory, reading no thread id
UNIFORM = """
  spirv.resource_limits<subgroup_size = 8, min_subgroup_size = 8>
  func.func @main_dispatch_15_matmul_16x7x5_f32() attributes {gpu.known_block_size = array<i32: 1, 8, 1>} {
    %alloc = memref.alloc() : memref<8xf32, #spirv.storage_class<Workgroup>>
    scf.for %arg0 = %c0_i32 to %c8_i32 step %c1_i32  : i32 {
      %8 = arith.index_castui %arg0 : i32 to index
      memref.store %cst, %alloc[%8] : memref<8xf32, #spirv.storage_class<Workgroup>>
    }
    scf.for %arg0 = %c0_i32 to %c8_i32 step %c1_i32  : i32 {
      %8 = arith.index_castui %arg0 : i32 to index
      %19 = memref.load %alloc[%8] : memref<8xf32, #spirv.storage_class<Workgroup>>
      %21 = arith.addf %19, %20 : f32
      memref.store %21, %alloc[%8] : memref<8xf32, #spirv.storage_class<Workgroup>>
    }
    return
  }
"""


def test_one_subgroup_doing_the_same_work_is_not_a_race() -> None:
    """Every invocation runs the same code on the same data as one subgroup: the same values
    are read and written together. More invocations than a subgroup, or a thread id read,
    and the check cannot say so."""
    assert workgroup_races.racy_functions(UNIFORM) == []
    name = "main_dispatch_15_matmul_16x7x5_f32"
    assert workgroup_races.racy_functions(UNIFORM.replace("1, 8, 1>", "1, 16, 1>")) == [name]
    with_id = UNIFORM.replace(
        "    %alloc =", "    %t = gpu.thread_id y upper_bound 8\n    %alloc ="
    )
    assert workgroup_races.racy_functions(with_id) == [name]
