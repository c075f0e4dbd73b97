#!/usr/bin/env python3
"""Check that vkml's modules and functions stay small enough to read in one sitting.

A module under vkml/ has at most ``MAX_LINES`` lines and a function (or method) at most
``MAX_FUNCTION_LINES``, counted from its ``def`` to its last line. ``ALLOWED`` lists the
exceptions, each with its size limit and why it is one piece; an exception that has shrunk
below the rule is reported too, so the list stays short.

    python scripts/check_size.py
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

MAX_LINES = 400
MAX_FUNCTION_LINES = 60

# path or path:function -> (the most lines allowed, why it is one piece)
ALLOWED: dict[str, tuple[int, str]] = {
    "vkml/runtime/vulkan_loader.py": (
        430,
        "the Vulkan device report: one ctypes walk of the loader",
    ),
    "vkml/frontend/views.py:getitem": (75, "NumPy's basic indexing: one pass over the index"),
}


def sizes(root: Path) -> dict[str, int]:
    """Lines of every module under vkml/ and of every function in it, by key."""
    found: dict[str, int] = {}
    for path in sorted((root / "vkml").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        found[rel] = text.count("\n")
        for node in ast.walk(ast.parse(text, filename=rel)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{rel}:{node.name}"
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                found[key] = max(found.get(key, 0), length)
    return found


def problems(found: dict[str, int]) -> list[str]:
    out = []
    for key, lines in sorted(found.items()):
        rule = MAX_FUNCTION_LINES if ":" in key else MAX_LINES
        what = "function" if ":" in key else "module"
        allowed = ALLOWED.get(key)
        if allowed is not None:
            if lines > allowed[0]:
                out.append(f"{key}: {lines} lines, over its allowance of {allowed[0]}")
            elif lines <= rule:
                out.append(f"{key}: {lines} lines, within the rule: remove it from ALLOWED")
        elif lines > rule:
            out.append(
                f"{key}: {lines} lines; a {what} has at most {rule}: split it (or add it to "
                f"ALLOWED in scripts/check_size.py with the reason it is one piece)"
            )
    out += [f"{key}: in ALLOWED but not found" for key in sorted(set(ALLOWED) - set(found))]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check module and function sizes.")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    found = problems(sizes(args.root.resolve()))
    for line in found:
        print(line, file=sys.stderr)
    print(f"size: {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
