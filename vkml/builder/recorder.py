"""What a rewritten builder function calls (``vkml.builder.ast_rewrite``): the runtime side of
``if``, loops and ``match``.

A condition that is a Python value is decided here, once, and only the chosen path runs.
A one-element ``bool`` or ``uint32`` tensor is a **device condition**: both arms run (they only
record nodes) and every variable they assign becomes a select between the two, decided on
the device at every launch (one kernel, no host round trip: issue 10's measurements). A loop
whose ``break`` is a device condition is **predicated**: each turn's assignments take effect
only while no earlier turn broke, so a bounded loop with a device exit is a fixed number of
steps in one kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from vkml.builder.conditions import (
    and_,
    any_of,
    condition,
    equals,
    is_device,
    not_,
    or_,
    python_condition,
    running,
)
from vkml.builder.fork import FORKS, Fork, run_branch
from vkml.dtypes import bool_, int32
from vkml.errors import BuilderError, ShapeError
from vkml.frontend import functions, op_functions
from vkml.frontend.control import while_loop
from vkml.frontend.creation import full as constant
from vkml.frontend.tensor import Tensor

# What generated code calls (``vkml.builder.syntax.recorder_call``), the conditions'
# functions included
__all__ = [
    "and_", "any_of", "branch", "equals", "for_", "guard", "if_", "not_", "or_",
    "python_condition", "recording", "running", "unbound", "value", "while_",
]  # fmt: skip

BREAK = "__vkml_break"
COUNTER = "__vkml_count"

Values = tuple[Any, ...]

# The builder's ``turns_per_sync`` while it records (None: each device's own).
TURNS_PER_SYNC: ContextVar[int | None] = ContextVar("turns_per_sync", default=None)
# True while recording for a reverse pass (``record=True``): bounded loops stay unrolled,
# each turn its own nodes, which is the trajectory the reverse pass walks back.
UNROLLED: ContextVar[bool] = ContextVar("unrolled", default=False)
# The builder's ``max_turns``: the most turns a ``while`` on a device condition runs.
MAX_TURNS: ContextVar[int | None] = ContextVar("max_turns", default=None)


@contextmanager
def recording(
    turns: int | None, unrolled: bool = False, max_turns: int | None = None
) -> Iterator[list[Fork]]:
    """Record with ``turns`` predicated turns per host sync in device loops, (``unrolled``)
    every turn of a bounded loop recorded, and device loops ending after ``max_turns`` turns;
    yields the list the forks recorded go to."""
    forks: list[Fork] = []
    tokens = (
        TURNS_PER_SYNC.set(turns), UNROLLED.set(unrolled), FORKS.set(forks),
        MAX_TURNS.set(max_turns),
    )  # fmt: skip
    try:
        yield forks
    finally:
        TURNS_PER_SYNC.reset(tokens[0])
        UNROLLED.reset(tokens[1])
        FORKS.reset(tokens[2])
        MAX_TURNS.reset(tokens[3])


def branch(handle: Any, body: Callable[..., Values], values: Values, names: Sequence[str],
           line: int) -> Values:  # fmt: skip
    """A fork branch, ``with fork.branch() as b:`` (``vkml.builder.fork``)."""
    return run_branch(handle, body, values, tuple(names), line)


class Undefined:
    """A variable that was not bound before the construct that binds it."""

    def __repr__(self) -> str:
        return "<unbound>"

    def __bool__(self) -> bool:
        raise NameError("a variable is read before it is assigned")


UNDEFINED = Undefined()


def value(read: Callable[[], Any]) -> Any:
    """``read()``, or UNDEFINED if the variable it reads is not bound yet."""
    try:
        return read()
    except NameError:
        return UNDEFINED


def unbound(x: Any) -> bool:
    """Whether a construct left the variable unbound (the rewrite deletes it)."""
    return isinstance(x, Undefined)


# -- if and match ------------------------------------------------------------------------------
def if_(test: Any, then: Callable[..., Values], other: Callable[..., Values], values: Values,
        names: Sequence[str], line: int) -> Values:  # fmt: skip
    """An ``if`` statement: the chosen arm for a Python ``test``; both arms, merged by
    selects, for a device ``test``."""
    if not is_device(test):
        return then(*values) if test else other(*values)
    pred = condition(test, line)
    return merge(pred, then(*values), other(*values), names, line)


def guard(test: Any, then: Callable[..., Values], other: Callable[..., Values], values: Values,
          names: Sequence[str], line: int) -> Values:  # fmt: skip
    """The rest of a loop body after a possible ``break`` or ``continue``, run while
    ``test`` (neither happened) holds. A name it binds that was unbound before is this
    turn's temporary: still unbound after a device ``test`` (reading it after the loop is
    an ``UnboundLocalError``, as when Python's turn stopped early)."""
    if not is_device(test):
        return then(*values) if test else other(*values)
    pred = condition(test, line)
    ran, skipped = then(*values), other(*values)
    kept = [
        (UNDEFINED, UNDEFINED)
        if isinstance(b, Undefined) and not isinstance(a, Undefined)
        else (a, b)
        for a, b in zip(ran, skipped)
    ]
    return merge(pred, tuple(a for a, _ in kept), tuple(b for _, b in kept), names, line)


