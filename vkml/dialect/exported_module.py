"""Whole modules for ahead-of-time artefacts: globals, several functions, metadata.

A module vkml compiles for ``realize`` holds one function whose leaves are arguments
(``FunctionBuilder.module_text``). An exported module (``vkml.aot``) holds several public
functions (``FunctionBuilder.function_text``), the globals they read (parameters from an
IREE parameter archive, the multiply fence) and a metadata function; this module spells
those parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vkml.dialect.fusion_stops import SIGNLESS
from vkml.dialect.run_time_fence import FENCE_GLOBAL
from vkml.dialect.types import TensorType, reflection_attr, string_attr

# The multiply fence of an exported module (``FunctionBuilder._unfusable``) is the mutable
# global FENCE_GLOBAL holding 0. This function, which nothing calls, stores into it, so IREE
# must treat it as mutable and cannot fold the 0 in. (A function argument would make every
# caller pass it; an optimization barrier on a constant cost a queue allocation and a host
# wait per call in IREE's Vulkan HAL program, counted in the compiled module.)
FENCE_STORE = "__vkml_fence"
METADATA_FUNCTION = "__vkml_metadata"


def global_type(ttype: TensorType) -> TensorType:
    """The type a global of ``ttype`` is declared with: an unsigned one as its signless bits
    (IREE 3.13 cannot legalize ``util.global.load`` of a ``ui32`` tensor), read back through
    a bit cast (``FunctionBuilder.global_load``)."""
    return ttype.with_dtype(SIGNLESS.get(ttype.dtype, ttype.dtype))


def parameter_global(symbol: str, scope: str, key: str, ttype: TensorType) -> str:
    """A global whose value is entry ``key`` of the parameter archive given for ``scope``."""
    return (
        f"  util.global private @{symbol} = "
        f"#flow.parameter.named<{string_attr(scope)}::{string_attr(key)}> : {global_type(ttype)}"
    )


def fence_parts() -> list[str]:
    """The fence global and the function that keeps it mutable."""
    return [
        f"  util.global private mutable @{FENCE_GLOBAL} = dense<0> : tensor<i32>",
        (
            f"  func.func @{FENCE_STORE}(%value: tensor<i32>) {{\n"
            f"    util.global.store %value, @{FENCE_GLOBAL} : tensor<i32>\n"
            f"    return\n  }}"
        ),
    ]


def metadata_function(entries: Mapping[str, str]) -> str:
    """An empty public function carrying module-wide metadata in its reflection: IREE's Python
    runtime reads a function's reflection, not the module's attributes."""
    return (
        f"  func.func @{METADATA_FUNCTION}() attributes {{{reflection_attr(entries)}}} {{\n"
        f"    return\n  }}"
    )


def module(name: str, parts: Iterable[str]) -> str:
    """A module named ``name`` holding ``parts`` (globals and functions, in order)."""
    body = "\n".join(parts)
    return f"module @{name} {{\n{body}\n}}\n"
