"""Every ``iree.compiler`` import vkml makes goes through this module."""

from __future__ import annotations

from iree.compiler import ir, passmanager
from iree.compiler.tools import CompilerToolError, compile_str
from iree.compiler.version import VERSION as COMPILER_VERSION

__all__ = [
    "COMPILER_VERSION",
    "CompilerToolError",
    "compile_str",
    "ir",
    "parse_module",
    "passmanager",
]


def parse_module(text: str, context: ir.Context) -> ir.Module:
    """Parse MLIR ``text`` in ``context`` (which has every IREE input dialect registered)."""
    return ir.Module.parse(text, context)
