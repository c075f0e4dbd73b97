"""The graph builder of seed 003: a Python function's ``if``, ``for``, ``while`` and ``match`` on
device values recorded as control flow inside one compiled graph (``Graph.builder``).

``rewrite`` turns the constructs into recorder calls once, ``source`` compiles the result
back into a function, ``recorder`` decides each construct (Python conditions at record time,
device conditions as selects), ``graph`` holds what was recorded and launches it.
"""
