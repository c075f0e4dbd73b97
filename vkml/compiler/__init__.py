"""Compiling a graph: lowering to MLIR (``lower``), targets, the pipeline per target and IREE
(``compile``), the checks on IREE's output (``loop_budget``, ``push_constants``) and the cache."""
