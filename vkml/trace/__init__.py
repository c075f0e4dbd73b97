"""Capturing a function's graph once, with named inputs and outputs, to call it again.

``spec`` describes an input without data; ``capture(fn, *args)`` runs ``fn`` on input
placeholders and keeps the graph it builds as a ``Captured``: the inputs by parameter name,
the outputs by position or key, and every other leaf it reads (a tensor it closes over, a
parameter). Calling a ``Captured`` is one invocation on new inputs, with no graph built.
``opt.compile_step`` is built on it.
"""

from vkml.trace.capture import Argument, Captured, capture
from vkml.trace.input_spec import Spec, spec

__all__ = ["Argument", "Captured", "Spec", "capture", "spec"]
