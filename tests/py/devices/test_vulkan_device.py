"""The Vulkan device (lavapipe in CI): every op against the reference device, transfers,
errors. Skipped, with the way to enable it, where no Vulkan device exists."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from support import op_programs as ops_test
from support.devices import needs_vulkan

import vkml
from vkml.ops.registry import OPS

pytestmark = needs_vulkan


@pytest.fixture(scope="module")
def vulkan() -> vkml.Device:
    return vkml.device("vulkan:0")


# every op in one float of each width class and one integer in make test (each dtype is one
# compile of a few hundred dispatches, 20-40 s on lavapipe); the others with make
# test-exhaustive
SWEPT = ("bfloat16", "float64", "int64", "uint32")


@pytest.mark.parametrize(
    "dtype",
    [pytest.param(d, marks=pytest.mark.exhaustive) if d in SWEPT else d for d in ops_test.ALL],
)
def test_every_op_matches_reference_on_vulkan(vulkan: vkml.Device, dtype: str) -> None:
    if not vulkan.supports("add", vkml.dtypes.to_dtype(dtype)):
        pytest.skip(f"{vulkan} does not support {dtype} (its support table refuses it)")
    ops_test.check_against_reference(vulkan, dtype, ops_test.programs_on(vulkan, dtype))


def test_support_table_is_a_subset_of_cpu_and_reference(vulkan: vkml.Device) -> None:
    # support(reference) ⊇ support(cpu) ⊇ support(vulkan)
    for op in OPS:
        for dtype in vkml.dtypes.ALL:
            if vulkan.supports(op, dtype):
                assert vkml.cpu.supports(op, dtype), (op, dtype)
                assert vkml.reference.supports(op, dtype), (op, dtype)
    assert not vulkan.supports("erf", vkml.float64) and vulkan.supports("exp", vkml.float64)


def test_a_value_past_32_bit_indexing_is_refused_before_compiling(vulkan: vkml.Device) -> None:
    """A sum of a 10**10-element broadcast: IREE failed to compile it with a raw
    "failed to legalize operation 'arith.constant' (10000000000 : index)"."""
    huge = vkml.tensor([1.0], device=vulkan).broadcast_to((10**5, 10**5)).sum()
    compiles = vkml.stats()["compiles"]
    with pytest.raises(
        vkml.DeviceMemoryError,
        match=r"\(100000, 100000\).*10,000,000,000 elements.*32-bit.*vkml.cpu",
    ):
        huge.item()
    assert vkml.stats()["compiles"] == compiles
    assert (vkml.tensor([1.0], device=vulkan).broadcast_to((10, 10)).sum()).item() == 100.0


def test_mixed_devices_name_both(vulkan: vkml.Device) -> None:
    a = vkml.tensor(np.zeros((2, 2), np.float32))
    b = vkml.tensor(np.zeros((2, 2), np.float32), device=vulkan)
    with pytest.raises(vkml.DeviceError) as info:
        vkml.matmul(a, b)
    assert str(info.value) == "'matmul' operands are on different devices: cpu and vulkan:0"


def test_transfers_both_ways_keep_bits(vulkan: vkml.Device) -> None:
    x = np.array([1.5, -0.0, np.inf, 3.25], np.float32)
    on = vkml.tensor(x).to(vulkan)
    back = (on * 2.0).to(vkml.cpu)
    assert on.device is vulkan and back.device is vkml.cpu
    assert np.array_equal((x * 2).view(np.uint32), back.numpy().view(np.uint32))


def test_every_spelling_of_a_vulkan_device_names_the_one_device(vulkan: vkml.Device) -> None:
    # "vulkan" once made a second device object for vulkan:0, so two tensors made with
    # device="vulkan" could not meet in one op ("on different devices: vulkan:0 and vulkan:0")
    assert vkml.device("vulkan") is vulkan
    assert vkml.device(" Vulkan:0 ") is vulkan
    a = vkml.tensor(np.ones(3, np.float32), device="vulkan")
    b = vkml.tensor(np.ones(3, np.float32), device="vulkan")
    np.testing.assert_array_equal((a + b).numpy(), np.full(3, 2, np.float32))


def test_asking_for_a_missing_vulkan_device_lists_the_devices(vulkan: vkml.Device) -> None:
    with pytest.raises(vkml.DeviceError, match=r"'vulkan:7'.*cpu, reference.*vulkan:0"):
        vkml.device("vulkan:7")


def test_target_follows_the_device_report(
    vulkan: vkml.Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vkml.compiler.target import vulkan_target_for

    report = vulkan.report
    if "llvmpipe" in report.name:
        assert vulkan.target.flags[0] == "--iree-vulkan-target=llvmpipe"
    monkeypatch.setenv("VKML_VULKAN_TARGET", "ampere")
    assert vulkan_target_for(report) == "ampere"
    monkeypatch.setenv("VKML_VULKAN_TARGET", "hopper")  # unknown to IREE: would crash it
    with pytest.raises(vkml.DeviceError, match="hopper"):
        vulkan_target_for(report)


def test_staged_readback_gives_the_same_bits(
    vulkan: vkml.Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The discrete-GPU path (a copy into host-cached memory, then a read) on this device."""
    data = np.random.default_rng(3).normal(size=(257, 33)).astype(np.float32)
    x = vkml.tensor(data, device=vulkan)
    y = (x * 3.0 + 1.0).realize()
    direct = y.numpy()
    monkeypatch.setattr(vulkan, "staged_readback", True)
    monkeypatch.setattr(vulkan, "STAGED_READBACK_MIN_BYTES", 0)
    staged, view = y.numpy(), y.numpy(copy=False)
    assert np.array_equal(staged, direct) and np.array_equal(view, direct)
    assert vkml.tensor(np.float32(2.5), device=vulkan).item() == 2.5
    assert vkml.zeros((0, 3), device=vulkan).numpy().shape == (0, 3)


def test_a_process_that_used_vulkan_exits_cleanly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Freeing the device's own buffers during interpreter shutdown crashed IREE (exit status
    139 after a correct run); vkml releases them before the interpreter tears down."""
    script = tmp_path / "uses_vulkan.py"
    script.write_text(
        "import numpy as np, vkml\n"
        "dev = vkml.device('vulkan:0')\n"
        "kept = vkml.tensor(np.ones(3, np.float32), device=dev)\n"
        "print((kept * 2.0 + 1.0).numpy())\n"
    )
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "[3. 3. 3.]"