def merge(pred: Tensor, a: Values, b: Values, names: Sequence[str], line: int) -> Values:
    """Each variable as ``a``'s value where ``pred`` holds, else ``b``'s."""
    return tuple(_select(pred, x, y, name, line) for x, y, name in zip(a, b, names))


def _select(pred: Tensor, a: Any, b: Any, name: str, line: int) -> Any:
    if a is b:
        return a
    if isinstance(a, Undefined) or isinstance(b, Undefined):
        raise BuilderError(
            f"line {line}: {name!r} is assigned in only one arm of a device condition; give it "
            f"a value before the 'if' (both arms must leave it defined)"
        )
    if not is_device(a) and not is_device(b):
        if isinstance(a, bool) and isinstance(b, bool):
            return functions.where(pred, a, b)  # a flag (break, continue) set in one arm
        if a == b:
            return a
        raise BuilderError(
            f"line {line}: {name!r} is {a!r} in one arm of a device condition and {b!r} in "
            f"the other; a value chosen on the device must be a tensor (vkml.tensor(...))"
        )
    if is_device(a) and is_device(b) and (a.shape != b.shape or a.dtype is not b.dtype):
        raise ShapeError(
            f"line {line}: {name!r} is {a.dtype.name}{list(a.shape)} in one arm of a device "
            f"condition and {b.dtype.name}{list(b.shape)} in the other; both arms must give it "
            f"the same dtype and shape"
        )
    return _where(pred, a, b)


def _where(pred: Tensor, a: Any, b: Any) -> Any:
    """``where(pred, a, b)``, folded on cpu to ``where(pred & q, f, b)`` when ``a`` is
    itself ``where(q, f, b)``: a variable that a predicated turn updates under a guard. The
    same bits either way. For llvm-cpu, nested selects on a value and its predecessor make
    IREE's elementwise fusion exponential in the number of turns (12 turns of a 4x3 loop:
    170 s to compile, folded 1.3 s). Not for Vulkan, where the nested form compiles in
    seconds and the folded turns become one executable shared by every turn, whose constants
    and buffer addresses then pass lavapipe's 128 bytes of push constants."""
    node = a.node if is_device(a) and pred.device.kind == "cpu" else None
    if node is not None and is_device(b) and node.op == "where" and node.src[2] is b.node:
        q = Tensor(node.src[0])
        if q.dtype is bool_:
            return functions.where(functions.where(pred, q, False), Tensor(node.src[1]), b)
    return functions.where(pred, a, b)


# -- loops -------------------------------------------------------------------------------------
def for_(items: Iterable[Any], body: Callable[..., Values], values: Values, names: Sequence[str],
         line: int, targets: int = 0, reads_item: bool = True) -> Values:  # fmt: skip
    """A ``for`` over a Python iterable (``range(N)``, a list): unrolled here, each turn
    predicated once a device ``break`` may have happened. The first ``targets`` names are the
    loop's own variable(s): they take each turn's item, predicated or not.

    Once a device ``break`` has made the turns predicated, a body that does not read the
    loop variable (``for _ in range(N)``) with more turns left than the device runs per host
    sync becomes a device loop of the turns left (``device_for``): its module holds
    ``turns_per_sync`` turns, not ``N``, so it compiles in the time of a short loop."""
    if is_device(items):
        raise BuilderError(
            f"line {line}: a 'for' over a tensor is not recorded; iterate over range(n) and "
            f"index the tensor"
        )
    loop = _Loop(values, names, line, targets)
    sized = items if isinstance(items, (range, list, tuple)) else None
    left = len(sized) if sized is not None else 0
    for item in items:
        if loop.done:
            break
        stop = loop.values[loop.index]
        if (
            sized is not None and not reads_item and is_device(stop) and not UNROLLED.get()
            and left > _turns(stop.device)
        ):  # fmt: skip
            return device_for(body, loop.values, names, line, left, sized[-1], targets)
        loop.turn(body, item)
        left -= 1
    return loop.values


def _turns(device: Any) -> int:
    return TURNS_PER_SYNC.get() or device.turns_per_sync


def device_for(body: Callable[..., Values], values: Values, names: Sequence[str], line: int,
               turns: int, last: Any, targets: int) -> Values:  # fmt: skip
    """The ``turns`` turns left of a ``for`` whose body does not read its item, as a device
    loop on a counter (``device_while``); the loop variable ends as the last item, as in the
    unrolled loop."""
    start = (*((last,) * targets), *values[targets:])
    device = values[names.index(BREAK)].device
    counter = constant((), 0, dtype=int32, device=device)

    def test(*state: Any) -> Any:
        return state[-1] < turns

    def step(*state: Any) -> Values:
        return (*body(last, *state[:-1]), state[-1] + 1)

    out = device_while(test, step, (*start, counter), (*names, COUNTER), line)
    return tuple(out[:-1])


