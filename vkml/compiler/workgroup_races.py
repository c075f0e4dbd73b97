"""The workgroup-race check: prove from IREE's code for each Vulkan dispatch that no shader
invocation reads shared (workgroup) memory that another invocation wrote without a barrier
between them.

IREE 3.13's SPIR-V ``BaseDistribute`` pipeline keeps a value it computes inside a dispatch (a
widening ``extf`` from float16, float16 arithmetic rounded in software) as a buffer in
workgroup memory when the dispatch reads it through another indexing than the one it was
computed in, such as a transpose or a broadcast. Each invocation computes part of the buffer
and then reads other parts, and IREE puts no barrier between the two: on lavapipe, whose
invocations of a workgroup run in groups of 8 one after another, the reads see values not
written yet. ``x.T + 1`` realized with ``-x`` for a float16 ``x`` of shape (3, 7) came back
wrong (the fuzz campaign found it as a wrong ``argsort`` along axis 0). Where the reader uses
the buffer with the writer's own indexing, each invocation reads back only what it wrote,
which needs no barrier: IREE does that for every float16 elementwise dispatch.

The check reads each function line by line and fails closed: anything it does not
understand is a possible race (vkml then compiles the module another way or refuses it,
``vkml.compiler.compile``; a false alarm costs a compile, a missed race a wrong answer).

- A buffer in workgroup memory is any value defined on a line with
  ``#spirv.storage_class<Workgroup>``; it may be used only by ``memref.store`` and
  ``memref.load``. Any other line that names such a buffer, or that mentions workgroup memory
  without defining one, fails the check.
- A read is an invocation's own element when every write of the buffer uses the same indices,
  one of them computed from the invocation's thread id (``gpu.thread_id``; not a constant, not
  a loop counter every invocation shares), and a write with them comes before the read in a
  region that encloses it (a name means one value only in the regions it is visible in: the
  printer reuses names in sibling regions). Two invocations may then write one element (IREE
  gives some invocations no element of their own), but both write the value IREE stages for
  that element, computed from the element's position: what one reads back is that value.
- Any other read needs, with every write of the buffer, a barrier (``gpu.barrier``,
  ``spirv.ControlBarrier``) between the two lines, in a region that encloses both; and, for
  every ``scf.for`` around both, one in the loop before the earlier line or after the later,
  for the next turn (IREE's matmuls store a tile, wait, read it, and wait again at the top of
  the next turn before storing the next). A function with workgroup memory and any other
  loop or branch (``scf.while``, ``cf.br``) fails.
- A read also needs no barrier when the buffer's one write is in the function's top region
  (no branch or loop around it), before the read, at the same indices, and stores a value
  every invocation computes alike: from constants, workgroup ids and interface bindings,
  through one-line ops of ``arith``/``math``, and loads from buffers the function never
  writes (not from thread ids, atomics or region results). Every invocation then stores the
  same value at the same place before it reads it back: IREE stages a broadcast value so
  (a bfloat16 widened once per workgroup; fuzz seed 19).
- Except in a function that never reads its thread id, whose workgroup fits in one subgroup
  (``gpu.known_block_size`` against the target's ``min_subgroup_size``): every invocation then
  runs the same code on the same data as one group, and reads and writes the same values at
  the same time. IREE compiles small matmuls so (a 1x8x1 workgroup accumulating a row in
  workgroup memory, each invocation all of it); vkml's tests find them bit-exact on lavapipe.
  That relies on a subgroup running its invocations together, which lavapipe and NVIDIA's
  drivers do for code without branches on the invocation; Vulkan does not promise it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vkml.compiler.dispatch_dump import dump_files

_FUNC = re.compile(r'^\s*func\.func\s+(?:\w+\s+)*@("[^"]*"|[\w$.-]+)', re.MULTILINE)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_WORKGROUP = "storage_class<Workgroup>"
_DEF = re.compile(r"^\s*(%[\w$.-]+)(?::\d+)? = ")
_NAME = r"%[\w$.-]+"
_VALUE = rf"{_NAME}(?:#\d+)?"  # a name, or one result of an op with several (``%33#4``)
_STORE = re.compile(rf"^\s*memref\.store ({_VALUE}), ({_NAME})\[([^\]]*)\]")
_LOAD = re.compile(rf"^\s*{_NAME} = memref\.load ({_NAME})\[([^\]]*)\]")
_BARRIER = re.compile(r"^\s*(?:gpu\.barrier|spirv\.ControlBarrier)\b")
_THREAD_ID = re.compile(rf"^\s*({_NAME}) = gpu\.thread_id [xyz]\b")
_FOR = re.compile(rf"\bscf\.for ({_NAME}) = (.*)$")
_LOOP = re.compile(r"\bscf\.for\b")
_UNSTRUCTURED = re.compile(r"\b(?:scf\.while|cf\.br|cf\.cond_br)\b")  # loops not followed
# ops whose result every invocation computes alike from operands that are alike (no thread
# or lane id, no atomic, no region)
_UNIFORM_SOURCE = re.compile(
    r"= (?:arith\.\w+|math\.\w+|affine\.apply|memref\.load|util\.assume\.int"
    r"|hal\.interface\.(?:workgroup\.(?:id|count|size)|binding\.subspan|constant\.load))\b"
)
_BLOCK_SIZE = re.compile(r"gpu\.known_block_size = array<i32: (\d+), (\d+), (\d+)>")
_SUBGROUP = re.compile(r"\bmin_subgroup_size = (\d+)")


@dataclass(frozen=True)
class _Access:
    line: int
    scope: tuple[int, ...]  # the regions enclosing it, outermost first
    indices: str
    value: str = ""  # what a store stores


def _encloses(outer: tuple[int, ...], inner: tuple[int, ...]) -> bool:
    return inner[: len(outer)] == outer


class _Function:
    """What one function does with workgroup memory, read line by line."""

    def __init__(self) -> None:
        self.per_thread: set[str] = set()  # names whose value depends on the thread id
        self.uniform: set[str] = set()  # names computed alike by every invocation (below)
        self.written: set[str] = set()  # storage buffers the function stores into
        self.uniform_loads: list[str] = []  # the buffers uniform names were loaded from
        self.shared: set[str] = set()
        self.stores: dict[str, list[_Access]] = {}
        self.loads: dict[str, list[_Access]] = {}
        self.barriers: list[_Access] = []
        self.loops: set[int] = set()  # the regions that are loop bodies
        self.unstructured = False  # a loop or branch other than scf.for / scf.if
        self.unknown = False  # a use of workgroup memory the check cannot follow

    def read(self, number: int, line: str, scope: tuple[int, ...]) -> None:
        text = _STRING.sub('""', line)
        self.unstructured |= bool(_UNSTRUCTURED.search(text))
        if _BARRIER.match(text):
            self.barriers.append(_Access(number, scope, ""))
            return
        self._follow_thread_ids(text)
        self._follow_uniform(text, scope)
        store, load = _STORE.match(text), _LOAD.match(text)
        if store:
            self.written.add(store.group(2))
        if store and store.group(2) in self.shared and store.group(1) not in self.shared:
            self._add(
                self.stores,
                store.group(2),
                _Access(number, scope, store.group(3).strip(), store.group(1)),
            )
            return
        if load and load.group(1) in self.shared:
            self._add(self.loads, load.group(1), _Access(number, scope, load.group(2).strip()))
            return
        if _WORKGROUP in text:
            defined = _DEF.match(text)
            if defined:
                self.shared.add(defined.group(1))
                uses = set(re.findall(_NAME, text[defined.end() :])) & self.shared
                self.unknown |= bool(uses)  # a view of a buffer: not followed
            else:
                self.unknown = True
            return
        if set(re.findall(_NAME, text)) & self.shared:
            self.unknown = True

    @staticmethod
    def _add(table: dict[str, list[_Access]], buffer: str, access: _Access) -> None:
        table.setdefault(buffer, []).append(access)

    def may_race(self) -> bool:
        if self.unknown or (self.unstructured and self.shared):
            return True
        for buffer, loads in self.loads.items():
            stores = self.stores.get(buffer, [])
            own = self._own_indices(stores)
            uniform = self._uniform_store(stores)
            for load in loads:
                mine = own is not None and load.indices == own
                if mine and any(
                    s.line < load.line and _encloses(s.scope, load.scope) for s in stores
                ):
                    continue  # its own element, written before
                if uniform and uniform.line < load.line and uniform.indices == load.indices:
                    continue  # the value every invocation stored there before
                if not self._synchronized(stores, load):
                    return True
        return False

    def _follow_thread_ids(self, text: str) -> None:
        if tid := _THREAD_ID.match(text):
            self.per_thread.add(tid.group(1))
            return
        # a value computed from one that depends on the thread id, or a loop counter that
        # starts from a thread's offset
        defined = _FOR.search(text) or _DEF.match(text)
        if defined:
            operands = text[defined.end(1) :]
            if set(re.findall(_NAME, operands)) & self.per_thread:
                self.per_thread.add(defined.group(1))

    def _follow_uniform(self, text: str, scope: tuple[int, ...]) -> None:
        """Names that every invocation computes alike: defined in the function's top region by
        a one-line op with no region, from constants, workgroup ids, interface bindings and
        other such names, or loaded at such indices from a buffer the function never writes
        (checked when used: ``_uniform_store``)."""
        defined = _DEF.match(text)
        opens_region = text.count("{") != text.count("}")
        if len(scope) != 1 or not defined or opens_region or not _UNIFORM_SOURCE.search(text):
            return
        operands = set(re.findall(_NAME, text[defined.end() :]))
        if operands <= self.uniform and not operands & self.per_thread:
            self.uniform.add(defined.group(1))
            if load := _LOAD.match(text):
                self.uniform_loads.append(load.group(1))

    def _uniform_store(self, stores: list[_Access]) -> _Access | None:
        """The buffer's one store, if it is in the function's top region and stores a value
        at indices every invocation computes alike: then every invocation writes the same
        value to the same element before any of them reads it back."""
        if len(stores) != 1 or len(stores[0].scope) != 1 or stores[0].value not in self.uniform:
            return None
        (store,) = stores
        if not set(re.findall(_NAME, store.indices)) <= self.uniform:
            return None
        if any(buffer in self.written or buffer in self.shared for buffer in self.uniform_loads):
            return None  # a value read from memory that invocations write
        return store

    def _own_indices(self, stores: list[_Access]) -> str | None:
        """The indices every write uses, if each invocation's depend on its thread id."""
        written = {s.indices for s in stores}
        if len(written) != 1:
            return None
        (indices,) = written
        if not set(re.findall(_NAME, indices)) & self.per_thread:
            return None  # a constant or a shared counter: every invocation's same element
        return indices

    def _synchronized(self, stores: list[_Access], load: _Access) -> bool:
        return all(self._ordered(store, load) for store in stores)

    def _ordered(self, store: _Access, load: _Access) -> bool:
        """Whether a barrier separates ``store`` and ``load`` whichever runs first: within one
        turn (a barrier between their lines) and, for every loop around both, from one turn
        to the next (a barrier in the loop after the later line or before the earlier)."""
        first, last = sorted((store.line, load.line))
        fences = [
            b for b in self.barriers
            if _encloses(b.scope, store.scope) and _encloses(b.scope, load.scope)
        ]  # fmt: skip
        if not any(first < b.line < last for b in fences):
            return False
        common = [r for r, o in zip(store.scope, load.scope) if r == o]
        return all(
            any(loop in b.scope and not first < b.line < last for b in fences)
            for loop in common
            if loop in self.loops
        )


