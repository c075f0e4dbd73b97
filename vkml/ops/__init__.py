"""The ops: each primitive op defined once (``spec.OpDef``), by family (``elementwise``,
``movement``, ``creation``, ``contraction``, ``reduce``), gathered in ``registry.OPS``; their
NumPy implementations for the reference device are ``reference``."""