def while_(test: Callable[..., Any], body: Callable[..., Values], values: Values,
           names: Sequence[str], line: int) -> Values:  # fmt: skip
    """A ``while``: on a Python condition, unrolled here (a device ``break`` predicates the
    turns after it); on a device condition, a loop that runs on the device
    (``device_while``)."""
    loop = _Loop(values, names, line)
    while not loop.done:
        keep = test(*loop.values)
        if is_device(keep):
            return device_while(test, body, loop.values, names, line)
        if not keep:
            break
        loop.turn(body)
    return loop.values


def device_while(test: Callable[..., Any], body: Callable[..., Values], values: Values,
                 names: Sequence[str], line: int) -> Values:  # fmt: skip
    """A ``while`` whose condition is on the device, as one ``while_loop`` node. IREE runs
    that loop's turns on the host, one sync each (~0.8 ms on the 2-core CPU, 1-3 ms on a
    discrete GPU, against tens of microseconds for a step), so each of its turns runs
    ``turns_per_sync`` turns of the body (the builder's, else the device's), each taking
    effect only while the condition (and no ``break``) has held: the values are the ones
    Python's loop would give."""
    # What the loop carries: the tensors bound before it and the break flag. A name first
    # bound inside the body is the body's own temporary (unbound after the loop, as when the
    # loop may not run); a Python value must stay what it is.
    carried = [i for i, v in enumerate(values) if is_device(v) or names[i] == BREAK]
    device = next(v.device for v in values if is_device(v))
    brk = names.index(BREAK)
    turns = _turns(device)

    def full(tensors: Sequence[Tensor]) -> list[Any]:
        out = list(values)
        for i, t in zip(carried, tensors):
            out[i] = t
        return out

    limit = MAX_TURNS.get()

    def chunk(*state: Tensor) -> tuple[Tensor, ...]:
        # the carried tensors, then whether the loop still runs, then (with a turn limit)
        # the turns it has left
        left = state[-1] if limit is not None else None
        tensors, active = list(state[: len(carried)]), state[len(carried)]
        for _ in range(turns):
            now = full(tensors)
            keep = test(*now)
            keep = (
                condition(keep, line)
                if is_device(keep)
                else constant((), bool(keep), dtype=bool_, device=device)
            )
            go = functions.where(active, functions.where(now[brk], False, keep), False)
            if left is not None:
                go = functions.where(go, left > 0, False)
                left = functions.where(go, left - 1, left)
            new = body(*now)
            _check_python_values_kept(new, now, carried, names, line)
            tensors = [_select(go, new[i], now[i], names[i], line) for i in carried]
            active = go
        return (*tensors, active, *((left,) if left is not None else ()))

    start = [
        values[i]
        if is_device(values[i])
        else constant((), bool(values[i]), dtype=bool_, device=device)
        for i in carried
    ]
    running_ = constant((), True, dtype=bool_, device=device)
    counted = [constant((), limit, dtype=int32, device=device)] if limit is not None else []
    outs = while_loop(lambda *state: state[len(carried)], chunk, *start, running_, *counted)
    return tuple(full(outs[: len(carried)]))


def _check_python_values_kept(
    new: Values, now: Sequence[Any], carried: Sequence[int], names: Sequence[str], line: int
) -> None:
    """A device loop's body may not change a Python value (only tensors are carried)."""
    for i, (a, b) in enumerate(zip(new, now)):
        if i not in carried and not isinstance(b, Undefined) and _changed(a, b):
            raise BuilderError(
                f"line {line}: {names[i]!r} is {b!r} before a loop on a device condition and "
                f"changes inside it; a value the device loop changes must be a tensor before "
                f"the loop (vkml.tensor(...))"
            )


def _changed(new: Any, old: Any) -> bool:
    if new is old:
        return False
    return is_device(new) or is_device(old) or bool(new != old)


class _Loop:
    """A loop's carried variables, and whether a device break has made its turns predicated."""

    def __init__(self, values: Values, names: Sequence[str], line: int, targets: int = 0) -> None:
        self.values = values
        self.names = names
        self.line = line
        self.index = list(names).index(BREAK)
        self.targets = targets

    @property
    def done(self) -> bool:
        stop = self.values[self.index]
        return not is_device(stop) and bool(stop)

    def turn(self, body: Callable[..., Values], *item: Any) -> None:
        stop = self.values[self.index]
        new = body(*item, *self.values)
        if is_device(stop):  # a device break may have happened: this turn counts only if not
            k = self.targets
            kept = merge(
                op_functions.equal(stop, False), new[k:], self.values[k:], self.names[k:], self.line
            )
            new = (*new[:k], *kept)
        self.values = new
