"""Nodes from host values: uploaded data, scalar constants, filled and counting tensors, and
copies across devices. Everything here works on nodes; ``vkml.frontend.creation`` makes
tensors of them."""

from __future__ import annotations

import math
import operator
import os
from pathlib import Path
from typing import Any

import numpy as np

from vkml.devices.memory import check_fits_memory
from vkml.devices.realize import realize_nodes
from vkml.devices.registry import Device, cpu, device as get_device
from vkml.dtypes import (
    ALL,
    DType,
    default_float,
    default_int,
    from_numpy,
    int64,
    integer_range,
    to_dtype,
)
from vkml.errors import (
    DataError,
    DTypeError,
    ShapeError,
    UnsupportedOperatorError,
    ValueRangeError,
)
from vkml.graph.node import SCALAR, Node, check_shape

Scalar = bool | int | float
_NUMPY_DTYPES = {d.numpy: d for d in ALL}
_SCALAR_TYPES = (bool, int, float, np.bool_, np.integer, np.floating)


def resolve_device(device: Any) -> Device:
    """``device`` (a Device, a name, or None for ``vkml.cpu``) as a Device."""
    return cpu if device is None else get_device(device)


def is_scalar(value: Any) -> bool:
    return isinstance(value, _SCALAR_TYPES)


def python_scalar(value: Any) -> Scalar:
    """A Python or NumPy scalar as a plain Python bool, int or float."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def check_fits(op: str, value: Any, dtype: DType, creating: bool = False) -> None:
    """A scalar must be representable in the integer dtype it is used as: an integer in
    range, a float that is finite (NaN and infinity have no integer value). ``creating``:
    the dtype was asked for (``full``, ``arange``), not taken from a tensor operand."""
    if dtype.is_integer and isinstance(value, (float, np.floating)) and not np.isfinite(value):
        raise ValueRangeError(
            f"'{op}': {float(value)} has no {dtype} value; use a floating-point dtype, "
            f"e.g. dtype=vkml.float32"
        )
    if dtype.is_integer and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        lo, hi = integer_range(dtype)
        if not lo <= int(value) <= hi:
            wider = "int64" if -(2**63) <= int(value) < 2**63 else "float64"
            remedy = (
                f"pass a dtype that holds it, e.g. dtype=vkml.{wider}"
                if creating
                else f"convert the tensor first, e.g. x.astype(vkml.{wider})"
            )
            raise ValueRangeError(
                f"'{op}': the Python integer {value} does not fit {dtype} (range [{lo}, {hi}]); "
                f"{remedy}"
            )


def shape_arg(op: str, shape: Any) -> tuple[int, ...]:
    """A shape given as an int or a sequence of ints; ShapeError naming ``op`` otherwise."""
    if isinstance(shape, np.ndarray) and shape.ndim == 1:
        shape = shape.tolist()
    elif isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        # operator.index, not int(): a shape of (2.5, 3) or "23" is a mistake, not (2, 3)
        out = tuple(operator.index(s) for s in shape)
    except TypeError as exc:
        raise ShapeError(
            f"'{op}': shape {shape!r:.60} is not an integer or a sequence of integers; "
            f"write it as e.g. (2, 3)"
        ) from exc
    if any(s < 0 for s in out):
        raise ShapeError(f"'{op}': negative dimension in shape {out}; dimensions are >= 0")
    check_shape(op, out)
    return out


def number_arg(
    op: str, name: str, value: Any, at_least: float = -math.inf, below: float = math.inf
) -> float:
    """``value`` (a Python or NumPy int or float, not a bool) as a float, finite and in
    ``[at_least, below)``; DTypeError naming ``op`` and ``name`` for anything that is not a
    number, ValueError for a number out of range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise DTypeError(f"'{op}': {name}={value!r:.40} is not a number")
    try:
        number = float(value)
    except OverflowError:  # an int past float64's range
        number = math.inf
    if not (math.isfinite(number) and at_least <= number < below):
        if below < math.inf:
            span = f"in [{at_least:g}, {below:g})"
        else:
            span = f"a finite number >= {at_least:g}" if at_least > -math.inf else "finite"
        raise ValueError(f"'{op}': {name}={value!r:.40} must be {span}")
    return number


