"""The workgroup-race check: prove from IREE's code for each Vulkan dispatch that no shader
invocation reads shared (workgroup) memory that another invocation wrote without a barrier
between them.

IREE 3.13's SPIR-V ``BaseDistribute`` pipeline keeps a producer it cloned into a dispatch (a
widening ``extf`` from float16, say) as a buffer in workgroup memory when the dispatch's
consumer reads it through another indexing map than its own, such as a transpose. Each
invocation computes part of the buffer and then reads other parts, and IREE puts no barrier
between the two: on lavapipe, whose invocations of a workgroup run in groups of 8 one after
another, the reads see values not written yet. ``x.T + 1`` realized with ``-x`` for a
float16 ``x`` of shape (3, 7) came back wrong (the fuzz campaign found it as a wrong
``argsort`` along axis 0). Where the consumer reads the buffer with the producer's own map,
each invocation reads back only what it wrote, which needs no barrier: IREE does that for
every float16 elementwise dispatch.

How: for each ``memref.alloc`` in ``#spirv.storage_class<Workgroup>`` of a function without
a barrier (``gpu.barrier``, ``spirv.ControlBarrier``), every read of it must use the indices
of a write of it, as the same SSA values: values one invocation computed, so it reads its
own element. Any other access (another index, a subview, a vector transfer) is a possible
race. The check is conservative: a function it flags may be fine, and vkml then compiles it
another way or refuses it (``vkml.compiler.compile``).
"""

from __future__ import annotations

import re
from pathlib import Path

from vkml.compiler.dispatch_dump import dump_files

_FUNC = re.compile(r"^\s*func\.func @([\w$.-]+)", re.MULTILINE)
_ALLOC = re.compile(
    r"(%[\w$.-]+) = memref\.alloca?\(\) : memref<[^>]*#spirv\.storage_class<Workgroup>>"
)
_BARRIER = re.compile(r"\b(gpu\.barrier|spirv\.ControlBarrier)\b")
_STORE = re.compile(r"\bmemref\.store %[\w$.-]+, (%[\w$.-]+)\[([^\]]*)\]")
_LOAD = re.compile(r"\bmemref\.load (%[\w$.-]+)\[([^\]]*)\]")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def racy_functions(ir_text: str) -> list[str]:
    """The functions of one executable's pre-SPIR-V IR ``ir_text`` that may race on
    workgroup memory."""
    found: list[str] = []
    functions = _FUNC.split(ir_text)  # [before, name, body, name, body, ...]
    for name, body in zip(functions[1::2], functions[2::2]):
        if _may_race(body):
            found.append(name)
    return found


def _may_race(body: str) -> bool:
    shared = set(_ALLOC.findall(body))
    if not shared or _BARRIER.search(body):
        return False
    # (buffer, indices, the region nesting the store is in): a name means one value only
    # within the regions it is visible in (the printer reuses names in sibling regions)
    written: list[tuple[str, str, tuple[int, ...]]] = []
    scopes: list[int] = []
    opened = 0
    accesses = 0
    for line in body.splitlines():
        here = tuple(scopes)
        if store := _STORE.search(line):
            if store.group(1) in shared:
                written.append((store.group(1), store.group(2), here))
                accesses += 1
        elif (load := _LOAD.search(line)) and load.group(1) in shared:
            accesses += 1
            if not any(
                b == load.group(1) and i == load.group(2) and here[: len(s)] == s
                for b, i, s in written
            ):
                return True  # an element another invocation may have written
        for char in _STRING.sub("", line):
            if char == "{":
                opened += 1
                scopes.append(opened)
            elif char == "}" and scopes:
                scopes.pop()
    # any other use of the buffer (a subview, a vector load or store): not proven safe
    uses = sum(len(re.findall(re.escape(b) + r"(?![\w$.-])", body)) for b in shared)
    return uses != accesses + len(shared)


def racy_dispatches(directory: Path) -> list[str]:
    """The dispatch functions dumped under ``directory`` that may race on workgroup memory."""
    return [f for path in dump_files(directory) for f in racy_functions(path.read_text("utf-8"))]
