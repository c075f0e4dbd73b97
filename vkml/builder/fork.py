"""Forks in a builder function: ``with vkml.Graph.parallel() as fork:`` and its branches.

Seed 003's ``g.parallel()``, in a builder function::

    with vkml.Graph.parallel() as fork:
        with fork.branch():
            a = (x @ w1).relu()
        with fork.branch() as right:
            b = (x @ w2).tanh()
    y = a + b                        # after the join: reads both

The rewrite (``vkml.builder.ast_rewrite``) turns each ``with ... .branch() [as b]:`` block into
a call of ``run_branch`` on a function of the names the block assigns, as it does for an
``if``. A branch's new values pass through a fusion stop (the ``fusion_stop`` op), so the
branches are dispatches of their own, and IREE's scheduler, seeing no edge between them,
runs them side by side in one submission (tests/lit/emit/fork.py shows it in the stream IR);
leaving the fork is the join. A branch that reads a value another branch of the same fork
made is refused unless it first says so with ``b.wait(value)``: that read is one ordering
edge between the branches, and the only one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Self

from vkml.errors import BuilderError
from vkml.frontend.control import fusion_stop
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node
from vkml.graph.walk import toposort

# The forks recorded so far while a builder records (None otherwise): ``Graph.schedule``
# counts them.
FORKS: ContextVar[list[Fork] | None] = ContextVar("forks", default=None)


class Fork:
    """A fork being recorded: ``branch()`` makes each branch; leaving the ``with`` joins."""

    def __init__(self) -> None:
        self.branches: list[Branch] = []
        self._open = False

    def __enter__(self) -> Self:
        forks = FORKS.get()
        if forks is None:
            raise BuilderError(
                "vkml.Graph.parallel() records a fork in a function decorated with "
                "@vkml.Graph.builder, while it records; outside one every op is just recorded "
                "in order and there is nothing to fork"
            )
        forks.append(self)
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._open = False

    def branch(self) -> Branch:
        """A new branch of this fork, written ``with fork.branch() as b:`` in the fork's
        ``with`` block."""
        if not self._open:
            raise BuilderError(
                "fork.branch() is written inside its 'with vkml.Graph.parallel() as fork:' block"
            )
        return Branch(self, len(self.branches) + 1)


class Branch:
    """One branch of a fork; ``wait(x)`` lets it read ``x``, which another branch made."""

    def __init__(self, fork: Fork, number: int) -> None:
        self.fork = fork
        self.number = number
        self.made: dict[
            str, Node
        ] = {}  # name -> the node past the fusion stop the branch left it bound to
        self.waited: set[int] = set()  # ids of the nodes it may read from its siblings

    def wait(self, *values: Tensor) -> None:
        """Order this branch after the branches that made ``values``: it may read them."""
        for v in values:
            if not isinstance(v, Tensor):
                raise BuilderError(f"branch.wait takes tensors, got {type(v).__name__}")
            self.waited.add(id(v._node))

    def __enter__(self) -> Self:
        raise BuilderError(
            "a fork branch is recorded by the builder's rewrite: write it as 'with "
            "fork.branch():' (or 'with fork.branch() as b:') directly in the builder function"
        )

    def __exit__(self, *exc: object) -> None:
        return None


def run_branch(
    branch: Any, body: Callable[..., tuple[Any, ...]], values: tuple[Any, ...],
    names: tuple[str, ...], line: int,
) -> tuple[Any, ...]:  # fmt: skip
    """Record one branch: ``body(branch, *values)`` gives the new values of ``names``; each
    new tensor passes through a fusion stop. Refuses a read of another branch's value not
    announced with ``branch.wait``."""
    if not isinstance(branch, Branch):
        raise BuilderError(
            f"line {line}: 'with ... .branch()' takes a branch of vkml.Graph.parallel(), got "
            f"{type(branch).__name__}"
        )
    outs = body(branch, *values)
    new = {n: v for n, old, v in zip(names, values, outs) if isinstance(v, Tensor) and v is not old}
    _check_reads(branch, new, line)
    branch.fork.branches.append(branch)
    stopped = []
    for name, v in zip(names, outs):
        if name in new:
            v = fusion_stop(v)
            branch.made[name] = v._node
        stopped.append(v)
    return tuple(stopped)


def _check_reads(branch: Branch, new: dict[str, Tensor], line: int) -> None:
    siblings = {
        id(node): (other.number, name)
        for other in branch.fork.branches
        for name, node in other.made.items()
    }
    if not siblings or not new:
        return
    for node in toposort([v._node for v in new.values()]):
        found = siblings.get(id(node))
        if found is not None and id(node) not in branch.waited:
            number, name = found
            raise BuilderError(
                f"line {line}: branch {branch.number} of a fork reads {name!r}, which branch "
                f"{number} of the same fork makes; branches run side by side, so say it: "
                f"'with fork.branch() as b:' then 'b.wait({name})' before reading it (or "
                f"compute {name!r} before the fork)"
            )