def path_arg(op: str, name: str, value: Any) -> Path:
    """A file path given as a ``str`` or ``os.PathLike``; TypeError naming ``op`` otherwise
    (an int would be taken for an open file descriptor)."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(
            f"'{op}': {name}={value!r:.40} is a {type(value).__name__}, not a path; pass a "
            f"str or a pathlib.Path"
        )
    return Path(value)


def output_path_arg(op: str, name: str, value: Any) -> Path:
    """A path to write to (``path_arg``) whose folder exists: vkml does not make folders, so
    a typo in one is a FileNotFoundError naming it, not a new folder."""
    path = path_arg(op, name, value)
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"'{op}': the folder {str(path.parent)!r} of {name}={str(value)!r} does not "
            f"exist; create it first (vkml does not make folders)"
        )
    return path


def host_array(data: Any) -> np.ndarray:
    """``data`` as a NumPy array, with a DataError naming what is wrong with it."""
    if isinstance(data, (str, bytes)):
        raise DataError(
            f"cannot make a tensor from {type(data).__name__} {data!r:.40}: not numeric"
        )
    try:
        array = np.asarray(data)
    except (ValueError, TypeError) as exc:
        raise DataError(
            f"cannot make a tensor from {type(data).__name__}: {exc} (ragged nested lists "
            f"need equal lengths at each level)"
        ) from exc
    if array.dtype.kind == "O" and all(type(v) is int for v in array.flat):
        return array  # Python integers past 64 bits: data_node says which dtype holds them
    if array.dtype.kind in "OUSVcmM" and array.dtype.name != "bfloat16":
        raise DataError(
            f"cannot make a tensor from data of NumPy dtype {array.dtype} "
            f"({type(data).__name__}): vkml tensors hold bool, integer or float numbers"
        )
    return array


def check_data_fits(array: np.ndarray, target: DType) -> None:
    """Data made an integer dtype must hold integers that fit it: ValueRangeError naming the
    first value that does not (an integer out of range, a NaN, an infinity, a float past the
    range), never a silent wrap. A float in range is truncated toward zero, as NumPy does."""
    if not target.is_integer or array.dtype == target.numpy or array.dtype.kind == "b":
        return
    lo, hi = integer_range(target)
    if array.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~((array > lo - 1) & (array < hi + 1))
    elif array.dtype.kind == "O":
        bad = np.asarray(np.frompyfunc(lambda v: not lo <= v <= hi, 1, 1)(array), dtype=bool)
    else:
        if not array.size or (lo <= array.min() and array.max() <= hi):
            return
        bad = (array < lo) | (array > hi)
    if not bad.any():
        return
    value = array.reshape(-1)[int(np.flatnonzero(bad)[0])]
    value = value.item() if isinstance(value, np.generic) else value
    fits_int64 = array.dtype.kind != "f" and -(2**63) <= value < 2**63
    remedy = (
        "dtype=vkml.int64" if fits_int64 else "dtype=vkml.float64 (which holds it approximately)"
    )
    raise ValueRangeError(
        f"vkml.tensor: {value} does not fit {target} (range [{lo}, {hi}]); pass a dtype "
        f"that holds it, e.g. {remedy}, or convert on the host first "
        f"(np.asarray(data).astype(np.{target.numpy.name}) wraps)"
    )


def data_node(data: Any, dtype: Any, device: Any) -> Node:
    """A node holding a copy of ``data`` (numbers, nested lists, a NumPy array), uploaded
    to ``device`` now. Python floats become float32 and ints int64; NumPy keeps its dtype."""
    if type(data) is np.ndarray and dtype is None:
        # the common case kept short: the upload copies, so no astype copy is needed
        target = _NUMPY_DTYPES.get(data.dtype)
        if target is not None:
            dev = cpu if device is None else get_device(device)
            if dev.supports("astype", target):
                if dev.kind != "vulkan":  # a host copy comes first (Vulkan allocates first)
                    check_fits_memory("uploading data", [(data.shape, target)], dev.name)
                return Node("data", target, data.shape, (), (), dev, dev.upload(data, target))
    dev = resolve_device(device)
    array = host_array(data)
    if dtype is not None:
        target = to_dtype(dtype)
    elif isinstance(data, (np.ndarray, np.generic)):
        target = from_numpy(array.dtype)
    elif array.dtype.kind == "f":
        target = default_float
    elif array.dtype.kind in "iuO":  # O: Python integers past 64 bits
        target = default_int
    else:
        target = from_numpy(array.dtype)
    if not dev.supports("astype", target):
        raise UnsupportedOperatorError("tensor", target.name, dev.name)
    check_data_fits(array, target)
    if array.dtype.kind == "O":  # Python integers past 64 bits, made a float dtype
        array = array.astype(np.float64)
    check_fits_memory("uploading data", [(array.shape, target)], dev.name)  # astype copies
    with np.errstate(all="ignore"):
        host = array.astype(target.numpy) if target.kind != "bool" else array != 0
    shape = tuple(int(s) for s in host.shape)
    return Node("data", target, shape, (), (), dev, dev.upload(host, target))


def full_node(
    shape: tuple[int, ...], value: Any, dtype: DType, device: Any, op: str = "full"
) -> Node:
    """A lazy node of ``shape`` with every element ``value`` (which must fit ``dtype``)."""
    check_fits(op, value, dtype)
    return Node("full", dtype, shape, (), (("value", python_scalar(value)),), device)


def iota_node(n: int, device: Any) -> Node:
    """The int64 positions 0, 1, ..., n - 1 on ``device`` (a lazy ``arange``)."""
    attrs = (("start", 0), ("step", 1), ("stop", None))
    return Node("arange", int64, (n,), (), attrs, resolve_device(device))


def scalar_node(value: Any, dtype: DType, device: Any, op: str = "full") -> Node:
    """A Python number given to ``op`` (``x + 1.0``): a 0-d ``scalar`` node, which a module
    compiled for realize reads at run time, so a new value needs no new compile. Each use is
    a node of its own: nodes shared by equal values would make the graph's structure (and so
    its module) depend on which numbers happen to be equal."""
    check_fits(op, value, dtype)
    return Node(SCALAR, dtype, (), (), (("value", python_scalar(value)),), device)


def copy_node(node: Node, device: Any) -> Node:
    """``node``'s value on ``device``: realize, read back, upload (``node`` itself if it is
    there already)."""
    dev = resolve_device(device)
    if dev is node.device:
        return node
    realize_nodes([node])
    host = node.device.download(node.storage, node.dtype, True)
    if not dev.supports("astype", node.dtype):
        raise UnsupportedOperatorError("to", node.dtype.name, dev.name)
    return Node("data", node.dtype, node.shape, (), (), dev, dev.upload(host, node.dtype))
