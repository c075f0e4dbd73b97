"""The manifest of an exported module: what it holds, where it came from, what it keeps.

It is written as JSON into the reflection of the module's metadata function
(``vkml.dialect.exported_module.METADATA_FUNCTION``), so it travels inside the ``.vmfb`` and
``iree-dump-module`` shows it; ``vkml.aot.load`` reads it back (with only iree-base-runtime
installed) and refuses a module whose manifest it cannot trust.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vkml.compiler.abi import TensorSpec
from vkml.dtypes import to_dtype

FORMAT = "vkml-aot/1"
# The reflection key of the manifest in the metadata function, and of a function's signature.
MANIFEST_KEY = "vkml.manifest"
SIGNATURE_KEY = "vkml.signature"
# What every exported module keeps, whatever its target (docs/contracts.md).
CONTRACTS = (
    "pairwise sums (vkml-pairwise-reductions: the fixed tree of docs/contracts.md)",
    "float32 -> float16/bfloat16 rounded in software (vkml-soft-f16)",
    "NaN follows PyTorch (vkml-verify-nan-semantics)",
    "no FMA contraction (the multiply fence, ADR 0007)",
)


@dataclass(frozen=True, slots=True)
class Slot:
    """A named argument or result of an exported function."""

    name: str
    spec: TensorSpec

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.spec.as_json()}


@dataclass(frozen=True, slots=True)
class Signature:
    """An exported function: its name, its inputs and its outputs, in order."""

    name: str
    inputs: tuple[Slot, ...]
    outputs: tuple[Slot, ...]
    # how the outputs were returned: "one", "tuple", "list" or "dict"
    structure: str = "tuple"

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": [s.as_json() for s in self.inputs],
            "outputs": [s.as_json() for s in self.outputs],
            "structure": self.structure,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Signature:
        return cls(
            name=str(data["name"]),
            inputs=tuple(_slot(s) for s in data["inputs"]),
            outputs=tuple(_slot(s) for s in data["outputs"]),
            structure=str(data.get("structure", "tuple")),
        )


@dataclass(frozen=True, slots=True)
class Manifest:
    """Everything ``load`` checks and ``vkml inspect`` prints."""

    module: str
    vkml: str
    iree: str
    target: dict[str, Any]
    passes: tuple[str, ...]
    mlir_sha256: str
    functions: tuple[Signature, ...]
    # the parameter archive the module reads: scope, and each entry's dtype, shape, sha256
    scope: str
    parameters: dict[str, dict[str, Any]]
    contracts: tuple[str, ...] = CONTRACTS

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "module": self.module,
                "vkml": self.vkml,
                "iree": self.iree,
                "target": self.target,
                "passes": list(self.passes),
                "contracts": list(self.contracts),
                "mlir_sha256": self.mlir_sha256,
                "functions": [f.as_json() for f in self.functions],
                "parameters": {"scope": self.scope, "entries": self.parameters},
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Read ``to_json``'s text.

        Raises:
            ValueError: it is not a manifest of this format; the message says what is wrong.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"its vkml manifest is not JSON ({exc})") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise ValueError(
                f"its vkml manifest has format {found!r}, not {FORMAT!r} (the one this vkml "
                f"reads); export it again with this vkml"
            )
        try:
            return cls(
                module=str(data["module"]),
                vkml=str(data["vkml"]),
                iree=str(data["iree"]),
                target=dict(data["target"]),
                passes=tuple(data["passes"]),
                mlir_sha256=str(data["mlir_sha256"]),
                functions=tuple(Signature.from_json(f) for f in data["functions"]),
                scope=str(data["parameters"]["scope"]),
                parameters=dict(data["parameters"]["entries"]),
                contracts=tuple(data["contracts"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"its vkml manifest is malformed ({exc!r})") from exc

    def function(self, name: str) -> Signature:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)


def _slot(data: dict[str, Any]) -> Slot:
    shape = data["shape"]
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise ValueError(f"shape {shape!r} is not a list of non-negative integers")
    return Slot(str(data["name"]), TensorSpec(to_dtype(data["dtype"]), tuple(shape)))


def describe(manifest: Manifest) -> list[str]:
    """``manifest`` as the lines ``vkml inspect`` prints."""

    def slots(items: tuple[Slot, ...]) -> str:
        return ", ".join(f"{s.name}: {s.spec.dtype.name}{list(s.spec.shape)}" for s in items)

    target = manifest.target
    lines = [
        f"module {manifest.module} ({FORMAT}), built by vkml {manifest.vkml} with IREE {manifest.iree}",
        f"target: {target.get('name')} for {target.get('device_kind')} devices, flags "
        + " ".join(target.get("flags", [])),
        "passes: " + ", ".join(manifest.passes),
        "contracts: " + "; ".join(manifest.contracts),
        f"mlir sha256: {manifest.mlir_sha256}",
        "functions:",
    ]
    lines += [f"  {f.name}({slots(f.inputs)}) -> ({slots(f.outputs)})" for f in manifest.functions]
    if manifest.parameters:
        lines.append(f"parameters (scope {manifest.scope!r}, {len(manifest.parameters)} entries):")
        lines += [
            f"  {key}: {e['dtype']}{e['shape']} sha256 {str(e['sha256'])[:16]}"
            for key, e in manifest.parameters.items()
        ]
    else:
        lines.append("parameters: none")
    return lines
