"""The one rewrite of a builder function: ``if``, ``while``, ``for``, ``match`` and fork branches
(``with fork.branch():``) become calls on the recorder (``vkml.builder.recorder``); everything
else is left as it was.

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
from collections.abc import Callable, Sequence
from typing import Any

from vkml.builder import recorder, syntax as syn
from vkml.builder.syntax import BREAK, CONTINUE, assigned


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


def _logic(test: ast.expr) -> ast.expr:
    """``test`` with its ``not``, ``and`` and ``or`` as recorder calls, which give a device
    condition where an operand is one (Python would ask the tensor for its truth) and
    Python's meaning, short-circuits included, where every operand is a Python value. Each
    operand after the first is passed as a function, so it is evaluated only where Python
    would evaluate it."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        call = syn.recorder_call(recorder.not_, _logic(test.operand), ast.Constant(test.lineno))
        return ast.copy_location(call, test)
    if isinstance(test, ast.BoolOp):
        helper = recorder.and_ if isinstance(test.op, ast.And) else recorder.or_
        first, *rest = (_logic(v) for v in test.values)
        later = [syn.thunk(v) for v in rest]
        call = syn.recorder_call(helper, ast.Constant(test.lineno), first, *later)
        return ast.copy_location(call, test)
    return test


def _is_branch_call(item: ast.withitem) -> bool:
    """Whether ``item`` is ``<something>.branch() [as name]`` (a fork branch)."""
    expr = item.context_expr
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "branch"
        and not expr.args
        and not expr.keywords
    )


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
            if in_loop and syn.may_leave(statement) and i + 1 < len(statements):
                rest = self.block(statements[i + 1 :], in_loop)
                guard = ast.If(
                    test=syn.recorder_call(
                        recorder.running, syn.load_name(BREAK), syn.load_name(CONTINUE)
                    ),
                    body=rest,
                    orelse=[],
                )
                out += self.if_(
                    ast.copy_location(guard, statements[i + 1]), in_loop, recorder.guard
                )
                break
        return out or [ast.Pass()]

    def statement(self, node: ast.stmt, in_loop: bool) -> list[ast.stmt]:
        if isinstance(node, ast.If):
            return self.if_(node, in_loop)
        if isinstance(node, ast.While):
            return self.loop(node, recorder.while_, node.test)
        if isinstance(node, ast.For):
            return self.loop(node, recorder.for_, node.iter)
        if isinstance(node, ast.Match):
            return self.match(node, in_loop)
        if isinstance(node, ast.Break) and in_loop:
            return [syn.located(syn.assign(BREAK, ast.Constant(True)), node)]
        if isinstance(node, ast.Continue) and in_loop:
            return [syn.located(syn.assign(CONTINUE, ast.Constant(True)), node)]
        if (
            isinstance(node, ast.With)
            and len(node.items) > 1
            and any(map(_is_branch_call, node.items))
        ):
            # 'with a as f, f.branch():' is 'with a as f:' around 'with f.branch():'
            inner: list[ast.stmt] = node.body
            for item in reversed(node.items):
                inner = [syn.located(ast.With(items=[item], body=inner), node)]
            return self.statement(inner[0], in_loop)
        if isinstance(node, ast.With) and _is_branch_call(node.items[0]) and len(node.items) == 1:
            return self.branch(node, in_loop)
        if isinstance(node, (ast.With, ast.Try)):
            node.body = self.block(node.body, in_loop)
        return [node]

    # -- fork branches -------------------------------------------------------------------------
    def branch(self, node: ast.With, in_loop: bool) -> list[ast.stmt]:
        """``with <fork>.branch() [as b]:`` as a call of the recorder's ``branch`` on a function
        of the branch handle and the names the block assigns (``vkml.builder.fork``)."""
        if syn.returns(node.body) or syn.may_leave(node):
            raise self._error(
                node, "'return', 'break' or 'continue' inside a fork branch is not supported; "
                "assign in the branch and act after the fork",
            )  # fmt: skip
        item = node.items[0]
        handle = item.optional_vars
        if handle is not None and not isinstance(handle, ast.Name):
            raise self._error(
                node, "a fork branch is named by one name: 'with fork.branch() as b:'"
            )
        names = [n for n in assigned(node.body) if handle is None or n != handle.id]
        self._check(names, node)
        n = self._next()
        param = handle.id if handle is not None else f"__vkml_branch{n}"
        body = self._function(
            f"__vkml_branch_body{n}", names, self.block(node.body, in_loop), node, [param, *names]
        )
        call = syn.recorder_call(
            recorder.branch, item.context_expr, syn.load_name(body.name), syn.values(names),
            syn.strings(names), ast.Constant(node.lineno),
        )  # fmt: skip
        return [syn.located(s, node) for s in (body, *syn.unpack(names, call))]

    # -- if ------------------------------------------------------------------------------------
    def if_(
        self, node: ast.If, in_loop: bool, helper: Callable[..., Any] = recorder.if_
    ) -> list[ast.stmt]:
        """An ``if`` as a call of the recorder's ``helper``: ``if_``, or ``guard`` for the
        rest of a loop body after a possible break or continue."""
        node.test = _logic(node.test)
        if syn.returns(node.body) or syn.returns(node.orelse):
            # a return inside: only a Python condition can take it (the recorder says so)
            node.test = syn.recorder_call(
                recorder.python_condition, node.test, ast.Constant(node.lineno)
            )
            node.body = self.block(node.body, in_loop)
            node.orelse = self.block(node.orelse, in_loop) if node.orelse else []
            return [node]
        names = assigned([*node.body, *node.orelse])
        if in_loop:
            names = syn.with_flags(names, node)
        self._check(names, node)
        n = self._next()
        then = self._function(f"__vkml_then{n}", names, self.block(node.body, in_loop), node)
        other = self._function(
            f"__vkml_else{n}",
            names,
            self.block(node.orelse, in_loop) if node.orelse else [ast.Pass()],
            node,
        )
        call = syn.recorder_call(
            helper,
            node.test,
            syn.load_name(then.name),
            syn.load_name(other.name),
            syn.values(names),
            syn.strings(names),
            ast.Constant(node.lineno),
        )
        return [syn.located(s, node) for s in (then, other, *syn.unpack(names, call))]

    # -- loops ---------------------------------------------------------------------------------
    def loop(
        self, node: ast.While | ast.For, helper: Callable[..., Any], head: ast.expr
    ) -> list[ast.stmt]:
        if node.orelse:
            raise self._error(
                node,
                f"'{type(node).__name__.lower()} ... else' is not supported in a builder; use a flag",
            )
        if syn.returns(node.body):
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
            target = [
                syn.located(
                    ast.Assign(targets=[node.target], value=syn.load_name("__vkml_item")), node
                )
            ]
        self._check(names, node)
        n = self._next()
        reset = syn.located(syn.assign(CONTINUE, ast.Constant(False)), node)
        body = self._function(
            f"__vkml_body{n}",
            names,
            [reset, *target, *self.block(node.body, in_loop=True)],
            node,
            params,
        )
        parts: list[ast.stmt] = [syn.located(syn.assign(BREAK, ast.Constant(False)), node), body]
        if isinstance(node, ast.While):
            test = self._function(f"__vkml_test{n}", names, [], node, returns=_logic(node.test))
            parts.append(test)
            call = syn.recorder_call(
                helper,
                syn.load_name(test.name),
                syn.load_name(body.name),
                syn.values(names),
                syn.strings(names),
                ast.Constant(node.lineno),
            )
        else:
            reads = any(
                isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in targets
                for statement in node.body
                for n in ast.walk(statement)
            )
            call = syn.recorder_call(helper, head, syn.load_name(body.name), syn.values(names), syn.strings(names), ast.Constant(node.lineno),
                         ast.Constant(len(targets)), ast.Constant(reads))  # fmt: skip
        parts.extend(syn.unpack(names, call))
        return [syn.located(s, node) for s in parts]

    # -- match ---------------------------------------------------------------------------------
    def match(self, node: ast.Match, in_loop: bool) -> list[ast.stmt]:
        """``match`` on literal cases (and ``case _``) as an if/elif chain on equality, so a
        device subject is a switch; any other pattern needs a Python subject and stays."""
        literal = all(syn.literal_pattern(c.pattern) and c.guard is None for c in node.cases)
        if not literal:
            for case in node.cases:
                case.body = self.block(case.body, in_loop)
            node.subject = syn.recorder_call(
                recorder.python_condition, node.subject, ast.Constant(node.lineno)
            )
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
            tests = [
                syn.recorder_call(recorder.equals, syn.load_name(subject), syn.case_value(p))
                for p in values
            ]
            test = tests[0] if len(tests) == 1 else syn.recorder_call(recorder.any_of, *tests)
            chain = [
                ast.copy_location(ast.If(test=test, body=case.body, orelse=chain), case.pattern)
            ]
        return [syn.located(syn.assign(subject, node.subject), node), *self.block(chain, in_loop)]

    # -- helpers -------------------------------------------------------------------------------
    def _function(self, name: str, names: list[str], body: list[ast.stmt], node: ast.AST,
                  params: list[str] | None = None, returns: ast.expr | None = None) -> ast.FunctionDef:  # fmt: skip
        result = returns if returns is not None else syn.values(names)
        function = syn.function_node(name, params or names, [*body, ast.Return(result)])
        return syn.located(function, node)

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
