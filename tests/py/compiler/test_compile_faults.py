"""Faults around a compile (vkml/compiler/compile.py, store.py): an IREE compiler that
crashes or hangs, and a process killed with SIGKILL while it compiles or writes the cache.
Each leaves vkml usable, the cache without a half-written entry, and an error that names the
module's size and how to split it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import vkml
import vkml.dialect.ir
from vkml.compiler.compile import compile_timeout
from vkml.compiler.store import STALE_TEMPORARY_S, DiskStore

CRASH = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
HANG = [sys.executable, "-c", "import time; time.sleep(120)"]
# dies of SIGINT even where the suite was started with SIGINT ignored (a background job)
INTERRUPTED = [
    sys.executable, "-c",
    "import os, signal; signal.signal(signal.SIGINT, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGINT)",
]  # fmt: skip


def _fresh_graph() -> tuple[vkml.Tensor, np.ndarray]:
    """A graph no cache holds yet (its ``full`` constant, compiled in, is new: a Python number
    in arithmetic would be a run-time input, the same module), and what it computes."""
    c = float(time.time_ns() % 1_000_003) + 0.5
    x = np.arange(4, dtype=np.float32)
    return vkml.tensor(x) * vkml.full((4,), c) + 1.0, x * np.float32(c) + np.float32(1.0)


@pytest.fixture
def no_disk_hits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_crashing_compiler_is_a_compile_error_and_vkml_goes_on(
    no_disk_hits: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, want = _fresh_graph()
    monkeypatch.setattr(vkml.dialect.ir, "compile_command", lambda backend, flags: CRASH)
    with pytest.raises(vkml.CompileError) as info:
        t.numpy()
    message = str(info.value)
    assert "crashed (SIGSEGV)" in message
    assert "operations for llvm-cpu" in message and "vkml.realize(t)" in message
    monkeypatch.undo()
    np.testing.assert_array_equal(t.numpy(), want)  # the same tensor, realized now


def test_a_hanging_compiler_is_stopped_at_the_time_limit(
    no_disk_hits: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, want = _fresh_graph()
    monkeypatch.setattr(vkml.dialect.ir, "compile_command", lambda backend, flags: HANG)
    monkeypatch.setenv("VKML_COMPILE_TIMEOUT", "1.5")
    start = time.monotonic()
    with pytest.raises(vkml.CompileError, match=r"ran for more than 1.5 s on a module of about"):
        t.numpy()
    assert time.monotonic() - start < 30
    monkeypatch.undo()
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize(
    ("value", "seconds"), [("", 600.0), ("0", None), ("2.5", 2.5), (" 30 ", 30.0)]
)
def test_the_time_limit_reads_seconds(
    value: str, seconds: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_COMPILE_TIMEOUT", value)
    assert compile_timeout() == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_time_limit_that_is_not_seconds_is_refused(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_COMPILE_TIMEOUT", value)
    with pytest.raises(
        vkml.ConfigError, match=r"VKML_COMPILE_TIMEOUT=.* is not a number of seconds"
    ):
        compile_timeout()


# The child realizes a fresh graph after arranging (by patching vkml's own functions in its
# own process) to be killed at the chosen moment: before the rename of a fully written
# temporary, half-way through writing it, or while iree-compile runs.
KILLED = """
import os, signal, sys, time
import numpy as np
import vkml, vkml.compiler.atomic as atomic, vkml.dialect.ir as ir
moment = sys.argv[1]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if moment == "before-rename":
    atomic.os.replace = die
elif moment == "mid-write":
    real_fdopen = atomic.os.fdopen
    class Half:
        def __init__(self, f): self.f = f
        def __enter__(self): return self
        def __exit__(self, *exc): self.f.close()
        def write(self, data):
            self.f.write(data[: len(data) // 2]); self.f.flush(); die()
    atomic.os.fdopen = lambda fd, mode: Half(real_fdopen(fd, mode))
elif moment == "compiler-running":  # a compiler that says where it is, then runs on
    waiting = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
    ir.compile_command = lambda backend, flags: [sys.executable, "-c", waiting, sys.argv[3]]
elif moment == "compiling":
    real = ir.compile_stablehlo
    def slow(*args, **kwargs):
        print("compiling", flush=True)
        time.sleep(120)
    ir.compile_stablehlo = slow
    import vkml.compiler.compile as compile_module
    compile_module.compile_stablehlo = slow
x = vkml.tensor(np.arange(4, dtype=np.float32))
print((x * 7.25 + vkml.full(x.shape, float(sys.argv[2]))).numpy().tolist(), flush=True)
"""


def _child(cache: Path, moment: str, constant: float, *more: str) -> subprocess.Popen[str]:
    env = {**os.environ, "VKML_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-c", KILLED, moment, str(constant), *more], env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def _sound(cache: Path) -> None:
    """Every entry under a real name is whole (the store would otherwise delete it)."""
    store = DiskStore(cache)
    for path in store.entries():
        assert store.read(path.stem) is not None, f"{path} is damaged"


@pytest.mark.parametrize("moment", ["before-rename", "mid-write", "compiling"])
def test_sigkill_leaves_no_half_entry_and_the_next_process_compiles(
    tmp_path: Path, moment: str
) -> None:
    cache, constant = tmp_path / "cache", float(time.time_ns() % 9973)
    child = _child(cache, moment, constant)
    if moment == "compiling":  # it holds the key's lock now; kill it there
        assert child.stdout is not None and child.stdout.readline().strip() == "compiling"
        child.send_signal(signal.SIGKILL)
    child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL
    assert DiskStore(cache).entries() == []
    _sound(cache)
    left = list(cache.rglob(".*.tmp-*"))
    assert len(left) == (0 if moment == "compiling" else 1)
    for tmp in left:  # a dead writer's temporary, as the next write finds it an hour later
        os.utime(tmp, (time.time() - STALE_TEMPORARY_S - 1,) * 2)
    again = _child(cache, "none", constant)  # the lock died with its holder: no wait
    out, _ = again.communicate(timeout=300)
    want = (np.arange(4, dtype=np.float32) * np.float32(7.25) + np.float32(constant)).tolist()
    assert again.returncode == 0 and out.strip() == str(want)
    assert len(DiskStore(cache).entries()) == 1
    _sound(cache)
    assert list(cache.rglob(".*.tmp-*")) == []


def _running(pid: int) -> bool:
    """Whether process ``pid`` is alive (a zombie, dead but not yet reaped, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(
    shutil.which("setpriv") is None,
    reason="Linux's parent-death signal, set by util-linux's setpriv",
)
def test_the_compiler_dies_with_a_killed_process(tmp_path: Path) -> None:
    """A Python process killed while iree-compile runs for it leaves no compiler running on
    (one did, for hours, growing to 23.5 GB, when a fuzz sitting was stopped)."""
    pid_file = tmp_path / "compiler.pid"
    child = _child(tmp_path / "cache", "compiler-running", 1.0, str(pid_file))
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    compiler = int(pid_file.read_text())
    assert _running(compiler)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while _running(compiler) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _running(compiler):
        os.kill(compiler, signal.SIGKILL)
        pytest.fail("the compiler outlived the process that started it")


def test_a_compiler_stopped_by_ctrl_c_is_the_users_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C in a terminal reaches iree-compile too (one process group); its death by
    SIGINT is the user's KeyboardInterrupt, not a compiler crash."""
    monkeypatch.setattr(vkml.dialect.ir, "compile_command", lambda backend, flags: INTERRUPTED)
    with pytest.raises(KeyboardInterrupt):
        vkml.dialect.ir.compile_stablehlo("module {}", "llvm-cpu", (), timeout=60)
