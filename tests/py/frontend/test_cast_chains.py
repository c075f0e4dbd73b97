"""Casts, alone and two in a row, on every device bit for bit against the reference.

A chain ``x.astype(b).astype(c)`` must round at the ``b`` step exactly as the reference does:
IREE 3.13's codegen drops a bfloat16 rounding that sits between two wider values
(``f16 -> bf16 -> f32`` read back as the float16 value unrounded), so the chains are checked
in one module per source dtype, where such folds happen. Elements the contract leaves open
are masked: a float -> integer cast of NaN, an infinity or a value out of range
(docs/contracts.md, "Casts"), and on ``cpu`` a float32/float64/bfloat16 subnormal anywhere in
the chain (flushed there, "Subnormals on cpu").
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import vkml
from vkml.runtime.vulkan_loader import vulkan_device_reports

DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "uint32", "bool")
DEVICES = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
FLOATS = ("float64", "float32", "float16", "bfloat16")
FLUSHED_ON_CPU = ("float64", "float32", "bfloat16")
# NaNs with payloads, quiet and signalling, of each sign: each cast keeps them NaN
NAN_PAYLOADS = {
    "float64": [0x7FF0000000000001, 0xFFF8000000000001, 0x7FF4000000000000],
    "float32": [0x7F800001, 0xFFC00001, 0x7FA00000],
    "float16": [0x7C01, 0xFD55, 0x7E01],
    "bfloat16": [0x7F81, 0xFFD5, 0x7FC1],
}


def _numpy(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _values(name: str) -> np.ndarray:
    """Values of dtype ``name`` where casts go wrong: rounding ties of every narrower float,
    the edges of each range, signed zeros, subnormals, infinities and NaN."""
    if name == "bool":
        return np.array([False, True])
    ints = [0, 1, -1, 7, -7, 257, -257, 2049, 65504, 65520, 2**24 + 1, 2**24 + 2**16 + 1,
            -(2**24 + 2**16 + 1), 2**31 - 1, -(2**31), 2**32 - 1, 2**53 + 1, 2**63 - 1, -(2**63)]  # fmt: skip
    if name.startswith(("int", "uint")):
        info = np.iinfo(name)
        kept = [v for v in ints if info.min <= v <= info.max]
        return np.array(kept + [info.min, info.max], dtype=np.int64).astype(name)
    floats = [float(v) for v in ints] + [
        0.0, -0.0, 1 / 3, -6.664, 0.1, 1.00048828125, 1.0009765625, 256.5, 3.0e38, -3.0e38,
        1e300, 6.1e-5, 6.0e-8, 2.0**-24 * 1.5, 1.2e-38, 1e-40, -1e-45, 1e-310,
        np.inf, -np.inf, np.nan, -np.nan,
    ]  # fmt: skip
    dtype = _numpy(name)
    info = ml_dtypes.finfo(dtype)
    edges = [float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal)]
    with np.errstate(all="ignore"):
        values = np.array(floats + edges, dtype=np.float64).astype(dtype)
    bits = np.array(NAN_PAYLOADS[name], dtype=values.view(_bits(values).dtype).dtype)
    return np.concatenate([values, bits.view(dtype)])


def _cast(x: np.ndarray, name: str) -> np.ndarray:
    """The reference device's cast, in NumPy (to read which elements the contract leaves open)."""
    t = vkml.tensor(x, device=vkml.reference).astype(vkml.dtypes.to_dtype(name))
    return t.numpy()


def _wide(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # ml_dtypes warns on a bfloat16 NaN
        return a.astype(np.float64)


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype == _numpy("bfloat16")


def _open(before: np.ndarray, after: str) -> np.ndarray:
    """Elements whose cast from ``before`` to ``after`` the contract does not pin: a float to
    an integer of NaN, an infinity or a value out of the integer's range."""
    if not _is_float(before) or after in FLOATS + ("bool",):
        return np.zeros(before.shape, bool)
    wide = _wide(before)
    info = np.iinfo(after)
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(wide) | (wide <= info.min - 1.0) | (wide >= info.max + 1.0)


def _subnormal(a: np.ndarray) -> np.ndarray:
    """Elements that ``cpu`` flushes: float32, float64 and bfloat16 subnormals."""
    if a.dtype.name not in FLUSHED_ON_CPU and a.dtype != _numpy("bfloat16"):
        return np.zeros(a.shape, bool)
    tiny = float(ml_dtypes.finfo(a.dtype).tiny)
    wide = np.abs(_wide(a))
    return (wide > 0) & (wide < tiny)


def _nan(a: np.ndarray) -> np.ndarray:
    """NaN elements: any NaN matches any NaN (payloads are not promised, docs/contracts.md)."""
    return np.isnan(_wide(a)) if _is_float(a) else np.zeros(a.shape, bool)


def _bits(a: np.ndarray) -> np.ndarray:
    if a.dtype == bool:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _chains(source: str, dev: vkml.Device) -> list[tuple[str, ...]]:
    usable = [d for d in DTYPES if dev.supports("astype", vkml.dtypes.to_dtype(d))]
    if source not in usable:
        return []
    singles = [(source, b) for b in usable if b != source]
    doubles = [(source, b, c) for b, c in itertools.product(usable, usable) if source != b != c]
    return singles + doubles


# every source on cpu; on vulkan:0 the sources of one width class each (a cast to every
# dtype from each), the others with make test-exhaustive
VULKAN_SOURCES = ("float32", "float16", "int32", "bool")


def _cast_cases() -> list[object]:
    return [
        pytest.param(device, source, marks=pytest.mark.exhaustive)
        if device != "cpu" and source not in VULKAN_SOURCES
        else pytest.param(device, source)
        for device in DEVICES
        for source in DTYPES
    ]


@pytest.mark.parametrize(("device", "source"), _cast_cases())
def test_casts_and_cast_chains_round_like_the_reference(device: str, source: str) -> None:
    dev = vkml.device(device)
    chains = _chains(source, dev)
    if not chains:
        pytest.skip(f"{device} has no {source}")
    x = _values(source)
    got_tensors = []
    for chain in chains:
        t = vkml.tensor(x, device=dev)
        for name in chain[1:]:
            t = t.astype(vkml.dtypes.to_dtype(name))
        got_tensors.append(t)
    vkml.realize(*got_tensors)  # one module: the folds IREE does across casts happen here
    wrong = []
    for chain, t in zip(chains, got_tensors):
        steps = [x]
        mask = np.zeros(x.shape, bool)
        for name in chain[1:]:
            mask |= _open(steps[-1], name)
            steps.append(_cast(steps[-1], name))
        if device == "cpu":
            for s in steps:
                mask |= _subnormal(s)
        got, want = t.numpy(), steps[-1]
        assert got.dtype == want.dtype, f"{' -> '.join(chain)}: {got.dtype} != {want.dtype}"
        differ = (_bits(got) != _bits(want)) & ~mask & ~(_nan(got) & _nan(want))
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            wrong.append(
                f"{' -> '.join(chain)}: {int(differ.sum())} differ, first {x[i]!r} -> "
                f"{got[i]!r}, reference {want[i]!r}"
            )
    assert not wrong, f"{device}:\n" + "\n".join(wrong)
