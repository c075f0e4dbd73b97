"""Python numbers and integer indices are run-time inputs of the compiled module (the rule of
docs/design.md, "Which values are compiled in"): a new value is new data, not a new compile,
and gives the bits it gave as a literal. A value stays compiled in where it must: shapes,
axes, slice bounds, creation functions, the body of a device loop, an exported module."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

DEVICES = ["cpu", "reference"] + (
    ["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else []
)
COMPILED = [d for d in DEVICES if d != "reference"]
X = np.linspace(-3.0, 3.0, 12, dtype=np.float32).reshape(4, 3)


def compiles_of(fn) -> int:  # type: ignore[no-untyped-def]
    """Modules ``fn`` needed that the device did not hold: compiled, or read from the disk
    cache (which an earlier run may have filled)."""
    before = vkml.stats()
    fn()
    after = vkml.stats()
    return sum(after[k] - before[k] for k in ("compiles", "cache_hits_disk"))


@pytest.mark.parametrize("device", COMPILED)
def test_a_hundred_learning_rates_compile_once(device: str) -> None:
    x = vkml.tensor(X, device=device)
    rates = [float(r) for r in np.linspace(1e-4, 1.0, 100)]
    got: list[np.ndarray] = []
    assert compiles_of(lambda: got.extend((x * lr - 0.5).numpy() for lr in rates)) <= 1
    for lr, value in zip(rates, got):
        np.testing.assert_array_equal(value, X * np.float32(lr) - np.float32(0.5))


@pytest.mark.parametrize("device", COMPILED)
def test_a_loop_over_rows_compiles_once(device: str) -> None:
    x = vkml.tensor(X, device=device)
    sums: list[float] = []
    assert compiles_of(lambda: sums.extend(row.sum().item() for row in x)) <= 1
    want = [(vkml.tensor(r, device="reference")).sum().item() for r in X]
    assert sums == want
    # i == j is a second structure (equal numbers share a table entry): two modules for all
    got: list[float] = []
    assert (
        compiles_of(lambda: got.extend(x[i, j].item() for i in range(-4, 4) for j in (0, 2))) <= 2
    )
    assert got == [float(X[i, j]) for i in range(-4, 4) for j in (0, 2)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64", "uint32", "bool"]
)
def test_a_number_as_an_input_gives_the_literal_s_bits(device: str, dtype: str) -> None:
    """Each dtype's numbers, rounded as a literal was (0.1 to float16 through float64),
    against the reference device, which reads the number from the graph."""
    dev = vkml.device(device)
    target = vkml.dtypes.to_dtype(dtype)
    if not dev.supports("add", target) and target.kind != "bool":
        pytest.skip(f"{device} has no {dtype}")
    values = {
        "bool": [True, False],
        "uint32": [0, 7, 4_000_000_000],
        "int32": [-7, 0, 2**31 - 1],
        "int64": [-(2**62), 3, 2**40 + 1],
    }.get(dtype, [0.1, -0.0, 1e-3, 3.0e38, float("inf"), float("nan"), 1 / 3])
    base = np.arange(3).astype(target.numpy) if dtype != "bool" else np.array([True, False, True])
    for v in values:
        x, r = vkml.tensor(base, device=dev), vkml.tensor(base, device="reference")
        if dtype == "bool":
            got, want = (x == v).numpy(), (r == v).numpy()
        else:
            got, want = vkml.where(x == x, v, x).numpy(), vkml.where(r == r, v, r).numpy()
        assert got.tobytes() == want.tobytes(), (dtype, v, got, want)


def test_which_numbers_are_equal_is_part_of_the_structure() -> None:
    """Equal numbers share a table entry: x * lr + 0.5 is one module for every lr but 0.5."""
    x = vkml.tensor(X)
    assert compiles_of(lambda: [(x * lr + 0.5).numpy() for lr in (0.25, 0.75, 2.0)]) <= 1
    assert compiles_of(lambda: (x * 0.5 + 0.5).numpy()) == 1
    np.testing.assert_array_equal((x * 0.5 + 0.5).numpy(), X * np.float32(0.5) + np.float32(0.5))


def test_slice_bounds_shapes_and_axes_stay_compiled_in() -> None:
    x = vkml.tensor(X)
    # a new slice start is a new module (a static bound), as is a new axis
    assert compiles_of(lambda: [x[a : a + 2].sum().item() for a in range(3)]) == 3
    assert compiles_of(lambda: [x.sum(axis=a).numpy() for a in (0, 1)]) == 2


def test_numbers_in_a_device_loop_body_and_in_an_exported_module_are_constants() -> None:
    @vkml.Graph.builder
    def grow(x, limit):  # type: ignore[no-untyped-def]
        while x.sum() < limit:  # a loop on the device: its body's numbers are constants
            x = x * 1.5 + 0.25
        return x

    g = grow(vkml.tensor(np.ones(3, np.float32)), vkml.tensor(np.float32(40.0)))
    want = np.ones(3, np.float32)
    while want.sum() < 40.0:
        want = want * np.float32(1.5) + np.float32(0.25)
    np.testing.assert_array_equal(g().numpy(), want)
    artifact = vkml.aot.export(lambda x: x * 0.5 + 3, vkml.spec((3,)), name="affine")
    (signature,) = artifact.functions
    assert [s.name for s in signature.inputs] == ["x"]  # no table of numbers to pass


def test_ten_thousand_distinct_numbers_compile_and_run() -> None:
    """One table argument per dtype, whatever the count: IREE binds at most 32 buffers per
    dispatch on local-sync, so numbers cannot be one argument each."""
    n = 10_000
    y = vkml.tensor(np.zeros(2, np.float64))
    for i in range(n):
        y = y + float(i)
    assert y.tolist() == [float(n * (n - 1) // 2)] * 2
