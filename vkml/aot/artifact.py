"""``export``: functions captured on example inputs, compiled into one ``.vmfb`` with their
weights in an IREE parameter archive (``.irpa``), for running without Python.

Each function is captured (``vkml.trace.capture``) and lowered as ``realize`` lowers the same
graph on the same device (the same emitters, vkml's passes, the device's IREE target and
flags), so it computes the same bits. Its inputs become named arguments, and every realized
tensor it reads (a model's weights, a constant it closes over) becomes a **parameter**: a
global the module reads from the archive, so weights are neither baked into the module nor
compiled again when they change. The multiply fence that keeps IREE from fusing
multiply-add (ADR 0007) is a mutable global holding 0 instead of an argument
(``vkml.dialect.exported_module.FENCE_GLOBAL``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vkml.aot.destination import destination
from vkml.aot.manifest import SIGNATURE_KEY, Manifest, Signature, Slot
from vkml.aot.plan import Plan
from vkml.aot.training import step_plan
from vkml.compiler.abi import TensorSpec
from vkml.compiler.atomic import write_atomically
from vkml.compiler.cache import compile_module
from vkml.compiler.keys import iree_version, vkml_version
from vkml.compiler.lower import emit_schedule
from vkml.dialect import exported_module as mod
from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import float64, from_numpy, int64
from vkml.errors import DeviceError, UnsupportedOperatorError
from vkml.frontend.host import output_path_arg
from vkml.graph.node import Node
from vkml.graph.walk import region_nodes
from vkml.nn.step import CompiledStep
from vkml.passes.pipelines import pipeline_for
from vkml.runtime.parameters import write_archive
from vkml.trace.capture import ARGUMENT, ROOT, Captured, capture, parameter_names
from vkml.trace.input_spec import Spec, spec_of

# The parameter scope exported modules read their weights from: ``--parameters=model=...``.
SCOPE = "model"
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def export(
    fn: Callable[..., Any],
    *examples: Any,
    device: Any = None,
    name: str | None = None,
    weights: Any = None,
) -> Artifact:
    """``fn`` captured on ``examples`` and compiled for ``device``, as an artefact to save.

    Args:
        fn: builds tensors from its positional arguments (and anything it closes over).
        examples: one per positional argument of ``fn``: a tensor, a NumPy array or a
            ``vkml.spec(shape, dtype)``; only the shape and dtype are used.
        device: ``vkml.cpu`` (the default) or a Vulkan device: the module is compiled for
            its IREE target, with vkml's passes for it.
        name: the exported function's name (default ``fn.__name__``).
        weights: names for the realized tensors ``fn`` reads: an ``nn.Module`` (its
            parameter and buffer names) or a mapping from names to tensors. Tensors read
            but not named are exported as ``captured0``, ``captured1``, ...

    Raises:
        TraceError: ``fn`` observed a value while being captured (the message names the line).
        UnsupportedOperatorError: the device cannot run an op ``fn`` uses.
        DeviceError: ``device`` is the reference device, or ``fn`` computes on another one.
    """
    fname = name or _name_of(fn)
    _check_symbol("function name", fname)
    artifact = Artifact(device, weights=weights, name=fname)
    return artifact.add(fn, *examples, name=fname)


class Artifact:
    """An exported module: its functions, the parameters they read and, compiled on first
    use, the ``.vmfb``. ``add`` puts another function in; ``save`` writes the files."""

    def __init__(self, device: Any, weights: Any = None, name: str = "module") -> None:
        self.device, self.destination = destination(device)
        _check_symbol("module name", name)
        self.name = name
        self._names = _weight_names(weights)
        self._functions: list[tuple[Signature, str]] = []
        # parameter key -> (global symbol, value), shared by every function that reads it
        self._parameters: dict[str, tuple[str, np.ndarray]] = {}
        self._symbols: dict[Node, str] = {}
        self._uses_fence = False
        self._vmfb: bytes | None = None

    # -- building ----------------------------------------------------------------------------
    def add(self, fn: Callable[..., Any], *examples: Any, name: str | None = None) -> Artifact:
        """Capture ``fn`` on ``examples`` and add it as function ``name`` (default
        ``fn.__name__``); returns the artifact.

        ``fn`` may be a compiled training step (``opt.compile_step(loss_fn)``): it is
        exported as a function of the batch and the state (parameters, optimiser state,
        learning rate) returning the loss and the new state (``vkml.aot.training``).
        """
        fname = self._new_function(name or _name_of(fn))
        if isinstance(fn, CompiledStep):
            specs = self._specs(parameter_names(fn.loss_fn, len(examples)), examples)
            plan = step_plan(fn, specs, self._names)
        else:
            plan = Plan.of(capture(fn, *self._specs(parameter_names(fn, len(examples)), examples)))
        return self._add(fname, plan)

    def add_captured(self, name: str, captured: Captured) -> Artifact:
        """Add a graph captured already (a builder's ``Graph``) as function ``name``: its
        inputs are the arguments, every other leaf a parameter; returns the artifact."""
        return self._add(self._new_function(name), Plan.of(captured))

    def _new_function(self, fname: str) -> str:
        _check_symbol("function name", fname)
        if fname.startswith("__vkml") or any(s.name == fname for s, _ in self._functions):
            raise ValueError(f"export: the module already has a function {fname!r}; pass name=")
        return fname

    def _add(self, fname: str, plan: Plan) -> Artifact:
        device = plan.captured.device
        if device is not None and device is not self.device:
            raise DeviceError(
                f"export: {fname!r} computes on {device}, the module is for {self.device}; "
                f"make its tensors on {self.device}"
            )
        self._functions.append(self._lower(fname, plan))
        self._vmfb = None
        return self

    def _specs(self, names: list[str], examples: tuple[Any, ...]) -> list[Spec]:
        """The examples' shapes and dtypes, on the device the graph is built on."""
        specs = []
        for n, e in zip(names, examples):
            spec = spec_of(n, e)
            if not self.destination.supports("astype", spec.dtype):
                raise UnsupportedOperatorError("input", spec.dtype.name, self.destination.label)
            specs.append(Spec(spec.shape, spec.dtype, self.device))
        return specs

    def _lower(self, name: str, plan: Plan) -> tuple[Signature, str]:
        captured = plan.captured
        dest = self.destination
        for node in [*captured.schedule, *(n for m in captured.schedule for n in region_nodes(m))]:
            if not node._computed and not dest.supports(node.op, node.dtype):
                raise UnsupportedOperatorError(node.op, node.dtype.name, dest.label)
        b = FunctionBuilder(name, fence_float_ops=dest.fences_float_ops, fence_global=True)
        b.float64_math = dest.supports("add", float64) and dest.supports("add", int64)
        arguments: list[Slot] = []

        def leaf(node: Node) -> Value:
            ttype = TensorType(node.shape, node.dtype)
            if node in plan.arguments:
                arguments.append(Slot(plan.arguments[node], TensorSpec(node.dtype, node.shape)))
                return b.arg(ttype, plan.arguments[node])
            return b.global_load(self._parameter(node), ttype)

        values = emit_schedule(b, captured.schedule, captured.roots, leaf)
        results: list[Value] = []
        for _, k in plan.outputs:
            kind, source = captured.sources[k]
            if kind == ROOT:
                results.append(values[captured.schedule.index(captured.roots[source])])
            elif kind == ARGUMENT:
                results.append(values[captured.schedule.index(captured.arguments[source].node)])
            else:  # a realized tensor returned untouched: read from the archive too
                results.append(leaf(source))
        b.ret(results, [n for n, _ in plan.outputs])
        self._uses_fence |= b.uses_fence
        outputs = tuple(
            Slot(n, TensorSpec(captured.outputs[k][1].dtype, captured.outputs[k][1].shape))
            for n, k in plan.outputs
        )
        signature = Signature(name, tuple(arguments), outputs, plan.structure)
        return signature, b.function_text({SIGNATURE_KEY: _json(signature.as_json())})

    def _parameter(self, node: Node) -> str:
        """The global holding realized ``node``'s value, made on first use."""
        found = self._symbols.get(node)
        if found is not None:
            return found
        key = self._names.get(node) or f"captured{len(self._parameters)}"
        while key in self._parameters:
            key += "_"
        symbol = f"p{len(self._parameters)}"
        self._parameters[key] = (symbol, self.device.download(node.storage, node.dtype, True))
        self._symbols[node] = symbol
        return symbol

    # -- the module --------------------------------------------------------------------------
    @property
    def functions(self) -> list[Signature]:
        """The exported functions' signatures, in order."""
        return [s for s, _ in self._functions]

    @property
    def parameters(self) -> dict[str, np.ndarray]:
        """The parameter archive's entries, by key (empty: the module needs no archive)."""
        return {key: value for key, (_, value) in self._parameters.items()}

    def mlir(self) -> str:
        """The module's text before vkml's passes, metadata function included."""
        parts = self._parts()
        body = mod.module(self.name, parts)
        manifest = self.manifest(hashlib.sha256(body.encode()).hexdigest())
        return mod.module(
            self.name, [*parts, mod.metadata_function({"vkml.manifest": manifest.to_json()})]
        )

    def _parts(self) -> list[str]:
        parts = mod.fence_parts() if self._uses_fence else []
        for key, (symbol, value) in self._parameters.items():
            ttype = TensorType(tuple(value.shape), from_numpy(value.dtype))
            parts.append(mod.parameter_global(symbol, SCOPE, key, ttype))
        return parts + [text for _, text in self._functions]

    def manifest(self, mlir_sha256: str = "") -> Manifest:
        """What the module's metadata says: provenance, target, functions, parameters."""
        target = self.destination.target
        return Manifest(
            module=self.name,
            vkml=vkml_version(),
            iree=iree_version(),
            target={
                "name": target.name,
                "backend": target.backend,
                "flags": list(target.flags),
                "device_kind": self.destination.kind,
                "loop_cap": target.loop_cap,
            },
            passes=pipeline_for(target.backend, target.loop_cap),
            mlir_sha256=mlir_sha256,
            functions=tuple(self.functions),
            scope=SCOPE,
            parameters={
                key: {
                    "dtype": from_numpy(value.dtype).name,
                    "shape": list(value.shape),
                    "sha256": hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest(),
                }
                for key, (_, value) in self._parameters.items()
            },
        )

    @property
    def vmfb(self) -> bytes:
        """The compiled module: vkml's passes for the device's target, then IREE (on first
        use; needs iree-base-compiler). Its functions are synchronous, whatever realize uses
        on the device (``Target.queued``): IREE's tools and C callers call them plainly."""
        if self._vmfb is None:
            target = dataclasses.replace(self.destination.target, queued=False)
            self._vmfb = compile_module(self.mlir(), target)
        return self._vmfb

    def save(self, path: str | Path) -> list[Path]:
        """Write the module to ``path`` (a ``.vmfb``) and, when it reads parameters, the
        archive beside it (same name, ``.irpa``); returns the files written.

        Each file is written to a temporary name and renamed into place, so a failure never
        leaves a half-written artefact.
        """
        target = output_path_arg("Artifact.save", "path", path)
        if target.suffix != ".vmfb":
            raise ValueError(f"export: save to a .vmfb path, got {str(path)!r}")
        vmfb = self.vmfb  # compiled before anything is written
        written = []
        if self._parameters:  # the archive first: a module is never left without its weights
            arrays = self.parameters
            archive = target.with_suffix(".irpa")
            written.append(write_atomically(archive, lambda tmp: write_archive(tmp, arrays)))
        written.insert(0, write_atomically(target, vmfb))
        return written

    def command(
        self, path: str | Path, function: str | None = None, data: str | Path | None = None
    ) -> str:
        """The ``iree-run-module`` line that runs ``function`` (default: the first) of the
        module saved at ``path``, reading each input from ``NAME.npy`` and writing each output
        to ``NAME.npy`` (in the folder ``data``, if given)."""
        signature = self.functions[0] if function is None else _find(self.functions, function)
        target = Path(path)
        device = "vulkan" if self.destination.kind == "vulkan" else "local-task"
        words = [
            "iree-run-module",
            f"--module={target}",
            f"--device={device}",
            f"--function={signature.name}",
        ]
        if self._parameters:
            words.append(f"--parameters={SCOPE}={target.with_suffix('.irpa')}")
        folder = Path(data) if data is not None else Path()
        words += [f"--input=@{folder / s.name}.npy" for s in signature.inputs]
        words += [f"--output=@{folder / s.name}.npy" for s in signature.outputs]
        return " ".join(words)

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.functions)
        return f"Artifact({self.name}: {names}; {len(self._parameters)} parameters; {self.destination.label})"


