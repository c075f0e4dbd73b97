"""``einsum``: NumPy's subscripts (``"ij,jk->ik"``, implicit outputs, ``...``, a letter
repeated in one operand for its diagonal) over any number of operands, as recorded ops:
each operand first loses its diagonals and the letters no one else reads (summed, in the
pairwise order), then the operands are contracted left to right, each pair as one batched
``matmul`` (its contract: ADR 0005), then the result's axes are put in the output's order.
Every op it records has a gradient, so einsum has one."""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

import numpy as np

from vkml.errors import ShapeError
from vkml.frontend import indexing, views
from vkml.frontend.host import data_node
from vkml.frontend.record import Operand, record, tensor_node
from vkml.frontend.reductions import matmul
from vkml.graph.node import Node

_LETTERS = set(string.ascii_letters)


def einsum(subscripts: str, *operands: Operand) -> Node:
    """The Einstein summation ``subscripts`` of ``operands`` (NumPy's ``einsum``): letters
    that appear in the output (or, without ``->``, once across the inputs, in alphabetical
    order) are kept, the others summed over; ``...`` stands for broadcast leading axes."""
    if not isinstance(subscripts, str):
        raise TypeError(
            f"'einsum': subscripts {subscripts!r:.40} must be a string like 'ij,jk->ik'"
        )
    nodes = [tensor_node("einsum", x) for x in operands]
    inputs, output = _parse(subscripts, [n.shape for n in nodes])
    sizes: dict[str, int] = {}
    for letters, node in zip(inputs, nodes):
        for letter, size in zip(letters, node.shape):
            known = sizes.setdefault(letter, size)
            if known != size and 1 not in (known, size):
                raise ShapeError(
                    f"'einsum' {subscripts!r}: '{_shown(letter)}' is {known} in one operand and "
                    f"{size} in another"
                )
            sizes[letter] = max(known, size)
    terms = [(node, letters) for node, letters in zip(nodes, inputs)]
    terms = [
        _reduce_alone(node, letters, i, inputs, output) for i, (node, letters) in enumerate(terms)
    ]
    node, letters = terms[0]
    for i, (other, other_letters) in enumerate(terms[1:], start=1):
        later = set(output).union(*inputs[i + 1 :])
        node, letters = _contract(node, letters, other, other_letters, later, sizes)
    if sorted(letters) != sorted(output):  # letters only the first operand had, unsummed
        node, letters = _sum_out(node, letters, [c for c in letters if c not in output])
    return views.permute(node, *(letters.index(c) for c in output))


def _shown(letter: str) -> str:
    return "..." if letter.isdigit() else letter


def _parse(subscripts: str, shapes: Sequence[tuple[int, ...]]) -> tuple[list[str], str]:
    """The letters of each operand and of the output, each ``...`` replaced by one digit per
    broadcast axis (the same digits, right-aligned, in every operand)."""
    text = subscripts.replace(" ", "")
    left, arrow, right = text.partition("->")
    parts = left.split(",")
    if len(parts) != len(shapes):
        raise ValueError(
            f"'einsum': {subscripts!r} names {len(parts)} operand(s), {len(shapes)} given"
        )
    width = 0
    for part, shape in zip(parts, shapes):
        named = len(part.replace("...", ""))
        if "..." in part:
            width = max(width, len(shape) - named)
    digits = "".join(str(d) for d in range(width)) if width <= 10 else None
    if digits is None:
        raise ValueError(f"'einsum': '...' stands for more than 10 axes in {subscripts!r}")
    inputs = []
    for part, shape in zip(parts, shapes):
        if part.count("...") > 1 or any(c not in _LETTERS for c in part.replace("...", "")):
            raise ValueError(f"'einsum': {part!r} in {subscripts!r} is not letters and one '...'")
        named = len(part.replace("...", ""))
        extra = len(shape) - named
        if extra < 0 or (extra and "..." not in part):
            raise ShapeError(
                f"'einsum': {part!r} names {named} axes of an operand of shape {shape}"
            )
        inputs.append(part.replace("...", digits[width - extra :]))
    if arrow:
        if right.count("...") > 1 or any(c not in _LETTERS for c in right.replace("...", "")):
            raise ValueError(f"'einsum': output {right!r} is not letters and one '...'")
        output = right.replace("...", digits)
        unknown = [c for c in output if not any(c in p for p in inputs)]
        if unknown or len(set(output)) != len(output):
            raise ValueError(
                f"'einsum': the output {right!r} names letters no input has or one twice"
            )
    else:
        counts = {c: sum(p.count(c) for p in inputs) for c in set("".join(inputs))}
        output = digits + "".join(
            sorted(c for c, k in counts.items() if k == 1 and not c.isdigit())
        )
    return inputs, output


