"""What users hold: the op functions that record nodes (``ops``, ``views``), ``Tensor``
built on them, the public functions, autograd and random numbers."""