def racy_functions(ir_text: str) -> list[str]:
    """The functions of one executable's pre-SPIR-V IR ``ir_text`` that may race on
    workgroup memory (workgroup memory outside any function counts as the first's)."""
    found: list[str] = []
    parts = _FUNC.split(ir_text)  # [before, name, body, name, body, ...]
    names, bodies = parts[1::2], parts[2::2]
    if names and _WORKGROUP in _STRING.sub('""', parts[0]):
        found.append(names[0])
    subgroup = _SUBGROUP.search(ir_text)
    for name, body in zip(names, bodies):
        if _one_uniform_subgroup(body, int(subgroup.group(1)) if subgroup else 0):
            continue
        if _analyse(body).may_race() and name not in found:
            found.append(name)
    return found


def _one_uniform_subgroup(body: str, subgroup: int) -> bool:
    """Whether every invocation of the function's workgroup runs the same code on the same
    data within one subgroup: no thread id read, and no more invocations than a subgroup."""
    size = _BLOCK_SIZE.search(body.split("\n", 1)[0])
    if size is None or "gpu.thread_id" in body:
        return False
    x, y, z = (int(n) for n in size.groups())
    return x * y * z <= subgroup


def _analyse(body: str) -> _Function:
    lines = body.splitlines()
    function = _Function()
    scopes: list[int] = []
    opened = 0
    for number, line in enumerate(lines):
        function.read(number, line, tuple(scopes))
        text = _STRING.sub('""', line)
        for char in text:
            if char == "{":
                opened += 1
                scopes.append(opened)
                if _LOOP.search(text):
                    function.loops.add(opened)
            elif char == "}" and scopes:
                scopes.pop()
    return function


def racy_dispatches(directory: Path) -> list[str]:
    """The dispatch functions dumped under ``directory`` that may race on workgroup memory."""
    return [f for path in dump_files(directory) for f in racy_functions(path.read_text("utf-8"))]
