"""The calling convention (vkml/compiler/abi.py): written by the lowering, stored with each
cache entry, read back exactly, and refused when malformed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vkml
from vkml.compiler.abi import ABI_VERSION, Abi, TensorSpec
from vkml.compiler.cache import CompileCache, cache_key
from vkml.compiler.lower import lower
from vkml.compiler.target import CPU_TARGET
from vkml.dtypes import float32, int64
from vkml.graph.walk import toposort
from vkml.runtime.stats import snapshot


def _lowered(*tensors: vkml.Tensor, **options: bool):  # type: ignore[no-untyped-def]
    roots = [t.node for t in tensors]
    return lower(toposort(roots), roots, **options)


def test_lowering_writes_leaves_in_and_roots_out() -> None:
    x = vkml.tensor(np.ones((2, 3), np.float32))
    y = vkml.tensor(np.ones(3, np.float32))
    abi = _lowered(x + y, (x - y).argmax()).abi
    assert abi.function == "main"
    assert abi.inputs == (TensorSpec(float32, (2, 3)), TensorSpec(float32, (3,)))
    assert abi.outputs == (TensorSpec(float32, (2, 3)), TensorSpec(int64, ()))
    assert (abi.output_args, abi.fence) == (False, False)
    assert abi.argument_count == 2


def test_a_float_multiply_takes_the_fence_last_and_vulkan_takes_output_buffers() -> None:
    x = vkml.tensor(np.ones(4, np.float32))
    product = _lowered(x * x, output_args=True, fence_float_ops=True)
    assert (product.abi.output_args, product.abi.fence, product.abi.argument_count) == (
        True,
        True,
        3,
    )
    assert "%fence: tensor<i32>" in product.text
    on_cpu = _lowered(x * x).abi
    assert (on_cpu.output_args, on_cpu.fence, on_cpu.argument_count) == (False, True, 2)


@pytest.mark.parametrize(("queued", "transients"), [(False, False), (True, False), (True, True)])
def test_manifest_round_trips_byte_for_byte(queued: bool, transients: bool) -> None:
    specs = (TensorSpec(float32, (2, 0)),), (TensorSpec(int64, ()),)
    abi = Abi("main", *specs, True, True, queued, transients, (TensorSpec(float32, (3,)),))
    text = abi.to_json()
    assert Abi.from_json(text) == abi
    assert Abi.from_json(text).to_json() == text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ("[]", "must be a JSON object"),
        ('{"abi_version": 99}', "version 99 is not"),
        (f'{{"abi_version": {ABI_VERSION}, "function": 3}}', "'function' must be a str"),
        (
            (
                f'{{"abi_version": {ABI_VERSION}, "function": "main", "inputs": [{{"dtype": "float32", '
                f'"shape": [-1]}}], "outputs": [], "output_args": false, "fence": false}}'
            ),
            "malformed tensor",
        ),
        (
            (
                f'{{"abi_version": {ABI_VERSION}, "function": "main", "inputs": [{{"dtype": "complex7", '
                f'"shape": []}}], "outputs": [], "output_args": false, "fence": false}}'
            ),
            "malformed tensor",
        ),
    ],
)
def test_malformed_manifest_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Abi.from_json(text)


def test_cache_stores_the_manifest_and_refuses_an_entry_of_another_abi(tmp_path: Path) -> None:
    x = vkml.tensor(np.ones(3, np.float32))
    lowered = _lowered(x + x)
    key = cache_key(lowered.text, CPU_TARGET)
    CompileCache(tmp_path).get_or_compile(lowered.text, CPU_TARGET, lowered.abi)
    assert CompileCache(tmp_path).manifest_of(key) == lowered.abi

    other = Abi("main", lowered.abi.inputs, lowered.abi.outputs, output_args=True)
    before = snapshot()["compiles"]
    CompileCache(tmp_path).get_or_compile(lowered.text, CPU_TARGET, other)
    assert snapshot()["compiles"] == before + 1  # not loaded: compiled again, for ``other``
    assert CompileCache(tmp_path).manifest_of(key) == other
