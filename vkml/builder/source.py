"""A builder function's source, rewritten once (``vkml.builder.ast_rewrite``) and compiled back
into a function that shares the original's globals and closure cells.

The rewritten code keeps the original file name and line numbers, so a traceback through it
points at the user's lines. Its only new free variable is the recorder, ``__vkml__``.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable
from typing import Any

from vkml.builder import recorder
from vkml.builder.ast_rewrite import BuilderSyntaxError, rewrite
from vkml.builder.syntax import RECORDER, function_node


def rewritten(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its ``if``, ``while``, ``for`` and ``match`` recorded by ``vkml.builder``.

    Raises:
        BuilderSyntaxError: ``fn``'s source cannot be read (a lambda, a function typed into
            the interactive prompt) or holds a construct the builder cannot record.
    """
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"Graph.builder: expected a Python function, got {type(fn).__name__}")
    if fn.__name__ == "<lambda>":
        raise BuilderSyntaxError("Graph.builder needs a function defined with 'def', not a lambda")
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise BuilderSyntaxError(
            f"Graph.builder cannot read the source of {fn.__qualname__} ({exc}); define it in a file"
        ) from exc
    filename = fn.__code__.co_filename
    tree = ast.parse(textwrap.dedent("".join(lines)), filename=filename)
    ast.increment_lineno(tree, first - 1)
    freevars = fn.__code__.co_freevars
    factory = _factory(rewrite(tree, filename), freevars)
    code = compile(factory, filename, "exec")
    namespace: dict[str, Any] = {}
    exec(code, fn.__globals__, namespace)  # noqa: S102 - the user's own function, rewritten
    inner = namespace["__vkml_factory"](recorder, *[None] * len(freevars)).__code__
    cells = dict(zip(freevars, fn.__closure__ or ()))
    cells[RECORDER] = types.CellType(recorder)
    closure = tuple(cells[name] for name in inner.co_freevars)
    made = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__wrapped__ = fn  # type: ignore[attr-defined]
    return made


def _factory(tree: ast.Module, freevars: tuple[str, ...]) -> ast.Module:
    """``def __vkml_factory(__vkml__, <freevars>): <the function>; return <it>``: compiled,
    its inner code object has the original's free variables plus the recorder."""
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    body: list[ast.stmt] = [function, ast.Return(ast.Name(function.name, ast.Load()))]
    factory = function_node("__vkml_factory", [RECORDER, *freevars], body)
    ast.copy_location(factory, function)
    return ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
