"""vkml's MLIR passes (one file each), their registry and the runner ``pipeline.run_passes``.

What compiles a module for a target (the pipeline per target, IREE, the cache) is
``vkml.compiler``.
"""