def _weight_names(weights: Any) -> dict[Node, str]:
    """Realized node -> name, from an ``nn.Module`` or a mapping of names to tensors."""
    if weights is None:
        return {}
    if hasattr(weights, "named_parameters") and hasattr(weights, "named_buffers"):
        weights.materialize()
        pairs = [*weights.named_parameters(), *weights.named_buffers()]
    elif isinstance(weights, Mapping):
        pairs = list(weights.items())
    else:
        raise TypeError(
            f"export: weights must be an nn.Module or a mapping from names to tensors, got "
            f"{type(weights).__name__}"
        )
    names: dict[Node, str] = {}
    for key, t in pairs:
        if not isinstance(key, str) or not hasattr(t, "node"):
            raise TypeError(f"export: weights entry {key!r} must map a name to a vkml tensor")
        t.realize()
        names.setdefault(t.node, key)
    return names


def _name_of(fn: Any) -> str:
    return str(getattr(fn, "__name__", "") or type(fn).__name__)


def _check_symbol(what: str, name: Any) -> None:
    if not isinstance(name, str) or not _SYMBOL.fullmatch(name) or name == "<lambda>":
        raise ValueError(
            f"export: the {what} {name!r} is not an identifier (letters, digits, '_'); pass "
            f"name='...'"
        )


def _find(signatures: list[Signature], name: str) -> Signature:
    for s in signatures:
        if s.name == name:
            return s
    raise KeyError(f"the module has no function {name!r}; it has {[s.name for s in signatures]}")


def _json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
