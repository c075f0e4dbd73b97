"""Conditions of a rewritten builder function: what decides an ``if``, ``while`` or ``match``.

A Python value is a Python condition, decided once while recording. A one-element ``bool`` or
``uint32`` tensor is a **device condition** (``condition``). ``not``, ``and`` and ``or`` in
a test are calls here (``not_``, ``and_``, ``or_``; ``vkml.builder.ast_rewrite``): Python's
meaning for Python values, a device condition once an operand is one. The generated code
calls these through ``vkml.builder.recorder``, which re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vkml.dtypes import bool_, uint32
from vkml.errors import BuilderError
from vkml.frontend import functions, op_functions
from vkml.frontend.tensor import Tensor


def is_device(x: Any) -> bool:
    return isinstance(x, Tensor)


def condition(test: Tensor, line: int) -> Tensor:
    """``test`` as a 0-d bool tensor: a device condition."""
    if test.dtype not in (bool_, uint32) or test.size != 1:
        raise BuilderError(
            f"line {line}: the condition is a {test.dtype.name}{list(test.shape)} tensor; a "
            f"device condition is a one-element bool or uint32 tensor (e.g. (x > 0).all() is "
            f"not one: compare a reduced value, x.amax() > 0)"
        )
    flat = test.reshape(())
    return flat if test.dtype is bool_ else flat != 0


def python_condition(test: Any, line: int) -> Any:
    """``test``, which must be a Python value: the construct at ``line`` cannot be recorded
    for a device condition as written."""
    if is_device(test):
        raise BuilderError(
            f"line {line}: a device condition cannot choose a 'return' or a match pattern "
            f"that is not a literal; assign the result in both arms and return after the "
            f"'if' (or match on literal values)"
        )
    return test


def equals(subject: Any, case: Any) -> Any:
    """``subject == case`` for a ``match``: a Python bool, or a device condition."""
    return subject == case


def any_of(*tests: Any) -> Any:
    """One of ``tests`` holds (a ``case A | B``)."""
    if not any(is_device(t) for t in tests):
        return any(tests)
    out = tests[0]
    for t in tests[1:]:
        out = _or(out, t)
    return out


def not_(test: Any, line: int) -> Any:
    """``not test``: Python's for a Python value, a device condition for a device one."""
    if not is_device(test):
        return not test
    return op_functions.equal(condition(test, line), False)


def and_(line: int, first: Any, *rest: Callable[[], Any]) -> Any:
    """``first and rest...``: Python's value (and short-circuit) while the operands are
    Python values; once one is on the device, a device condition that holds where all do.
    An operand after a device one is always evaluated (both arms of a device condition
    are recorded)."""
    out = first
    for operand in rest:
        if not is_device(out):
            if not out:
                return out
            out = operand()
            continue
        following = operand()
        if not is_device(following):
            out = condition(out, line) if following else False
        else:
            out = functions.where(condition(out, line), condition(following, line), False)
    return condition(out, line) if is_device(out) else out


def or_(line: int, first: Any, *rest: Callable[[], Any]) -> Any:
    """``first or rest...`` (see ``and_``): a device condition that holds where any does."""
    out = first
    for operand in rest:
        if not is_device(out):
            if out:
                return out
            out = operand()
            continue
        following = operand()
        if not is_device(following):
            out = True if following else condition(out, line)
        else:
            out = functions.where(condition(out, line), True, condition(following, line))
    return condition(out, line) if is_device(out) else out


def running(stop: Any, skip: Any) -> Any:
    """Neither a ``break`` nor a ``continue`` has happened this turn."""
    if not is_device(stop) and not is_device(skip):
        return not stop and not skip
    return op_functions.equal(_or(stop, skip), False)


def _or(a: Any, b: Any) -> Any:
    """``a or b`` of conditions, one of them on the device: a bool tensor (or True). Each
    node here is one more use of the flags of every turn before it, so none is spent on a
    Python operand."""
    if not is_device(a):
        return True if a else _flag(b)
    if not is_device(b):
        return True if b else _flag(a)
    return functions.where(a, True, _flag(b))


def _flag(x: Tensor) -> Tensor:
    return x if x.dtype is bool_ else op_functions.not_equal(x, 0)
