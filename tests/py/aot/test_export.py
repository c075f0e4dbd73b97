"""``vkml.aot`` (``vkml/aot/``): functions exported to a ``.vmfb`` with their weights in an
``.irpa`` compute, loaded again or run by IREE's own ``iree-run-module``, exactly the bits
``realize`` computes on the same device; names and provenance are in the module; damaged,
foreign or mismatched files are refused naming what differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.without_compiler import run_without_compiler

import vkml
import vkml.runtime.vulkan_loader
from vkml import nn
from vkml.runtime.parameters import write_archive

TOOLS = Path(sys.executable).parent
DEVICES = [vkml.cpu]
if vkml.runtime.vulkan_loader.vulkan_device_reports():
    DEVICES.append(vkml.device("vulkan:0"))

RNG = np.random.default_rng(21)
# enough elements that a multiply-add fused into an FMA would show (about a fifth differ)
X = RNG.normal(size=(256, 64)).astype(np.float32)


def model_on(device: vkml.Device) -> nn.Sequential:
    keys = vkml.random.split(vkml.random.key(3, device=device), 2)
    return nn.Sequential(nn.Linear(64, 32, key=keys[0]), nn.GELU(), nn.Linear(32, 10, key=keys[1]))


def predict_of(model: nn.Module) -> Any:
    def predict(x: vkml.Tensor) -> dict[str, vkml.Tensor]:
        logits = model(x)
        return {"logits": logits, "probs": vkml.softmax(logits, axis=1)}

    return predict


@pytest.fixture(scope="module", params=DEVICES, ids=str)
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    device = request.param
    model = model_on(device)
    predict = predict_of(model)
    artifact = vkml.aot.export(predict, vkml.spec(X.shape), device=device, weights=model)
    path = tmp_path_factory.mktemp(f"aot-{device.kind}") / "mlp.vmfb"
    artifact.save(path)
    want = {k: v.numpy() for k, v in predict(vkml.tensor(X, device=device)).items()}
    return device, artifact, path, want


def test_a_loaded_module_computes_what_realize_computes(exported: Any) -> None:
    device, _, path, want = exported
    assert sorted(p.name for p in path.parent.iterdir()) == ["mlp.irpa", "mlp.vmfb"]
    loaded = vkml.aot.load(path, device=device)
    got = loaded.predict(X)
    assert set(got) == {"logits", "probs"}
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    got = loaded(vkml.tensor(X, device=device))  # one function: the module is callable
    np.testing.assert_array_equal(got["logits"], want["logits"])


def test_iree_run_module_computes_the_same_bits_without_python(
    exported: Any, tmp_path: Path
) -> None:
    device, artifact, path, want = exported
    np.save(tmp_path / "x.npy", X)
    run = subprocess.run(
        [str(TOOLS / "iree-run-module"), f"--module={path}",
         f"--device={'vulkan' if device.kind == 'vulkan' else 'local-task'}",
         "--function=predict", f"--parameters=model={path.with_suffix('.irpa')}",
         f"--input=@{tmp_path / 'x.npy'}",
         f"--output=@{tmp_path / 'logits.npy'}", f"--output=@{tmp_path / 'probs.npy'}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    for key in want:
        np.testing.assert_array_equal(np.load(tmp_path / f"{key}.npy"), want[key], err_msg=key)
    command = artifact.command(path)
    assert "--function=predict" in command and "--parameters=model=" in command
    bench = subprocess.run(
        [str(TOOLS / "iree-benchmark-module"), f"--module={path}",
         f"--device={'vulkan' if device.kind == 'vulkan' else 'local-task'}",
         "--function=predict", f"--parameters=model={path.with_suffix('.irpa')}",
         f"--input=@{tmp_path / 'x.npy'}", "--benchmark_min_time=5x"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    assert "BM_predict" in bench.stdout


def test_names_and_provenance_are_in_the_module(exported: Any) -> None:
    device, _, path, _ = exported
    dump = subprocess.run(
        [str(TOOLS / "iree-dump-module"), str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "predict(%x: tensor<256x64xf32>) -> (%logits: tensor<256x10xf32>, %probs:" in dump
    manifest = vkml.aot.load(path, device=device).manifest
    assert manifest.target["name"] == device.target.name
    assert "vkml-pairwise-reductions" in manifest.passes
    assert any("FMA" in c for c in manifest.contracts)
    assert sorted(manifest.parameters) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert manifest.parameters["0.weight"]["shape"] == [32, 64]
    inspected = subprocess.run(
        [sys.executable, "-m", "vkml", "inspect", str(path)], capture_output=True, text=True
    )
    assert inspected.returncode == 0, inspected.stderr
    assert (
        "predict(x: float32[256, 64]) -> (logits: float32[256, 10], probs: float32[256, 10])"
        in inspected.stdout
    )
    assert (
        f"vkml {manifest.vkml}" in inspected.stdout and manifest.target["name"] in inspected.stdout
    )


def test_new_weights_need_no_recompile(exported: Any, tmp_path: Path) -> None:
    device, artifact, path, want = exported
    weights = {k: v * 2 for k, v in artifact.parameters.items()}
    archive = tmp_path / "doubled.irpa"
    write_archive(archive, weights)
    before = vkml.stats()["compiles"]
    got = vkml.aot.load(path, device=device, parameters=archive).predict(X)
    assert vkml.stats()["compiles"] == before
    assert not np.array_equal(got["logits"], want["logits"])
    model = model_on(device)
    model.load_state_dict(weights)
    np.testing.assert_array_equal(got["logits"], model(vkml.tensor(X, device=device)).numpy())


def test_several_functions_in_one_module(tmp_path: Path) -> None:
    model = model_on(vkml.cpu)
    artifact = vkml.aot.export(lambda x: model(x).argmax(axis=1), X, name="classify", weights=model)
    artifact.add(
        lambda x, y: (nn.cross_entropy(model(x), y),), X, np.zeros(256, np.int64), name="loss"
    )
    path = tmp_path / "two.vmfb"
    artifact.save(path)
    loaded = vkml.aot.load(path)
    assert loaded.functions == ["classify", "loss"]
    y = RNG.integers(0, 10, 256)
    xt = vkml.tensor(X)
    np.testing.assert_array_equal(loaded.classify(X), model(xt).argmax(axis=1).numpy())
    (loss,) = loaded["loss"](X, y)
    assert loss == nn.cross_entropy(model(xt), vkml.tensor(y)).item()
    with pytest.raises(TypeError, match="has 2 functions"):
        loaded(X)
    with pytest.raises(AttributeError, match="has no function 'nope'"):
        loaded.nope  # noqa: B018


def test_a_module_without_weights_needs_no_archive(tmp_path: Path) -> None:
    path = tmp_path / "plain.vmfb"
    written = vkml.aot.export(lambda a, b: a * b + a, X, X, name="fma_prone").save(path)
    assert written == [path]
    b = RNG.normal(size=X.shape).astype(np.float32)
    got = vkml.aot.load(path).fma_prone(X, b)
    np.testing.assert_array_equal(got, (vkml.tensor(X) * vkml.tensor(b) + vkml.tensor(X)).numpy())
    np.testing.assert_array_equal(got, X * b + X)  # two roundings: no FMA


def test_a_function_reading_a_realized_uint32_tensor_saves_and_runs(tmp_path: Path) -> None:
    """A random key is a realized uint32 tensor: the module read it from a ui32 global, which
    IREE could not legalize at save() ("failed to legalize operation 'util.global.load'")."""
    key = vkml.random.key(3)
    key.realize()
    counts = vkml.tensor(np.array([7, 4_000_000_000], np.uint32))

    def noisy(x):  # type: ignore[no-untyped-def]
        return x + vkml.random.normal(key, x.shape), counts + 1

    path = tmp_path / "noisy.vmfb"
    vkml.aot.export(noisy, X).save(path)
    got = vkml.aot.load(path).noisy(X)
    want = noisy(vkml.tensor(X))
    np.testing.assert_array_equal(got[0], want[0].numpy())
    np.testing.assert_array_equal(got[1], want[1].numpy())
    assert got[1].dtype == np.uint32


def test_bad_calls_are_refused_naming_the_input(exported: Any) -> None:
    device, _, path, _ = exported
    loaded = vkml.aot.load(path, device=device)
    with pytest.raises(
        vkml.ShapeError, match=r"input 'x' must be float32\[256, 64\], got float64\[256, 64\]"
    ):
        loaded.predict(X.astype(np.float64))
    with pytest.raises(vkml.ShapeError, match=r"got float32\[2, 64\]"):
        loaded.predict(X[:2])
    with pytest.raises(TypeError, match=r"predict takes 1 inputs \(x\), got 2"):
        loaded.predict(X, X)
    np.testing.assert_equal(loaded.predict(x=X), loaded.predict(X))  # by name too
    with pytest.raises(TypeError, match=r"predict has no input 'batch'; its inputs are x"):
        loaded.predict(batch=X)


def test_damaged_and_foreign_files_are_refused(exported: Any, tmp_path: Path) -> None:
    device, artifact, path, _ = exported
    data = path.read_bytes()
    half = tmp_path / "half.vmfb"
    half.write_bytes(data[: len(data) // 2])
    with pytest.raises(vkml.ArtifactError, match="damaged or truncated"):
        vkml.aot.load(half, device=device)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF  # inside the compiled code or the bytecode
    damaged = tmp_path / "damaged.vmfb"
    damaged.write_bytes(bytes(flipped))
    with pytest.raises(vkml.ArtifactError, match="damaged"):
        vkml.aot.load(damaged, device=device)
    noise = tmp_path / "noise.vmfb"
    noise.write_bytes(RNG.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(vkml.ArtifactError, match="cannot read it"):
        vkml.aot.load(noise, device=device)
    with pytest.raises(vkml.ArtifactError, match="cannot read .*missing.vmfb"):
        vkml.aot.load(tmp_path / "missing.vmfb", device=device)
    with pytest.raises(vkml.ArtifactError, match="does not exist; pass parameters="):
        vkml.aot.load(path, device=device, parameters=tmp_path / "none.irpa")
    small = tmp_path / "small.irpa"
    write_archive(small, {**artifact.parameters, "0.weight": np.zeros(3, np.float32)})
    with pytest.raises(vkml.ArtifactError, match=r"entry '0.weight' holds 12 bytes"):
        vkml.aot.load(path, device=device, parameters=small)


def _copy_of(path: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    for part in (path, path.with_suffix(".irpa")):
        (folder / part.name).write_bytes(part.read_bytes())
    return folder / path.name


def test_a_module_others_could_have_written_is_refused(exported: Any, tmp_path: Path) -> None:
    device, _, path, _ = exported
    writable = _copy_of(path, tmp_path / "mine")
    os.chmod(writable, 0o664)
    with pytest.raises(vkml.UntrustedPathError, match=r"chmod go-w .*mlp.vmfb") as info:
        vkml.aot.load(writable, device=device)
    assert info.value.path == writable and "will not load the exported module" in str(info.value)
    os.chmod(writable, 0o644)
    os.chmod(writable.parent, 0o777)  # anyone could have swapped the file in the folder
    with pytest.raises(vkml.UntrustedPathError, match="can be written by others"):
        vkml.aot.load(writable, device=device)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_module_of_another_user_loads_with_a_warning(exported: Any, tmp_path: Path) -> None:
    device, _, path, want = exported
    theirs = _copy_of(path, tmp_path / "theirs")
    os.chown(theirs, 54321, 54321)
    with pytest.warns(vkml.UntrustedPathWarning, match="belongs to uid 54321"):
        loaded = vkml.aot.load(theirs, device=device)
    np.testing.assert_array_equal(loaded(X)["logits"], want["logits"])


def test_a_module_that_is_not_vkml_s_is_refused(tmp_path: Path) -> None:
    from vkml.compiler.cache import compile_module
    from vkml.compiler.target import CPU_TARGET

    text = "module {\n  func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n    return %a : tensor<2xf32>\n  }\n}\n"
    plain = tmp_path / "plain.vmfb"
    plain.write_bytes(compile_module(text, CPU_TARGET))
    with pytest.raises(vkml.ArtifactError, match="not a vkml artefact"):
        vkml.aot.load(plain)


def test_a_module_for_another_target_or_release_is_refused(
    exported: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device, _, path, _ = exported
    if device.kind == "cpu" and len(DEVICES) > 1:
        with pytest.raises(vkml.ArtifactError, match=r"compiled for llvm-cpu-host \(cpu, flags"):
            vkml.aot.load(path, device=DEVICES[1])
    if device.kind == "vulkan":
        with pytest.raises(vkml.ArtifactError, match=r"compiled for vulkan-spirv-"):
            vkml.aot.load(path, device=vkml.cpu)
    monkeypatch.setattr("vkml.aot.loaded.iree_version", lambda: "3.0.0")
    with pytest.raises(vkml.ArtifactError, match=r"built by IREE .*this runtime is 3.0.0"):
        vkml.aot.load(path, device=device)


def test_export_refuses_what_it_cannot_export() -> None:
    with pytest.raises(vkml.DeviceError, match="the reference device interprets graphs"):
        vkml.aot.export(lambda x: x + 1.0, X, device=vkml.reference, name="f")
    with pytest.raises(ValueError, match=r"function name '<lambda>' is not an identifier.*name="):
        vkml.aot.export(lambda x: x + 1.0, X)

    def peeks(x: vkml.Tensor) -> vkml.Tensor:
        return x * x.sum().item()

    with pytest.raises(vkml.TraceError, match=r"observed at .*test_export\.py:\d+"):
        vkml.aot.export(peeks, X)
    artifact = vkml.aot.export(lambda x: x * 2.0, X, name="double")
    with pytest.raises(ValueError, match="already has a function 'double'"):
        artifact.add(lambda x: x, X, name="double")
    with pytest.raises(TypeError, match="weights must be an nn.Module or a mapping"):
        vkml.aot.export(lambda x: x, X, name="f", weights=[1, 2])
    with pytest.raises(ValueError, match="save to a .vmfb path"):
        artifact.save("double.bin")


def test_a_failed_save_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = model_on(vkml.cpu)
    artifact = vkml.aot.export(predict_of(model), X, name="predict", weights=model)
    artifact.vmfb  # noqa: B018  (compiled before the failure is injected)

    def full_disk(path: Path, arrays: object) -> None:
        path.write_bytes(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("vkml.aot.artifact.write_archive", full_disk)
    with pytest.raises(OSError, match="No space left"):
        artifact.save(tmp_path / "m.vmfb")
    assert list(tmp_path.iterdir()) == []


def test_the_manifest_round_trips() -> None:
    artifact = vkml.aot.export(lambda x: x.sum(), X, name="total")
    manifest = artifact.manifest()
    again = vkml.aot.Manifest.from_json(manifest.to_json())
    assert again == manifest
    assert json.loads(manifest.to_json())["format"] == "vkml-aot/1"
    with pytest.raises(ValueError, match="not 'vkml-aot/1'"):
        vkml.aot.Manifest.from_json('{"format": "other"}')


def test_a_module_loads_and_runs_where_the_compiler_cannot_be_imported(exported: Any) -> None:
    device, _, path, want = exported
    if device.kind != "cpu":
        pytest.skip("the runtime-only run is on cpu")
    np.save(path.parent / "x_in.npy", X)
    proc = run_without_compiler(
        """
        import sys
        import numpy as np
        import vkml
        out = vkml.aot.load(sys.argv[1]).predict(np.load(sys.argv[2]))
        np.save(sys.argv[3], out["logits"])
        assert not any(m.startswith("iree.compiler") and sys.modules[m] for m in sys.modules)
        print("ran")
        """,
        str(path), str(path.parent / "x_in.npy"), str(path.parent / "y_out.npy"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ran")
    np.testing.assert_array_equal(np.load(path.parent / "y_out.npy"), want["logits"])


def test_vkml_compile_exports_a_function_from_a_file(tmp_path: Path) -> None:
    source = tmp_path / "mymodel.py"
    source.write_text(
        "import vkml\n"
        "from vkml import nn\n"
        "model = nn.Linear(4, 3, key=vkml.random.key(1))\n"
        "def predict(x):\n"
        "    return model(x).relu()\n"
    )
    out = tmp_path / "predict.vmfb"
    run = subprocess.run(
        [sys.executable, "-m", "vkml", "compile", f"{source}:predict", "--arg", "x=2x4xf32",
         "--weights", "model", "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "wrote" in run.stdout and "iree-run-module" in run.stdout
    manifest = vkml.aot.load(out).manifest
    assert sorted(manifest.parameters) == ["bias", "weight"]
    # without --weights the model's key is what the module reads (deploy.md's own example)
    plain = subprocess.run(
        [sys.executable, "-m", "vkml", "compile", f"{source}:predict", "--arg", "x=2x4xf32",
         "-o", str(tmp_path / "plain.vmfb")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    x = RNG.normal(size=(2, 4)).astype(np.float32)
    np.testing.assert_array_equal(
        vkml.aot.load(tmp_path / "plain.vmfb").predict(x), vkml.aot.load(out).predict(x)
    )
    bad = subprocess.run(
        [sys.executable, "-m", "vkml", "compile", f"{source}:predict", "--arg", "x=2x4xq9",
         "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and "write NAME=DIMSxTYPE, e.g. x=128x64xf32" in bad.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "vkml", "compile", f"{source}:nope", "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert missing.returncode == 2 and "defines no function 'nope'" in missing.stderr
    misnamed = subprocess.run(  # was accepted, the input silently still 'x'
        [sys.executable, "-m", "vkml", "compile", f"{source}:predict", "--arg", "y=2x4xf32",
         "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert (
        misnamed.returncode == 2 and "predict has no input 'y'; its inputs are x" in misnamed.stderr
    )


def test_a_training_step_exports_as_batch_and_state_in_loss_and_state_out(tmp_path: Path) -> None:
    batches = [
        (RNG.normal(size=(32, 64)).astype(np.float32), RNG.integers(0, 10, 32).astype(np.int64))
        for _ in range(3)
    ]

    def trained(compiled_in_vkml: bool) -> tuple[list[float], dict[str, np.ndarray]]:
        model = model_on(vkml.cpu)
        opt = nn.Adam(model.parameters(), lr=1e-2)
        step = opt.compile_step(lambda x, y: nn.cross_entropy(model(x), y))
        if compiled_in_vkml:
            losses = [step(x, y).item() for x, y in batches]
            return losses, model.state_dict()
        artifact = vkml.aot.export(step, *batches[0], name="train_step", weights=model)
        path = tmp_path / "train.vmfb"
        artifact.save(path)
        loaded = vkml.aot.load(path)
        (signature,) = loaded.manifest.functions
        names = [s.name for s in signature.inputs]
        assert names[:2] == ["x", "y"] and "lr" in names and "0.weight.exp_avg" in names
        assert signature.outputs[0].name == "loss"
        assert not artifact.parameters  # every tensor the step reads is batch or state
        values = model.state_dict()
        opt_state = {
            f"{name}.{key}": t.numpy()
            for name, (p, s) in zip(
                [n for n, _ in model.named_parameters()], zip(opt.params, opt.state)
            )
            for key, t in s.items()
        }
        current = {**values, **opt_state, **{k: t.numpy() for k, t in opt.shared.items()}}
        current["lr"] = np.float32(1e-2)
        losses = []
        for x, y in batches:
            outs = loaded.train_step(x, y, *[current[n] for n in names[2:]])
            losses.append(float(outs[0]))
            for slot, value in zip(signature.outputs[1:], outs[1:]):
                current[slot.name] = value
        return losses, {k: current[k] for k in values}

    want_losses, want = trained(True)
    losses, got = trained(False)
    assert losses == want_losses
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_a_module_for_another_machine_s_gpu_is_compiled_here(tmp_path: Path) -> None:
    model = model_on(vkml.cpu)
    predict = predict_of(model)
    ampere = vkml.aot.export(predict, X, device="vulkan:ampere+f64", weights=model)
    assert ampere.manifest().target["name"] == "vulkan-spirv-ampere"
    assert "vkml-exact-divide" in ampere.manifest().passes
    path = tmp_path / "ampere.vmfb"
    ampere.save(path)
    with pytest.raises(vkml.ArtifactError, match=r"compiled for vulkan-spirv-ampere \(vulkan"):
        vkml.aot.load(path)
    with pytest.raises(
        vkml.UnsupportedOperatorError,
        match="'erf' is not supported for float64 on device the Vulkan target ampere",
    ):
        vkml.aot.export(
            lambda x: x.erf(), X.astype(np.float64), device="vulkan:ampere+f64", name="e"
        )
    with pytest.raises(
        vkml.UnsupportedOperatorError, match="float64 on device the Vulkan target ampere"
    ):
        vkml.aot.export(lambda x: x + 1.0, X.astype(np.float64), device="vulkan:ampere", name="f")
    with pytest.raises(vkml.DeviceError, match="'nope' is not an IREE 3.13 Vulkan target"):
        vkml.aot.export(predict, X, device="vulkan:nope", weights=model)
    if len(DEVICES) > 1:  # lavapipe's own target, compiled on cpu, runs on lavapipe
        lavapipe = DEVICES[1]
        spelled = "vulkan:llvmpipe" + ("+f64" if lavapipe.supports("astype", vkml.float64) else "")
        remote = vkml.aot.export(predict, X, device=spelled, weights=model)
        remote.save(tmp_path / "llvmpipe.vmfb")
        got = vkml.aot.load(tmp_path / "llvmpipe.vmfb", device=lavapipe).predict(X)
        here = model_on(lavapipe)
        want = predict_of(here)(vkml.tensor(X, device=lavapipe))
        np.testing.assert_array_equal(got["logits"], want["logits"].numpy())
