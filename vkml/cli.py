"""The ``vkml`` command line: compile cache upkeep, coverage reports, versions, the demo.

``vkml cache info|clear``, ``vkml coverage PATH``, ``vkml version``, ``vkml devices``,
``vkml demo``, ``vkml inspect FILE.vmfb``, ``vkml compile FILE.py:FUNCTION --arg x=4x3xf32 -o m.vmfb``.
A user's mistake (a missing file, an unknown command) prints one line to stderr and exits
non-zero; it never shows a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import runpy
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import vkml
from vkml.aot.loaded import inspect as inspect_module
from vkml.aot.manifest import describe
from vkml.compiler.cache import SHARED_ENV, default_cache
from vkml.compiler.keys import vkml_version
from vkml.devices.coverage import coverage_report, format_coverage
from vkml.devices.registry import vulkan_reports
from vkml.errors import ArtifactError
from vkml.trace.arguments import in_order
from vkml.trace.capture import parameter_names

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake in how vkml was called: reported on stderr, exit status 2."""


def human_bytes(n: int) -> str:
    """``n`` bytes as a short human-readable size: ``512 B``, ``1.5 KiB``, ``3.0 MiB``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _count(value: object) -> int:
    if not isinstance(value, int):
        raise TypeError(f"expected a byte count, got {value!r}")
    return value


def cache_info(args: argparse.Namespace) -> int:
    """Print where the compile cache lives and how much it holds."""
    info = default_cache().info()
    size = _count(info["bytes"])
    print(f"directory: {info['directory']}")
    print(f"entries: {info['entries']}")
    print(f"size: {human_bytes(size)} ({size} bytes)")
    print(f"memory: {info['memory_entries']}/{info['memory_capacity']} entries")
    shared = info["shared"]
    if isinstance(shared, list) and shared:
        print(f"shared (read-only, {SHARED_ENV}): {os.pathsep.join(shared)}")
    return EXIT_OK


def cache_clear(args: argparse.Namespace) -> int:
    """Delete every compiled module on disk; print how many went and the bytes freed."""
    cache = default_cache()
    freed = _count(cache.info()["bytes"])
    removed = cache.clear()
    print(
        f"removed {removed} entries, freed {human_bytes(freed)} ({freed} bytes) "
        f"from {cache.directory}"
    )
    return EXIT_OK


def coverage(args: argparse.Namespace) -> int:
    """Print the coverage file at ``args.path`` as a Markdown table over every op."""
    path = Path(args.path)
    if not path.exists():
        raise UsageError(
            f"coverage file {str(path)!r} does not exist (write one by running "
            f"with VKML_COVERAGE={path})"
        )
    print(format_coverage(coverage_report(path)))
    return EXIT_OK


def version(args: argparse.Namespace) -> int:
    """Print the versions of vkml, the IREE compiler and the IREE runtime."""
    print(f"vkml {vkml_version()}")
    try:  # the compiler's own build version; a machine running precompiled modules has none
        from vkml.dialect.ir import COMPILER_VERSION as compiler
    except ImportError:
        compiler = "not installed"
    try:
        runtime = metadata.version("iree-base-runtime")
    except metadata.PackageNotFoundError:
        runtime = "not installed"
    print(f"iree-base-compiler {compiler}")
    print(f"iree-base-runtime {runtime}")
    return EXIT_OK


def devices(args: argparse.Namespace) -> int:
    """Print every device: cpu, reference, and each Vulkan device with what it reports."""
    reports = vulkan_reports()
    best = vkml.best_device()
    rows = [
        (
            "cpu",
            "IREE llvm-cpu (local-task; small graphs local-sync)",
            "cpu",
            "",
            "",
            "",
            "",
            "",
            "",
        ),
        ("reference", "NumPy interpreter (the oracle)", "cpu", "", "", "", "", "", ""),
    ]
    for r in reports:
        features = ",".join(
            n
            for n, ok in (
                ("f16", r.shader_float16),
                ("f64", r.shader_float64),
                ("i64", r.shader_int64),
            )
            if ok
        )
        rows.append((
            f"vulkan:{r.index}", r.name, r.device_type, f"{r.driver_name} {r.driver_version}",
            r.api_version, str(r.subgroup_size or ""), str(r.max_push_constants_size), features,
            f"{r.shader_loop_cap:,}" if r.shader_loop_cap else "none",
        ))  # fmt: skip
    print(
        "| device | name | type | driver | Vulkan | subgroup | push constants | features | loop cap |"
    )
    print("|---|---|---|---|---|---:|---:|---|---:|")
    for row in rows:
        mark = " (best)" if row[0] == best.name else ""
        print("| " + " | ".join([row[0] + mark, *row[1:]]) + " |")
    if not reports:
        print(
            "\nno Vulkan device: install a GPU driver, or Mesa's CPU Vulkan "
            "(apt-get install libvulkan1 mesa-vulkan-drivers)"
        )
    return EXIT_OK


def demo(args: argparse.Namespace) -> int:
    """Run a demo's ``main([])``: ``digits`` (the main job: an MLP on the handwritten digits)
    or ``cnn`` (a convolutional network on the same images)."""
    module = f"vkml.examples.{args.name}"
    try:
        example = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name not in ("vkml.examples", module):
            raise  # the demo exists but something it needs is missing: show that
        print(f"vkml demo: error: the demo is not installed (no module {module})", file=sys.stderr)
        return EXIT_FAILURE
    result = example.main([])
    return result if isinstance(result, int) else EXIT_OK


def inspect(args: argparse.Namespace) -> int:
    """Print what the exported module at ``args.path`` holds and where it came from."""
    try:
        manifest = inspect_module(args.path)
    except ArtifactError as exc:
        raise UsageError(str(exc)) from exc
    print("\n".join(describe(manifest)))
    return EXIT_OK


def compile_command(args: argparse.Namespace) -> int:
    """Export ``FILE.py:FUNCTION`` on the ``--arg`` specs to the ``-o`` module."""
    fn, weights = _load_function(args.function, args.weights)
    named = [_spec_arg(text) for text in args.arg]
    try:
        specs = _by_parameter(fn, named)
        artifact = vkml.aot.export(fn, *specs, device=args.device, name=args.name, weights=weights)
        written = artifact.save(args.output)
    except (vkml.VkmlError, ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from exc
    for path in written:
        print(f"wrote {path} ({human_bytes(path.stat().st_size)})")
    print(f"run it: {artifact.command(written[0])}")
    return EXIT_OK


def _load_function(spec: str, weights: str | None) -> tuple[Callable[..., object], object]:
    """``FILE.py:NAME`` as the function it names, and the module attribute ``weights``."""
    file, _, name = spec.rpartition(":")
    if not file or not name:
        raise UsageError(f"{spec!r} is not FILE.py:FUNCTION")
    path = Path(file)
    if not path.is_file():
        raise UsageError(f"{file!r} does not exist")
    namespace = runpy.run_path(str(path), run_name="__vkml_compile__")
    if name not in namespace or not callable(namespace[name]):
        raise UsageError(f"{file} defines no function {name!r}")
    if weights is not None and weights not in namespace:
        raise UsageError(f"{file} defines no {weights!r} to take the weights' names from")
    return namespace[name], None if weights is None else namespace[weights]


def _by_parameter(
    fn: Callable[..., object], named: list[tuple[str, vkml.trace.Spec]]
) -> list[vkml.trace.Spec]:
    """The specs in ``fn``'s parameter order: ``--arg NAME=...`` by name (a name that is
    not a parameter is refused, not taken for the next one), ``--arg DIMSxTYPE`` in turn."""
    names = parameter_names(fn, len(named))
    positional = [spec for name, spec in named if not name]
    by_name = {name: spec for name, spec in named if name}
    return in_order(getattr(fn, "__name__", "the function"), names, positional, by_name)


def _spec_arg(text: str) -> tuple[str, vkml.trace.Spec]:
    """``NAME=128x64xf32`` (or ``NAME=f32`` for a 0-d input, or no ``NAME=``) as the name
    (or "") and its spec."""
    name, _, shape_text = text.rpartition("=")
    *dims, element = shape_text.split("x")
    try:
        dtype = _MLIR_DTYPES[element]
        shape = tuple(int(d) for d in dims)
    except (KeyError, ValueError):
        raise UsageError(
            f"--arg {text!r}: write NAME=DIMSxTYPE, e.g. x=128x64xf32 (types: "
            f"{', '.join(sorted(_MLIR_DTYPES))})"
        ) from None
    return name, vkml.spec(shape, dtype)


_MLIR_DTYPES = {d.mlir: d for d in vkml.dtypes.ALL}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: one sub-command per job, each with its handler as ``run``."""
    parser = argparse.ArgumentParser(
        prog="vkml", description="Lazy tensors compiled through IREE: command-line tools."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    cache = commands.add_parser("cache", help="inspect or empty the compile cache")
    cache_commands = cache.add_subparsers(dest="cache_command", metavar="ACTION")
    cache_commands.required = True
    _command(cache_commands, "info", "directory, entries and size of the cache", cache_info)
    _command(cache_commands, "clear", "delete every compiled module on disk", cache_clear)

    cov = _command(
        commands, "coverage", "which ops realize() evaluated, per dtype@device", coverage
    )
    cov.add_argument("path", help="a file written with VKML_COVERAGE=PATH")
    _command(commands, "version", "vkml, IREE compiler and IREE runtime versions", version)
    _command(commands, "devices", "every device, Vulkan ones with what they report", devices)
    demos = _command(
        commands, "demo", "train on the handwritten digits: an MLP (the main job) or a CNN", demo
    )
    demos.add_argument(
        "name", nargs="?", default="digits", choices=("digits", "cnn"),
        help="digits (default): the MLP; cnn: the convolutional network",
    )  # fmt: skip
    inspected = _command(
        commands, "inspect", "functions, target, provenance of an exported .vmfb", inspect
    )
    inspected.add_argument("path", help="a .vmfb written by vkml.aot (Artifact.save)")
    compiled = _command(
        commands, "compile", "export FILE.py:FUNCTION to a .vmfb (vkml.aot.export)", compile_command
    )
    compiled.add_argument("function", help="FILE.py:FUNCTION, the function to export")
    compiled.add_argument(
        "--arg", action="append", default=[], metavar="NAME=SHAPExTYPE",
        help="one per input, in order: e.g. x=128x64xf32",
    )  # fmt: skip
    compiled.add_argument(
        "--device", default="cpu",
        help="cpu (default), vulkan:N, or another machine's GPU as vulkan:TARGET[+f64] "
        "(an IREE Vulkan target, e.g. vulkan:ampere+f64)",
    )  # fmt: skip
    compiled.add_argument("--weights", help="a module-level nn.Module or dict naming the weights")
    compiled.add_argument("--name", help="the exported function's name (default: FUNCTION)")
    compiled.add_argument("-o", "--output", required=True, help="the .vmfb to write")
    return parser


def _command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    help_text: str,
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help_text, description=help_text
    )
    parser.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``vkml`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit
    status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage and the error already
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return int(args.run(args))
    except UsageError as exc:
        print(f"vkml {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"vkml {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
