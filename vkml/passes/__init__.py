"""vkml's MLIR passes, their registry, the compile pipeline and the compile cache.

Nothing is imported here on purpose: ``vkml.passes.target`` is light, while the pipeline and
the cache load the IREE compiler, which a machine that only runs compiled modules lacks.
"""
