"""What the builder's rewrite reads and writes: small queries and constructors of Python's
``ast``, shared by the constructs of ``vkml.builder.ast_rewrite``."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Sequence
from typing import Any

from vkml.builder import recorder

RECORDER = "__vkml__"
BREAK, CONTINUE = "__vkml_break", "__vkml_continue"


def assigned(statements: Sequence[ast.stmt]) -> list[str]:
    """The names ``statements`` bind, in first-binding order, not looking inside nested
    functions, classes, lambdas or comprehensions (their names are their own)."""
    found: dict[str, None] = {}
    stack: list[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = None
            continue
        if isinstance(
            node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found[node.id] = None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found[(alias.asname or alias.name).split(".")[0]] = None
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return [n for n in found if not n.startswith("__vkml")]


def with_flags(names: list[str], node: ast.If) -> list[str]:
    """``names`` and the loop flags the ``if`` may set: a ``break`` or ``continue`` in it (not in
    a loop of its own), or a flag an inner rewrite already set."""
    found: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Break):
            found.add(BREAK)
        elif isinstance(current, ast.Continue):
            found.add(CONTINUE)
        elif isinstance(current, ast.Name) and current.id in (BREAK, CONTINUE):
            found.add(current.id)
        elif isinstance(current, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return [*names, *(f for f in (BREAK, CONTINUE) if f in found)]


def may_leave(node: ast.stmt) -> bool:
    """Whether ``node`` (before rewriting) can break or continue the loop it is in."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Break, ast.Continue)):
            return True
        if (
            isinstance(
                current,
                (
                    ast.For,
                    ast.While,
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.ClassDef,
                    ast.Lambda,
                ),
            )
            and current is not node
        ):
            continue  # a nested loop's break is its own
        stack.extend(ast.iter_child_nodes(current))
    return False


def returns(statements: Sequence[ast.stmt]) -> bool:
    stack: list[ast.AST] = list(statements)
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Return):
            return True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return False


def literal_pattern(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchValue):
        return isinstance(pattern.value, (ast.Constant, ast.UnaryOp))
    if isinstance(pattern, ast.MatchSingleton):
        return True
    if isinstance(pattern, ast.MatchOr):
        return all(literal_pattern(p) for p in pattern.patterns)
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is None


def case_value(pattern: ast.pattern) -> ast.expr:
    """The value a literal case compares with: ``case 3`` or ``case None``."""
    if isinstance(pattern, ast.MatchValue):
        return pattern.value
    if isinstance(pattern, ast.MatchSingleton):
        return ast.Constant(pattern.value)
    raise AssertionError(f"not a literal pattern: {ast.dump(pattern)}")


def function_node(name: str, params: Sequence[str], body: list[ast.stmt]) -> ast.FunctionDef:
    """``def load_name(params): body`` as an AST node (no position yet)."""
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p) for p in params],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )
    node = ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None)
    if sys.version_info >= (3, 12):
        setattr(node, "type_params", [])  # noqa: B010 - a field Python 3.11's ast lacks
    return node


def load_name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def recorder_call(helper: Callable[..., Any], *args: ast.expr) -> ast.Call:
    """A call of ``helper``, a function of ``vkml.builder.recorder``, from generated code (a
    reference, not a name: mypy checks that it exists)."""
    name = helper.__name__
    return ast.Call(ast.Attribute(load_name(RECORDER), name, ast.Load()), list(args), [])


def assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)


def thunk(expr: ast.expr) -> ast.Lambda:
    """``lambda: expr``: an operand evaluated only if the recorder asks for it."""
    no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.copy_location(ast.Lambda(no_args, expr), expr)


def values(names: list[str]) -> ast.Tuple:
    """Each name's value, or the recorder's UNDEFINED where it is not bound yet."""
    no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    reads: list[ast.expr] = [
        recorder_call(recorder.value, ast.Lambda(no_args, load_name(n))) for n in names
    ]
    return ast.Tuple(reads, ast.Load())


def strings(names: list[str]) -> ast.Tuple:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def unpack(names: list[str], value: ast.Call) -> list[ast.stmt]:
    """``names = value``, then each name the construct left unbound deleted, so reading it
    fails as Python's own code would (``UnboundLocalError`` at the user's line)."""
    if not names:
        return [ast.Expr(value)]
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    unbind = [
        ast.If(
            recorder_call(recorder.unbound, load_name(n)),
            [ast.Delete([ast.Name(n, ast.Del())])],
            [],
        )
        for n in names
        if n not in (BREAK, CONTINUE)
    ]
    return [ast.Assign(targets=[target], value=value), *unbind]


def located(node: Any, where: ast.AST) -> Any:
    """``node`` and everything in it without a position, at ``where``'s line."""
    for child in ast.walk(node):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            ast.copy_location(child, where)
    return ast.copy_location(node, where)
