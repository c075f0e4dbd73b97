"""MLIR text -> vkml's passes for the target -> IREE -> ``.vmfb`` bytes, with the checks of
IREE's Vulkan code: workgroup races, and the loop budget for drivers that cap shader loops
(ADR 0012)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vkml.compiler import dispatch_dump, loop_budget, workgroup_races
from vkml.compiler.target import Target
from vkml.dialect.compile_hints import WIDE_FUSION
from vkml.dialect.ir import CompilerCrash, CompilerToolError, compile_stablehlo
from vkml.errors import CompileError, CompileMemoryError, ConfigError
from vkml.passes import isolate_relayouts, split_contractions
from vkml.passes.pipelines import options_for, pipeline_for
from vkml.passes.run import run_passes

TIMEOUT_ENV = "VKML_COMPILE_TIMEOUT"
DEFAULT_TIMEOUT_S = 600.0
MEMORY_ENV = "VKML_COMPILE_MEMORY"
# Of this machine's memory, the share one compile may use by default: a compile past it is
# stopped (and the graph split, ``vkml.devices.realize``) before the host's out-of-memory
# killer picks a process; a fuzzed 3,747-op graph once took IREE to 23.7 GB of 24.
DEFAULT_MEMORY_SHARE = 0.75
# Asked for where the text carries compile_hints.WIDE_FUSION (on cpu), and dropped if IREE
# fails with it.
AGGRESSIVE_FUSION = "--iree-dispatch-creation-enable-aggressive-fusion"
# What iree-compile (LLVM, OpenBLAS, the C++ runtime) prints when an allocation fails.
_OUT_OF_MEMORY = (
    "out of memory", "Allocation failed", "bad_alloc", "Memory allocation",
    "failed to map segment",  # too little address space to load iree-compile's library
)  # fmt: skip


def run_pipeline(text: str, target: Target) -> bytes:
    """Run the vkml pipeline for the target, then IREE, over ``text``; return the ``.vmfb``
    bytes.

    For a Vulkan target, IREE's code for each dispatch is read back and checked: that no
    shader invocation may read workgroup memory before another one wrote it
    (``workgroup_races``; such a module is compiled again with every transpose, broadcast,
    reverse and contraction reading a stored value, ``vkml-isolate-relayouts``), and, where the driver
    caps shader loops, that no dispatch's loops can run into the cap (``loop_budget``). Long contractions are cut into
    chunks first (``vkml-split-contractions``); how many iterations IREE gives one chunk
    depends on its tiling for the shapes, so when a dispatch is still over the cap and
    smaller chunks can help, the module is compiled again with chunks as many times smaller
    as needed.

    Raises:
        CompileError: IREE failed, or a dispatch could race or run past the loop cap.
    """
    if target.backend != "vulkan-spirv":
        assert target.loop_cap is None, "only a Vulkan target has a loop cap to check"
        names = pipeline_for(target.backend)
        rewritten = run_passes(text, names, options_for(target.backend))
        if WIDE_FUSION in text:
            try:
                return _iree(rewritten, target, [AGGRESSIVE_FUSION])
            except CompileMemoryError:
                raise
            except CompileError:
                pass  # IREE failed with the flag on some modules: compile it as any other
        return _iree(rewritten, target, [])
    chunk, isolate = split_contractions.CHUNK, False
    while True:
        vmfb, over, racy = _compile_checked(text, target, chunk, isolate)
        if racy:
            if isolate or not isolate_relayouts.may_change(text):
                raise _race_error(racy, target)
            isolate = True
            continue
        if not over:
            return vmfb
        assert target.loop_cap is not None  # only a capped target has budgets to exceed
        smaller = _smaller_chunk(chunk, over, target.loop_cap)
        if smaller is None or not split_contractions.splits(text, smaller):
            raise _over_cap_error(over, target)
        chunk = smaller


def _compile_checked(
    text: str, target: Target, chunk: int, isolate: bool
) -> tuple[bytes, list[loop_budget.Budget], list[str]]:
    """One Vulkan compile: the module, the dispatches over the loop cap, the racy ones."""
    options = dict(options_for(target.backend))
    if target.loop_cap is not None:
        options[split_contractions.ARGUMENT] = {"chunk": chunk}
    names = pipeline_for(target.backend, target.loop_cap, isolate_relayouts=isolate)
    rewritten = run_passes(text, names, options)
    with tempfile.TemporaryDirectory(prefix="vkml-dispatches-") as dump:
        vmfb = _iree(rewritten, target, dispatch_dump.dump_flags(Path(dump)))
        cap = target.loop_cap
        over = loop_budget.over_budget(Path(dump), cap) if cap is not None else []
        racy = workgroup_races.racy_dispatches(Path(dump))
    return vmfb, over, racy


def compile_timeout() -> float | None:
    """``$VKML_COMPILE_TIMEOUT`` in seconds (default 600; ``0``: no limit).

    Raises:
        ConfigError: the value is not a number of seconds.
    """
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(
            f"{TIMEOUT_ENV}={raw!r} is not a number of seconds; set it to the seconds one "
            f"compile may take (default {DEFAULT_TIMEOUT_S:g}), or 0 for no limit"
        )
    return seconds or None


def compile_memory() -> int | None:
    """``$VKML_COMPILE_MEMORY`` in GiB as bytes: the address space one iree-compile may use
    (default 75% of this machine's memory; ``0``: no limit).

    Raises:
        ConfigError: the value is not a number of GiB.
    """
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            return None
        return int(total * DEFAULT_MEMORY_SHARE)
    try:
        gib = float(raw)
    except ValueError:
        gib = -1.0
    if not math.isfinite(gib) or gib < 0:
        raise ConfigError(
            f"{MEMORY_ENV}={raw!r} is not a number of GiB; set it to the memory one compile "
            f"may use (default {DEFAULT_MEMORY_SHARE:.0%} of this machine's), or 0 for no limit"
        )
    return int(gib * 2**30) or None


def _iree(text: str, target: Target, extra_flags: list[str]) -> bytes:
    timeout, memory = compile_timeout(), compile_memory()
    size = f"a module of about {text.count(' = '):,} operations"
    split = (
        "Split the graph: realize a tensor half-way (vkml.realize(t)) so that each compile is "
        "smaller"
    )
    flags = [*target.iree_flags, *extra_flags]
    try:
        return compile_stablehlo(text, target.backend, flags, timeout, memory)
    except (CompilerCrash, CompilerToolError) as exc:
        said = exc.stderr if isinstance(exc, CompilerCrash) else str(exc)
        if memory is None or not any(words in said for words in _OUT_OF_MEMORY):
            raise _failure(exc, size, split, target) from exc
        raise CompileMemoryError(
            f"IREE's compiler needed more than its {memory / 2**30:.1f} GiB ({MEMORY_ENV}) "
            f"on {size} for {target.name} and was stopped. {split}, or let it use more: "
            f"{MEMORY_ENV}=<GiB> (0: no limit)"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise CompileError(
            f"IREE's compiler ran for more than {timeout:g} s on {size} for {target.name} and "
            f"was stopped ({TIMEOUT_ENV}). {split}, or give it more time: "
            f"{TIMEOUT_ENV}=<seconds> (0: no limit)"
        ) from exc


def _failure(
    exc: CompilerCrash | CompilerToolError, size: str, split: str, target: Target
) -> CompileError:
    """The error of a compile that crashed or failed for a reason other than memory."""
    if isinstance(exc, CompilerCrash):
        return CompileError(
            f"IREE's compiler crashed ({_signal_name(exc.signal)}) on {size} for "
            f"{target.name}. {split}, and report the module to vkml (vkml.emit_mlir(t) "
            f"prints it)"
        )
    return CompileError(f"IREE could not compile {size} for {target.name}: {exc}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _smaller_chunk(chunk: int, over: Sequence[loop_budget.Budget], cap: int) -> int | None:
    """The chunk that brings the worst budget under ``cap`` if the budget scales with it, or
    ``None`` when no chunk would (an unbounded loop, or the chunk is as small as it goes)."""
    if any(b.iterations is None for b in over):
        return None
    worst = max(b.iterations for b in over if b.iterations is not None)
    smaller = chunk >> math.ceil(math.log2(worst / cap))
    return smaller if smaller >= split_contractions.MIN_CHUNK else None


# how a refusal of a module that could give a wrong answer ends, whatever the reason
_REFUSED = (
    "vkml refuses to run it rather than return a wrong answer. Realize this graph on another "
    "device, e.g. vkml.tensor(t.numpy(), device=vkml.cpu), and report the graph to vkml"
)


def _over_cap_error(over: Sequence[loop_budget.Budget], target: Target) -> CompileError:
    worst = over[0]
    runs = "an unbounded number of" if worst.iterations is None else f"{worst.iterations:,}"
    more = f" ({len(over) - 1} more dispatches over the cap)" if len(over) > 1 else ""
    return CompileError(
        f"dispatch {worst.function} could run {runs} loop iterations per shader invocation "
        f"on {target.name}, whose driver silently stops a shader after {target.loop_cap:,} "
        f"(loop trip counts {list(worst.loops)}){more}; {_REFUSED}: its lowering should have "
        f"kept the loop short"
    )


def _race_error(racy: Sequence[str], target: Target) -> CompileError:
    more = f" ({len(racy) - 1} more such dispatches)" if len(racy) > 1 else ""
    return CompileError(
        f"dispatch {racy[0]} could read workgroup memory that another shader invocation "
        f"writes, with no barrier between them, on {target.name} (IREE's SPIR-V code for "
        f"it, even with every transpose, broadcast, reverse and contraction reading stored "
        f"values){more}; {_REFUSED}"
    )
