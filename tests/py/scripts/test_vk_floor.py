"""scripts/gpu/vk_floor.py on the Vulkan device here (lavapipe will do): every case gives
positive times and its kernels the right sums. Skipped where there is no Vulkan device."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

GPU_SCRIPTS = Path(__file__).resolve().parents[3] / "scripts" / "gpu"


def _vk_floor() -> ModuleType:
    # vk_floor imports vk_raw as its neighbour, as it does when run as a script
    if str(GPU_SCRIPTS) not in sys.path:
        sys.path.insert(0, str(GPU_SCRIPTS))
    return importlib.import_module("vk_floor")


def test_every_case_is_timed_and_verified() -> None:
    vk_floor = _vk_floor()
    try:
        results = vk_floor.measure(reps=20, warmup=3, allow_cpu=True)
    except vk_floor.vk.VulkanUnavailable as exc:
        pytest.skip(f"no Vulkan device: {exc}")
    cases = results["cases"]
    assert cases["one-dispatch"]["check"] == "ok"
    assert set(cases) == {
        "empty",
        "one-dispatch",
        "two-dispatch-barrier",
        "one-dispatch-timeline",
        "one-dispatch-no-limit",
        "timeline-no-limit",
        "one-dispatch-1M",
    }
    for name, case in cases.items():
        if "skipped" in case:  # the timeline cases, on a device without timeline semaphores
            assert name in ("one-dispatch-timeline", "timeline-no-limit")
            continue
        assert 0 < case["min_us"] <= case["median_us"] <= case["p90_us"], name
        assert case.get("check", "ok") == "ok", name


def test_the_command_line_prints_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vk_floor = _vk_floor()
    out = tmp_path / "floor.json"
    status = vk_floor.main(["--allow-cpu", "--reps", "3", "--warmup", "1", "--json", str(out)])
    if status == 2:
        pytest.skip("no Vulkan device")
    assert status == 0
    assert "one-dispatch-1M" in capsys.readouterr().out
    assert json.loads(out.read_text())["reps"] == 3


def test_nvidia_driver_versions_are_decoded_with_nvidias_packing() -> None:
    vk = _vk_floor().vk
    assert vk.driver_version(0x10DE, 550 << 22 | 54 << 14 | 15 << 6) == "550.54.15.0"
    assert vk.driver_version(0x10005, 23 << 22 | 2 << 12 | 1) == "23.2.1"
