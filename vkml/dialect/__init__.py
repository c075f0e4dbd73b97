"""The MLIR vkml emits: tensor types, a function builder, one emitter per op, parsing.

This is the only package that imports ``iree.compiler`` (through ``vkml.dialect.ir``).
Emission itself is text: the module text is a pure function of the graph's structure, so its
hash can key the compile cache.
"""