def _reduce_alone(
    node: Node, letters: str, i: int, inputs: list[str], output: str
) -> tuple[Node, str]:
    """``node`` with its repeated letters taken on their diagonal and its letters that no
    other operand and not the output reads summed out."""
    while len(set(letters)) != len(letters):
        letter = next(c for c in letters if letters.count(c) > 1)
        first = letters.index(letter)
        second = letters.index(letter, first + 1)
        node = _diagonal(node, first, second)
        letters = letter + "".join(c for k, c in enumerate(letters) if k not in (first, second))
    others = set(output).union(*(p for k, p in enumerate(inputs) if k != i))
    alone = [c for c in letters if c not in others]
    return _sum_out(node, letters, alone) if alone else (node, letters)


def _diagonal(node: Node, first: int, second: int) -> Node:
    """The elements with equal positions on axes ``first`` and ``second``, as a new first
    axis (the others in order)."""
    n = node.shape[first]
    rest = [a for a in range(len(node.shape)) if a not in (first, second)]
    square = views.reshape(
        views.permute(node, first, second, *rest), n * n, *(node.shape[a] for a in rest)
    )
    picks = data_node(np.arange(n, dtype=np.int64) * (n + 1), None, node.device)
    return indexing.take(square, picks, 0)


def _sum_out(node: Node, letters: str, gone: Sequence[str]) -> tuple[Node, str]:
    axes = tuple(letters.index(c) for c in gone)
    summed = record("sum", node, axis=axes, keepdims=False)
    return summed, "".join(c for c in letters if c not in gone)


def _contract(
    a: Node, la: str, b: Node, lb: str, later: set[str], sizes: dict[str, int]
) -> tuple[Node, str]:
    """``a`` and ``b`` as one batched matmul: the letters both have and something later
    reads are the batch, those both have and nothing later reads are contracted."""
    batch = [c for c in la if c in lb and c in later]
    summed = [c for c in la if c in lb and c not in later]
    only_a = [c for c in la if c not in lb]
    only_b = [c for c in lb if c not in la]
    a = _arranged(a, la, batch + only_a + summed, sizes)
    b = _arranged(b, lb, batch + summed + only_b, sizes)
    dims = [sizes[c] for c in batch]
    m = math.prod(sizes[c] for c in only_a)
    k = math.prod(sizes[c] for c in summed)
    n = math.prod(sizes[c] for c in only_b)
    product = matmul(views.reshape(a, *dims, m, k), views.reshape(b, *dims, k, n))
    out = views.reshape(product, *dims, *(sizes[c] for c in only_a + only_b))
    return out, "".join(batch + only_a + only_b)


def _arranged(node: Node, letters: str, order: list[str], sizes: dict[str, int]) -> Node:
    """``node``'s axes in ``order``, each broadcast to its letter's size (an axis of 1 of a
    broadcast ``...``)."""
    node = views.permute(node, *(letters.index(c) for c in order))
    full = tuple(sizes[c] for c in order)
    return views.broadcast_to(node, *full) if node.shape != full else node
