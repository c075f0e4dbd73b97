"""vkml's MLIR passes, their registry, the compile pipeline and the compile cache."""

from vkml.passes.cache import CompileCache, default_cache
from vkml.passes.pipeline import Target, compile_module, run_passes
from vkml.passes.registry import PASSES, PIPELINE

__all__ = [
    "PASSES",
    "PIPELINE",
    "CompileCache",
    "Target",
    "compile_module",
    "default_cache",
    "run_passes",
]
