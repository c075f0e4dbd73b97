"""Coverage: which (op, dtype, device) triples realize() has evaluated.

With ``VKML_COVERAGE=path`` set, every realize appends one tab-separated line per evaluated
node. ``coverage_report(path)`` reads such a file back against the op table, so ops that were
never exercised show up with a count of zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from vkml.errors import ConfigError
from vkml.graph.node import Node
from vkml.ops.registry import OPS


def record_coverage(path: str, schedule: Sequence[Node], device: str) -> None:
    lines = [f"{n.op}\t{n.dtype.name}\t{device}\n" for n in schedule if not n._computed]
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(lines)
    except OSError as exc:  # nothing is computed yet: the realize can be retried
        raise ConfigError(
            f"VKML_COVERAGE={path!r}: cannot append coverage to it ({exc.strerror or exc}); "
            f"point it at a file in a writable directory, or unset it"
        ) from exc


def coverage_report(path: str | Path) -> dict[str, dict[str, int]]:
    """For every op in the op table: evaluations counted per ``dtype@device``."""
    counts: Counter[tuple[str, str]] = Counter()
    text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            counts[(parts[0], f"{parts[1]}@{parts[2]}")] += 1
    report: dict[str, dict[str, int]] = {op: {} for op in OPS}
    for (op, where), n in sorted(counts.items()):
        report.setdefault(op, {})[where] = n
    return report


def format_coverage(report: dict[str, dict[str, int]]) -> str:
    """The report as a Markdown table: op, total evaluations, and where."""
    rows = ["| op | evaluations | dtype@device |", "|---|---:|---|"]
    for op, where in report.items():
        detail = ", ".join(f"{k} ×{v}" for k, v in where.items()) or "never"
        rows.append(f"| {op} | {sum(where.values())} | {detail} |")
    return "\n".join(rows)
