"""vkml-opt: run vkml passes over MLIR text and print the result.

    python -m vkml.passes FILE --pass vkml-pairwise-reductions
    vkml-opt - --pass NAME --pass NAME --split-input-file < cases.mlir

Errors are printed as MLIR diagnostics on stderr, with exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from vkml.errors import CompileError
from vkml.passes.registry import PASSES, PIPELINE
from vkml.passes.run import run_passes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vkml-opt", description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", default="-", help="MLIR file, or - for stdin")
    parser.add_argument(
        "--pass", dest="passes", action="append", default=[], metavar="NAME",
        help=f"a pass to run, in order (known: {', '.join(PASSES)})",
    )  # fmt: skip
    parser.add_argument("--pipeline", action="store_true", help="run the whole compile pipeline")
    parser.add_argument("--split-input-file", action="store_true", help="cases split at // -----")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else Path(args.input).read_text(encoding="utf-8")
    names = list(PIPELINE) if args.pipeline else args.passes
    cases = text.split("// -----") if args.split_input_file else [text]
    status = 0
    outputs = []
    for case in cases:
        try:
            outputs.append(run_passes(case, names))
        except CompileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
    sys.stdout.write("// -----\n".join(outputs))
    return status


if __name__ == "__main__":
    sys.exit(main())
