"""vkml benchmarks beside NumPy, PyTorch, JAX and raw IREE: run ``benchmarks/run.py``."""
