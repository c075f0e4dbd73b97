"""The op emitters: one function per op of the table, ``emit(builder, operands, out_type,
attrs) -> Value``, writing the op's StableHLO with ``vkml.dialect``'s builder.

``common`` holds the emitters of most ops and their factories; the others are the ops whose
emission is a recipe of its own (``accurate``: vkml's own expm1, log1p, tan, atan2, ...;
``floor_division``, ``ieee_pow``, the pairwise ``reduce`` trees, ``scan``, ``sort``,
``gather``). An ``OpDef`` names its emitter; nothing below ``vkml.ops`` imports one.
"""
