"""``reference``: the schedule interpreted with NumPy (``vkml.ops`` reference
implementations), exact to vkml's contracts: the oracle the compiled devices are checked
against."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.devices.device import Call, Device
from vkml.dtypes import DType
from vkml.graph.node import Node
from vkml.graph.walk import run_region
from vkml.ops.registry import OPS
from vkml.runtime import bump


class ReferenceDevice(Device):
    """NumPy interpretation of the graph, exact to vkml's contracts and slow by design."""

    kind = "reference"

    def upload(self, array: np.ndarray, dtype: DType) -> np.ndarray:
        host = np.array(array, dtype=dtype.numpy, copy=True, order="C")
        host.flags.writeable = False
        return host

    def download(self, storage: np.ndarray, dtype: DType, copy: bool = True) -> np.ndarray:
        return np.array(storage, copy=True) if copy else storage  # storage is read-only

    def host_memory(self, storage: np.ndarray, dtype: DType) -> np.ndarray:
        return storage  # read-only already

    def share_host(self, array: np.ndarray, dtype: DType) -> np.ndarray:
        shared = array.view(dtype.numpy)
        shared.flags.writeable = False
        return shared

    def prepare(self, schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[Call, list[Node]]:
        leaves = [node for node in schedule if node._computed]
        # the side table: one value per topological position, nothing written on the nodes
        position = {node: i for i, node in enumerate(schedule)}
        # which nodes are leaves is decided now: the roots are computed after the first call
        steps = [
            (node, node._computed, [] if node._computed else [position[s] for s in node.src])
            for node in schedule
        ]
        outputs = [position[r] for r in roots]

        def call(storages: Sequence[Any]) -> list[Any]:
            given = iter(storages)
            values: list[np.ndarray] = []
            for node, is_leaf, srcs in steps:
                if is_leaf:
                    values.append(next(given))
                    continue
                values.append(interpret(node, [values[i] for i in srcs]))
            bump("invocations")
            results = []
            for i in outputs:
                result = values[i]
                result.flags.writeable = False
                results.append(result)
            return results

        return call, leaves


def interpret(node: Node, inputs: list[np.ndarray]) -> np.ndarray:
    """``node``'s value from its inputs' values, by its op's reference implementation; a node
    that owns regions hands it one interpreter per region in ``attrs["regions"]`` (called
    with the values of the region's parameters, it returns its results' values)."""
    attrs = dict(node.attrs)
    if node.regions:
        attrs["regions"] = tuple(
            functools.partial(run_region, r, evaluate=interpret) for r in node.regions
        )
    out = OPS[node.op].reference(inputs, node.dtype, node.shape, attrs)
    if isinstance(out, tuple):  # a node with several results, each read by a result node
        return out  # type: ignore[return-value]
    if out.dtype != node.dtype.numpy or out.shape != node.shape:
        raise AssertionError(
            f"reference '{node.op}' gave {out.dtype}{out.shape}, "
            f"expected {node.dtype.numpy}{node.shape}"
        )
    return out
