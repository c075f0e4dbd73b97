"""The machinery of the MLIR vkml emits: tensor types, a function builder, module and
function text, rewrites, parsing. The emitters of the ops, written with it, are
``vkml.ops.emitters``.

This is the only package that imports ``iree.compiler`` (through ``vkml.dialect.ir``).
Emission itself is text: the module text is a pure function of the graph's structure, so its
hash can key the compile cache.
"""
