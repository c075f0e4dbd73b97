"""``load``: an exported module, ready to call, on a machine with only iree-base-runtime and
NumPy (nothing here imports ``iree.compiler``).

Before anything runs, the file is checked: that it is whole (a ``.vmfb`` is a stored zip
whose entries carry CRC-32s: a flipped byte in compiled code could crash the process, so it is
refused), that it is a vkml artefact (its metadata function and manifest), that this IREE
runtime is the release that built it, that its target is the device's, and that the parameter
archive holds every entry it reads, at the right size. Each refusal is an ``ArtifactError``
naming what differs and the remedy.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vkml.aot.manifest import MANIFEST_KEY, Manifest, Signature, Slot
from vkml.compiler import trust
from vkml.compiler.keys import iree_version
from vkml.devices.iree import IreeDevice
from vkml.devices.registry import cpu
from vkml.dialect.exported_module import METADATA_FUNCTION
from vkml.dtypes import DType, to_dtype
from vkml.errors import ArtifactError, DeviceError, ShapeError, UntrustedPathWarning
from vkml.frontend.host import path_arg, resolve_device
from vkml.frontend.tensor import Tensor
from vkml.runtime.hal import HalSession
from vkml.runtime.parameters import archive_sizes, parameters_module
from vkml.runtime.program import Program, read_module, reflection
from vkml.trace.arguments import in_order


def load(path: str | Path, device: Any = None, parameters: str | Path | None = None) -> Loaded:
    """The module exported to ``path``, loaded on ``device`` (default ``vkml.cpu``).

    Args:
        path: the ``.vmfb`` written by ``Artifact.save`` (or ``vkml compile``).
        device: where to run it: ``vkml.cpu`` or a Vulkan device; it must be the kind of
            device, and for Vulkan the IREE target, the module was exported for.
        parameters: the parameter archive, when the module reads one (default: the
            ``.irpa`` beside ``path``).

    Raises:
        ArtifactError: the file is missing, damaged, not a vkml artefact, built by another
            IREE release or for another target, or its archive does not fit it.
    """
    file = path_arg("aot.load", "path", path)
    archive = None if parameters is None else path_arg("aot.load", "parameters", parameters)
    dev = resolve_device(device)
    if not isinstance(dev, IreeDevice):
        raise DeviceError(f"load: {dev} runs no compiled modules; load on vkml.cpu or vulkan:N")
    module = _module(file, dev.session)
    manifest = _manifest(file, module)
    _check_target(file, manifest, dev)
    imports = []
    if manifest.parameters:
        archive = file.with_suffix(".irpa") if archive is None else archive
        _check_archive(archive, manifest)
        imports.append(parameters_module(dev.session.instance, archive, manifest.scope))
    return Loaded(file, manifest, Program(dev.session, module, imports), dev)


def inspect(path: str | Path) -> Manifest:
    """The manifest of the module exported to ``path``, read without loading it on a device.

    Raises:
        ArtifactError: as ``load``, for the file itself.
    """
    file = path_arg("aot.inspect", "path", path)
    return _manifest(file, _module(file, cpu.session), check_release=False)


class Loaded:
    """An exported module on a device. Call a function by name (``m.predict(x)``,
    ``m["predict"](x)``) or, when the module has one function, call the module itself.

    Inputs are NumPy arrays or realized vkml tensors on the device, one per input, of the
    exported dtype and shape; outputs are NumPy arrays, in the structure the function
    returned them (one array, a tuple, a list or a dict).
    """

    def __init__(
        self, path: Path, manifest: Manifest, program: Program, device: IreeDevice
    ) -> None:
        self.path = path
        self.manifest = manifest
        self.device = device
        self._program = program

    @property
    def functions(self) -> list[str]:
        return [f.name for f in self.manifest.functions]

    def __getitem__(self, name: str) -> Any:
        try:
            signature = self.manifest.function(name)
        except KeyError:
            raise KeyError(
                f"{self.path} has no function {name!r}; it has {self.functions}"
            ) from None
        return lambda *args, **kwargs: self._call(signature, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(str(exc)) from None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(self.manifest.functions) != 1:
            raise TypeError(
                f"{self.path} has {len(self.functions)} functions {self.functions}: call one by name"
            )
        return self._call(self.manifest.functions[0], args, kwargs)

    def _call(self, signature: Signature, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        args = in_order(signature.name, [s.name for s in signature.inputs], args, kwargs)
        views = [self._argument(signature.name, slot, a) for slot, a in zip(signature.inputs, args)]
        shapes = [(s.spec.shape, s.spec.dtype) for s in signature.outputs]
        out = self._program.invoke(
            signature.name, views, len(signature.outputs), self.device.name, shapes
        )
        arrays = [
            self.device.download_result(v, s.spec.dtype) for v, s in zip(out, signature.outputs)
        ]
        if signature.structure == "one":
            return arrays[0]
        if signature.structure == "dict":
            return {s.name: a for s, a in zip(signature.outputs, arrays)}
        return arrays if signature.structure == "list" else tuple(arrays)

    def _argument(self, function: str, slot: Slot, value: Any) -> Any:
        spec = slot.spec
        dtype: DType | None
        if isinstance(value, Tensor):
            if value.device is not self.device:
                raise DeviceError(
                    f"{function}: input {slot.name!r} is on {value.device}, the module is loaded "
                    f"on {self.device}; move it with .to('{self.device}')"
                )
            value.realize()
            shape, dtype, storage = value.shape, value.dtype, value.node.storage
        else:
            array = np.asarray(value)
            shape, storage = array.shape, None
            dtype = spec.dtype if array.dtype == spec.dtype.numpy else None
        if tuple(shape) != spec.shape or dtype is not spec.dtype:
            got = dtype.name if dtype is not None else str(np.asarray(value).dtype)
            raise ShapeError(
                f"{function}: input {slot.name!r} must be {spec.dtype.name}{list(spec.shape)}, "
                f"got {got}{list(shape)}"
            )
        if storage is not None:
            return storage
        return self.device.upload(np.asarray(value), spec.dtype)

    def __repr__(self) -> str:
        return f"Loaded({self.path.name}: {', '.join(self.functions)} on {self.device})"


def _module(file: Path, sess: HalSession) -> Any:
    """The VM module in ``file``, checked first: that no one but its owner could have
    written it (``vkml.compiler.trust``: a module is code vkml runs) and that it is whole."""
    trust.check(file, "module", f"vkml will not load the exported module {file}")
    owner = trust.foreign_owner(file)
    if owner is not None:
        warnings.warn(
            f"{file} belongs to {owner}, not to you: loading it runs code that user wrote. "
            f"Copy it somewhere of your own once you trust it",
            UntrustedPathWarning,
            stacklevel=3,
        )
    data = _read(file)  # raises ArtifactError, a ValueError, itself
    try:
        return read_module(sess, data)
    except ValueError as exc:
        raise ArtifactError(
            f"{file}: IREE runtime {iree_version()} cannot read it ({exc}); if another IREE "
            f"release built it, export it again with this one (or install that release)"
        ) from exc


def _read(file: Path) -> bytes:
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"cannot read {file}: {exc.strerror or exc}") from exc
    if data[:2] == b"PK":  # a stored zip: each entry carries a CRC-32 of its bytes
        try:
            damaged = zipfile.ZipFile(io.BytesIO(data)).testzip()
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ArtifactError(f"{file} is damaged or truncated ({exc}); save it again") from exc
        if damaged is not None:
            raise ArtifactError(
                f"{file} is damaged: its part {damaged!r} does not match its checksum; save it "
                f"again (running it could crash the process)"
            )
    return data


def _manifest(file: Path, module: Any, check_release: bool = True) -> Manifest:
    found = reflection(module, METADATA_FUNCTION)
    if found is None or MANIFEST_KEY not in found:
        raise ArtifactError(
            f"{file} is not a vkml artefact (it has no {METADATA_FUNCTION} function); run it "
            f"with IREE's tools, or export it with vkml.aot.export"
        )
    try:
        manifest = Manifest.from_json(found[MANIFEST_KEY])
    except ValueError as exc:
        raise ArtifactError(f"{file}: {exc}") from exc
    if check_release and manifest.iree != iree_version():
        raise ArtifactError(
            f"{file} was built by IREE {manifest.iree}, this runtime is {iree_version()}; "
            f"export it again with this release, or install iree-base-runtime=={manifest.iree}"
        )
    return manifest


def _check_target(file: Path, manifest: Manifest, device: IreeDevice) -> None:
    target = manifest.target
    flags = list(device.target.flags)
    if (target.get("device_kind"), target.get("name"), target.get("flags")) != (
        device.kind,
        device.target.name,
        flags,
    ):
        raise ArtifactError(
            f"{file} was compiled for {target.get('name')} ({target.get('device_kind')}, flags "
            f"{' '.join(target.get('flags', []))}), and {device} runs {device.target.name} "
            f"(flags {' '.join(flags)}): a module compiled for another target can "
            f"give wrong answers; load it on such a device, or export it again for {device}"
        )


def _check_archive(archive: Path, manifest: Manifest) -> None:
    if not archive.is_file():
        raise ArtifactError(
            f"the module reads {len(manifest.parameters)} parameters from an archive, and "
            f"{archive} does not exist; pass parameters='path/to/weights.irpa'"
        )
    try:
        sizes = archive_sizes(archive)
    except ValueError as exc:
        raise ArtifactError(f"{archive} is not a parameter archive IREE can read ({exc})") from exc
    for key, entry in manifest.parameters.items():
        spec_bytes = int(np.prod(entry["shape"], dtype=np.int64)) * _itemsize(entry["dtype"])
        if key not in sizes:
            raise ArtifactError(
                f"{archive} has no entry {key!r}, which the module reads; export it again"
            )
        if sizes[key] != spec_bytes:
            raise ArtifactError(
                f"{archive}: entry {key!r} holds {sizes[key]} bytes, the module reads "
                f"{entry['dtype']}{entry['shape']} ({spec_bytes} bytes)"
            )


def _itemsize(dtype: str) -> int:
    return to_dtype(dtype).itemsize
