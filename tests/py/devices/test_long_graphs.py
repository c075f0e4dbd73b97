"""Long graphs (issue 30, "compiles that scale"): a graph of more than ``PART_NODES``
pending nodes is realized in consecutive parts (vkml/devices/realize.py
``_realize_in_segments``), each part a module of its own, parts of one structure sharing
one; a module IREE's compiler needs more memory for than ``VKML_COMPILE_MEMORY`` allows is
split in halves; either way, the bits the whole graph would have given."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import vkml
import vkml.devices.realize as realize_module
import vkml.runtime.vulkan_loader
from vkml.compiler import compile as compile_module

DEVICES = ["cpu"] + (["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else [])


def chain(device: str, steps: int) -> vkml.Tensor:
    y = vkml.tensor(np.linspace(-1.0, 1.0, 8, dtype=np.float32), device=device)
    for i in range(steps):
        y = (y * 1.0001 + 0.5) if i % 2 else (y - 0.25) * 0.999
    return y


@pytest.mark.parametrize("device", DEVICES)
def test_a_long_chain_is_realized_in_parts_that_share_a_module(
    device: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(realize_module, "PART_NODES", 120)
    y = chain(device, 600)  # 2,400 nodes, numbers included: 20 parts
    before = vkml.stats()
    got = y.numpy()
    after = vkml.stats()
    assert after["invocations"] - before["invocations"] == 20
    # a loop's parts repeat one structure: a few modules, not twenty
    assert (
        after["compiles"]
        + after["cache_hits_disk"]
        - before["compiles"]
        - before["cache_hits_disk"]
        <= 4
    )
    assert "in 20 parts of up to 120 nodes" in caplog.text
    assert got.tobytes() == chain("reference", 600).numpy().tobytes()


def test_the_parts_leave_every_root_computed_and_nothing_else_pending() -> None:
    y = chain("cpu", 1200)  # 4,800 nodes: three parts of at most 2,000
    z = y * 2.0
    vkml.realize(z, y)
    assert y.is_realized and z.is_realized
    assert np.array_equal(z.numpy(), y.numpy() * np.float32(2.0))


def test_a_compile_past_the_memory_limit_is_split_in_halves(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """IREE's compiler stopped for memory on modules of more than 40 ops (simulated): the
    graph is realized in halves until each part compiles."""
    real = compile_module.compile_stablehlo
    sizes: list[int] = []

    def small_only(text: str, *args: Any) -> bytes:
        sizes.append(text.count(" = "))
        if sizes[-1] > 40:
            raise compile_module.CompilerCrash(6, "LLVM ERROR: out of memory\nAllocation failed")
        return real(text, *args)

    monkeypatch.setattr(compile_module, "compile_stablehlo", small_only)
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path))  # nothing cached
    x = vkml.tensor(np.arange(6, dtype=np.float32))
    y = x
    for k in range(40):
        y = y * vkml.full((6,), 1.0 + k / 64) - vkml.full((6,), 0.125)
    got = y.numpy()
    assert max(sizes) > 40 and any(s <= 40 for s in sizes)
    want = vkml.tensor(np.arange(6, dtype=np.float32), device="reference")
    for k in range(40):
        want = want * vkml.full((6,), 1.0 + k / 64, device="reference") - 0.125
    assert got.tobytes() == want.numpy().tobytes()


def test_a_compile_past_the_memory_limit_names_the_limit_and_the_way_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """For real: 64 MiB of address space is too little for iree-compile itself."""
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("VKML_COMPILE_MEMORY", "0.0625")
    t = vkml.tensor(np.arange(3, dtype=np.float32)) * vkml.full((3,), 5.5)
    with pytest.raises(
        vkml.CompileMemoryError,
        match=r"more than its 0.1 GiB \(VKML_COMPILE_MEMORY\).*VKML_COMPILE_MEMORY=<GiB>",
    ):
        t.numpy()
    assert not t.is_realized
    monkeypatch.delenv("VKML_COMPILE_MEMORY")
    assert t.tolist() == [0.0, 5.5, 11.0]


@pytest.mark.parametrize(("value", "gib"), [("", None), ("0", 0), ("2", 2), (" 0.5 ", 0.5)])
def test_the_memory_limit_reads_gib(
    value: str, gib: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_COMPILE_MEMORY", value)
    got = compile_module.compile_memory()
    if gib is None:  # three quarters of this machine's memory
        assert got is not None and got > 0
    else:
        assert got == (int(gib * 2**30) or None)


@pytest.mark.parametrize("value", ["lots", "-1", "nan"])
def test_a_memory_limit_that_is_not_gib_is_refused(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_COMPILE_MEMORY", value)
    with pytest.raises(
        vkml.ConfigError, match=rf"VKML_COMPILE_MEMORY={value!r} is not a number of GiB"
    ):
        compile_module.compile_memory()
