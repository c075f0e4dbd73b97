"""The one rewrite of a builder function: ``if``, ``while``, ``for`` and ``match`` become calls
on the recorder (``vkml.builder.recorder``); everything else is left as it was.

Each construct's bodies become nested functions of the variables they assign, which they
take as parameters and return, so the recorder can run a body once (a Python condition) or
both arms (a device condition) and merge what they assigned. In a loop body ``break`` and
``continue`` set flags (``__vkml_break``, ``__vkml_continue``) and the statements after one
run under a condition on them, so a device ``break`` is a device condition like any other.

Generated statements carry the line of the statement they replace, so an error inside the
user's code points at the user's line.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Sequence
from typing import Any

RECORDER = "__vkml__"
BREAK, CONTINUE = "__vkml_break", "__vkml_continue"


class BuilderSyntaxError(SyntaxError):
    """A construct the builder cannot record, with the line it is on."""


def rewrite(tree: ast.Module, filename: str) -> ast.Module:
    """``tree`` (one function definition) with its control flow turned into recorder calls."""
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        raise BuilderSyntaxError("a builder must decorate a plain function (def, not async)")
    declared = {
        n
        for node in ast.walk(function)
        if isinstance(node, (ast.Global, ast.Nonlocal))
        for n in node.names
    }
    transformer = _Rewriter(filename, declared)
    function.body = transformer.block(function.body)
    function.decorator_list = []  # the rewritten function is the plain one
    return ast.fix_missing_locations(tree)


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


class _Rewriter:
    def __init__(self, filename: str, declared: set[str]) -> None:
        self.filename = filename
        self.declared = declared
        self.count = 0

    # -- blocks --------------------------------------------------------------------------------
    def block(self, statements: Sequence[ast.stmt], in_loop: bool = False) -> list[ast.stmt]:
        """Rewrite each statement; in a loop body, what follows a possible break or continue
        runs only while neither is set."""
        out: list[ast.stmt] = []
        for i, statement in enumerate(statements):
            rewritten = self.statement(statement, in_loop)
            out += rewritten
            if in_loop and _may_leave(statement) and i + 1 < len(statements):
                rest = self.block(statements[i + 1 :], in_loop)
                guard = ast.If(
                    test=_call("running", _name(BREAK), _name(CONTINUE)), body=rest, orelse=[]
                )
                out += self.if_(ast.copy_location(guard, statements[i + 1]), in_loop, "guard")
                break
        return out or [ast.Pass()]

    def statement(self, node: ast.stmt, in_loop: bool) -> list[ast.stmt]:
        if isinstance(node, ast.If):
            return self.if_(node, in_loop)
        if isinstance(node, ast.While):
            return self.loop(node, "while_", node.test)
        if isinstance(node, ast.For):
            return self.loop(node, "for_", node.iter)
        if isinstance(node, ast.Match):
            return self.match(node, in_loop)
        if isinstance(node, ast.Break) and in_loop:
            return [_located(_assign(BREAK, ast.Constant(True)), node)]
        if isinstance(node, ast.Continue) and in_loop:
            return [_located(_assign(CONTINUE, ast.Constant(True)), node)]
        if isinstance(node, (ast.With, ast.Try)):
            node.body = self.block(node.body, in_loop)
        return [node]

    # -- if ------------------------------------------------------------------------------------
    def if_(self, node: ast.If, in_loop: bool, helper: str = "if_") -> list[ast.stmt]:
        """An ``if`` as a call of the recorder's ``helper``: ``if_``, or ``guard`` for the
        rest of a loop body after a possible break or continue."""
        if _returns(node.body) or _returns(node.orelse):
            # a return inside: only a Python condition can take it (the recorder says so)
            node.test = _call("python_condition", node.test, ast.Constant(node.lineno))
            node.body = self.block(node.body, in_loop)
            node.orelse = self.block(node.orelse, in_loop) if node.orelse else []
            return [node]
        names = assigned([*node.body, *node.orelse])
        if in_loop:
            names = _with_flags(names, node)
        self._check(names, node)
        n = self._next()
        then = self._function(f"__vkml_then{n}", names, self.block(node.body, in_loop), node)
        other = self._function(
            f"__vkml_else{n}",
            names,
            self.block(node.orelse, in_loop) if node.orelse else [ast.Pass()],
            node,
        )
        call = _call(
            helper,
            node.test,
            _name(then.name),
            _name(other.name),
            _values(names),
            _strings(names),
            ast.Constant(node.lineno),
        )
        return [_located(s, node) for s in (then, other, *_unpack(names, call))]

    # -- loops ---------------------------------------------------------------------------------
    def loop(self, node: ast.While | ast.For, helper: str, head: ast.expr) -> list[ast.stmt]:
        if node.orelse:
            raise self._error(
                node,
                f"'{type(node).__name__.lower()} ... else' is not supported in a builder; use a flag",
            )
        if _returns(node.body):
            raise self._error(
                node, "'return' inside a loop is not supported in a builder; break, then return"
            )
        names = [*assigned(node.body), BREAK]
        target: list[ast.stmt] = []
        params = list(names)
        if isinstance(node, ast.For):
            targets = assigned([ast.Assign(targets=[node.target], value=ast.Constant(None))])
            names = [*dict.fromkeys([*targets, *names])]
            params = ["__vkml_item", *names]
            target = [_located(ast.Assign(targets=[node.target], value=_name("__vkml_item")), node)]
        self._check(names, node)
        n = self._next()
        reset = _located(_assign(CONTINUE, ast.Constant(False)), node)
        body = self._function(
            f"__vkml_body{n}",
            names,
            [reset, *target, *self.block(node.body, in_loop=True)],
            node,
            params,
        )
        parts: list[ast.stmt] = [_located(_assign(BREAK, ast.Constant(False)), node), body]
        if isinstance(node, ast.While):
            test = self._function(f"__vkml_test{n}", names, [], node, returns=node.test)
            parts.append(test)
            call = _call(
                helper,
                _name(test.name),
                _name(body.name),
                _values(names),
                _strings(names),
                ast.Constant(node.lineno),
            )
        else:
            reads = any(
                isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in targets
                for statement in node.body
                for n in ast.walk(statement)
            )
            call = _call(helper, head, _name(body.name), _values(names), _strings(names), ast.Constant(node.lineno),
                         ast.Constant(len(targets)), ast.Constant(reads))  # fmt: skip
        parts.extend(_unpack(names, call))
        return [_located(s, node) for s in parts]

    # -- match ---------------------------------------------------------------------------------
    def match(self, node: ast.Match, in_loop: bool) -> list[ast.stmt]:
        """``match`` on literal cases (and ``case _``) as an if/elif chain on equality, so a
        device subject is a switch; any other pattern needs a Python subject and stays."""
        literal = all(_literal_pattern(c.pattern) and c.guard is None for c in node.cases)
        if not literal:
            for case in node.cases:
                case.body = self.block(case.body, in_loop)
            node.subject = _call("python_condition", node.subject, ast.Constant(node.lineno))
            return [node]
        n = self._next()
        subject = f"__vkml_subject{n}"
        chain: list[ast.stmt] = [ast.Pass()]
        for case in reversed(node.cases):
            pattern = case.pattern
            if isinstance(pattern, ast.MatchAs):  # case _
                chain = case.body
                continue
            values = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
            tests = [_call("equals", _name(subject), _case_value(p)) for p in values]
            test = tests[0] if len(tests) == 1 else _call("any_of", *tests)
            chain = [
                ast.copy_location(ast.If(test=test, body=case.body, orelse=chain), case.pattern)
            ]
        return [_located(_assign(subject, node.subject), node), *self.block(chain, in_loop)]

    # -- helpers -------------------------------------------------------------------------------
    def _function(self, name: str, names: list[str], body: list[ast.stmt], node: ast.AST,
                  params: list[str] | None = None, returns: ast.expr | None = None) -> ast.FunctionDef:  # fmt: skip
        result = returns if returns is not None else _values(names)
        function = function_node(name, params or names, [*body, ast.Return(result)])
        return _located(function, node)

    def _check(self, names: list[str], node: ast.stmt) -> None:
        clash = [n for n in names if n in self.declared]
        if clash:
            raise self._error(
                node,
                f"{clash[0]!r} is declared global or nonlocal and assigned in a construct the builder records; pass it in and return it instead",
            )

    def _error(self, node: ast.stmt, message: str) -> BuilderSyntaxError:
        return BuilderSyntaxError(message, (self.filename, node.lineno, node.col_offset + 1, None))

    def _next(self) -> int:
        self.count += 1
        return self.count


def _with_flags(names: list[str], node: ast.If) -> list[str]:
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


def _may_leave(node: ast.stmt) -> bool:
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


def _returns(statements: Sequence[ast.stmt]) -> bool:
    stack: list[ast.AST] = list(statements)
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Return):
            return True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return False


def _literal_pattern(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchValue):
        return isinstance(pattern.value, (ast.Constant, ast.UnaryOp))
    if isinstance(pattern, ast.MatchSingleton):
        return True
    if isinstance(pattern, ast.MatchOr):
        return all(_literal_pattern(p) for p in pattern.patterns)
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is None


def _case_value(pattern: ast.pattern) -> ast.expr:
    """The value a literal case compares with: ``case 3`` or ``case None``."""
    if isinstance(pattern, ast.MatchValue):
        return pattern.value
    if isinstance(pattern, ast.MatchSingleton):
        return ast.Constant(pattern.value)
    raise AssertionError(f"not a literal pattern: {ast.dump(pattern)}")


def function_node(name: str, params: Sequence[str], body: list[ast.stmt]) -> ast.FunctionDef:
    """``def name(params): body`` as an AST node (no position yet)."""
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


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _call(helper: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(_name(RECORDER), helper, ast.Load()), list(args), [])


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)


def _values(names: list[str]) -> ast.Tuple:
    """Each name's value, or the recorder's UNDEFINED where it is not bound yet."""
    no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    reads: list[ast.expr] = [_call("value", ast.Lambda(no_args, _name(n))) for n in names]
    return ast.Tuple(reads, ast.Load())


def _strings(names: list[str]) -> ast.Tuple:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _unpack(names: list[str], call: ast.Call) -> list[ast.stmt]:
    """``names = call``, then each name the construct left unbound deleted, so reading it
    fails as Python's own code would (``UnboundLocalError`` at the user's line)."""
    if not names:
        return [ast.Expr(call)]
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    unbind = [
        ast.If(_call("unbound", _name(n)), [ast.Delete([ast.Name(n, ast.Del())])], [])
        for n in names
        if n not in (BREAK, CONTINUE)
    ]
    return [ast.Assign(targets=[target], value=call), *unbind]


def _located(node: Any, where: ast.AST) -> Any:
    """``node`` and everything in it without a position, at ``where``'s line."""
    for child in ast.walk(node):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            ast.copy_location(child, where)
    return ast.copy_location(node, where)
