"""``Graph.save``: a recorded builder graph written as an ahead-of-time module (``vkml.aot``)
computes, loaded again or under IREE's own ``iree-run-module``, the bits ``g()`` computes, with
its device conditions and device loops inside the module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

TOOLS = Path(sys.executable).parent
DEVICES = [vkml.cpu]
if vkml.runtime.vulkan_loader.vulkan_device_reports():
    DEVICES.append(vkml.device("vulkan:0"))

X = np.array([[1.5, -2.0, 3.25], [0.5, 7.0, -1.0]], np.float32)


def stepped(weight: vkml.Tensor):
    @vkml.Graph.builder
    def settle(x, limit):
        steps = x.sum() * 0.0
        while x.amax() < limit:  # a device loop: its turns depend on the data
            x = x * 2.0 + weight  # a realized tensor it closes over: a parameter
            steps = steps + 1.0
        if steps > 3.0:  # a device condition
            x = -x
        return x, steps

    return settle


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_a_saved_graph_computes_what_its_launch_computes(
    device: vkml.Device, tmp_path: Path
) -> None:
    weight = vkml.tensor(np.array([0.25, -0.5, 1.0], np.float32), device=device)
    x = vkml.tensor(X, device=device)
    g = stepped(weight)(x, vkml.tensor(np.float32(40.0), device=device))
    written = g.save(tmp_path / "settle.vmfb")
    assert [p.name for p in written] == ["settle.vmfb", "settle.irpa"]
    loaded = vkml.aot.load(tmp_path / "settle.vmfb", device=device)
    assert loaded.functions == ["settle"]
    for limit in (40.0, 3.0, 1000.0):  # 2, 0 and 9 turns: both arms of the condition
        want = [t.numpy() for t in g.bind(limit=np.float32(limit))()]
        got = loaded.settle(X, np.float32(limit))
        assert len(got) == 2
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype


def test_a_saved_graph_over_a_random_key_runs(tmp_path: Path) -> None:
    key = vkml.random.key(11)

    @vkml.Graph.builder
    def jitter(x):  # type: ignore[no-untyped-def]
        return x + vkml.random.normal(key, x.shape)

    g = jitter(X)
    path = g.save(tmp_path / "jitter.vmfb")[0]  # the key is a uint32 parameter
    np.testing.assert_array_equal(vkml.aot.load(path).jitter(X), g().numpy())


def test_a_saved_graph_runs_under_iree_run_module(tmp_path: Path) -> None:
    g = stepped(vkml.tensor(np.array([0.25, -0.5, 1.0], np.float32)))(X, np.float32(40.0))
    path = g.save(tmp_path / "settle.vmfb")[0]
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "limit.npy", np.float32(40.0))
    run = subprocess.run(
        [str(TOOLS / "iree-run-module"), f"--module={path}", "--device=local-task",
         "--function=settle", f"--parameters=model={path.with_suffix('.irpa')}",
         f"--input=@{tmp_path / 'x.npy'}", f"--input=@{tmp_path / 'limit.npy'}",
         f"--output=@{tmp_path / 'x_out.npy'}", f"--output=@{tmp_path / 'steps.npy'}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    want = [t.numpy() for t in g()]
    np.testing.assert_array_equal(np.load(tmp_path / "x_out.npy"), want[0])
    np.testing.assert_array_equal(np.load(tmp_path / "steps.npy"), want[1])


def test_save_refuses_a_path_that_is_not_a_vmfb_and_writes_nothing(tmp_path: Path) -> None:
    g = stepped(vkml.tensor(np.zeros(3, np.float32)))(X, np.float32(40.0))
    with pytest.raises(ValueError, match=r"\.vmfb"):
        g.save(tmp_path / "settle.bin")
    assert list(tmp_path.iterdir()) == []
    # a folder that does not exist is a mistake to report, not one to make
    with pytest.raises(FileNotFoundError, match=r"folder .*nowhere.* does not exist"):
        g.save(tmp_path / "nowhere" / "settle.vmfb")
    assert list(tmp_path.iterdir()) == []
