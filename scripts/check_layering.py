#!/usr/bin/env python3
"""Check vkml's import layering and generate docs/architecture.md from the same scan.

A module under vkml/ may import vkml modules only from its own layer or from layers
below it; some third-party packages may be imported only from particular paths. Both
rules are declared as data below. Within a layer, imports between modules must not form a
cycle (a package's ``__init__`` re-exporting its own modules is not an edge back to it). Imports are found with `ast`, anywhere in a file:
`import x`, `from x import y` (absolute, relative, star), and
`importlib.import_module("...")` / `__import__("...")` with a string literal.

    python scripts/check_layering.py           # check; fail if docs/architecture.md is stale
    python scripts/check_layering.py --write   # regenerate docs/architecture.md, then check
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# Layers, lowest first: (name, path patterns relative to the repo root). A module belongs
# to the first layer with a matching pattern; a pattern ending in "/" matches everything
# under that directory, any other pattern names exactly one file.
LAYERS: list[tuple[str, list[str]]] = [
    ("errors+dtypes", ["vkml/errors.py", "vkml/dtypes.py"]),
    ("graph", ["vkml/graph/"]),
    ("runtime", ["vkml/runtime/"]),
    ("dialect", ["vkml/dialect/"]),
    ("passes", ["vkml/passes/"]),
    ("ops", ["vkml/ops/"]),
    ("compiler", ["vkml/compiler/"]),
    ("devices", ["vkml/devices/"]),
    ("frontend", ["vkml/frontend/"]),
    ("trace", ["vkml/trace/"]),
    ("nn", ["vkml/nn/"]),
    ("aot", ["vkml/aot/"]),
    ("builder", ["vkml/builder/"]),
    ("array_api", ["vkml/array_api/"]),
    ("api", ["vkml/__init__.py"]),
    ("examples", ["vkml/examples/"]),
    ("cli", ["vkml/cli.py", "vkml/__main__.py"]),
]

# Third-party module prefix (and its submodules) -> the only path prefixes that may import it.
THIRD_PARTY: dict[str, list[str]] = {
    "iree.compiler": ["vkml/dialect/"],
    "iree.runtime": ["vkml/runtime/"],
}

PACKAGE = "vkml"
DOC = "docs/architecture.md"
STALE = f"{DOC} is stale: run python scripts/check_layering.py --write"


@dataclass(frozen=True)
class Import:
    """One import statement or call: `module` (absolute) and, for `from` imports, the names."""

    line: int
    module: str
    names: tuple[str, ...] = ()


@dataclass
class Scan:
    """Result of scanning the tree: module -> layer index, layer edges, and violations."""

    modules: dict[str, int | None] = field(default_factory=dict)
    edges: Counter[tuple[int, int]] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    # module file -> the module files it imports, with the line of the first import
    imports: dict[str, dict[str, int]] = field(default_factory=dict)


def layer_of(rel: str) -> int | None:
    """Index in LAYERS of the first layer with a pattern matching repo-relative path `rel`."""
    for index, (_, patterns) in enumerate(LAYERS):
        if any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in patterns):
            return index
    return None


def package_of(rel: str) -> list[str]:
    """Dotted parts of the package a file lives in (the package itself for __init__.py)."""
    return rel[: -len(".py")].split("/")[:-1]


def module_file(root: Path, module: str) -> str | None:
    """Repo-relative file of `module` (a namespace package gives its dir + "/"), or None."""
    base = module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if (root / candidate).is_file():
            return candidate
    return f"{base}/" if (root / base).is_dir() else None


def resolve_layer(root: Path, module: str) -> int | None:
    """Layer of the file that importing `module` loads (guessing its path if it is missing)."""
    base = module.replace(".", "/")
    found = module_file(root, module)
    for candidate in ([found] if found else []) + [f"{base}.py", f"{base}/__init__.py"]:
        if (index := layer_of(candidate)) is not None:
            return index
    return None


def is_dynamic_import(func: ast.expr) -> bool:
    """True for `importlib.import_module`, `import_module` and `__import__` callees."""
    names = ("import_module", "__import__")
    if isinstance(func, ast.Name):
        return func.id in names
    return isinstance(func, ast.Attribute) and func.attr in names


def literal(node: ast.expr | None) -> str | None:
    """The value of a string-literal expression, else None."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def relative(package: list[str], level: int, module: str | None) -> str | None:
    """Absolute name of a relative import `level` dots up from `package`, or None if invalid."""
    keep = len(package) - (level - 1)
    if keep <= 0:
        return None
    return ".".join(package[:keep] + ([module] if module else []))


def imports_in(tree: ast.AST, rel: str) -> list[Import]:
    """Every import anywhere in `tree` (file `rel`), relative ones made absolute."""
    package, found = package_of(rel), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = relative(package, node.level, node.module) if node.level else node.module
            if base:
                found.append(Import(node.lineno, base, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Call) and is_dynamic_import(node.func) and node.args:
            name = literal(node.args[0])
            if name and name.startswith("."):  # import_module(".x", "vkml.pkg")
                pkg = node.args[1] if len(node.args) > 1 else None
                pkg = pkg or next((k.value for k in node.keywords if k.arg == "package"), None)
                anchor = literal(pkg)
                level = len(name) - len(name.lstrip("."))
                name = relative(anchor.split("."), level, name[level:] or None) if anchor else None
            if name:
                found.append(Import(node.lineno, name))
    return found


def matches(module: str, prefix: str) -> bool:
    """True if `module` is `prefix` or one of its submodules."""
    return module == prefix or module.startswith(prefix + ".")


def vkml_targets(root: Path, imp: Import) -> list[str]:
    """The vkml modules an import loads: `from m import n` loads m.n if that is a module."""
    if not matches(imp.module, PACKAGE):
        return []
    if not imp.names:
        return [imp.module]
    subs = [f"{imp.module}.{n}" for n in imp.names if n != "*"]
    return [s if module_file(root, s) else imp.module for s in subs] or [imp.module]


def check_file(root: Path, rel: str, scan: Scan) -> None:
    """Scan one module, recording its layer, its layer edges and its violations."""
    layer = layer_of(rel)
    scan.modules[rel] = layer
    if layer is None:
        scan.problems.append(
            f"{rel}:1: unassigned module: {rel} matches no layer in LAYERS "
            "(add it to scripts/check_layering.py)"
        )
    try:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"), filename=rel)
    except (SyntaxError, UnicodeDecodeError) as exc:
        scan.problems.append(f"{rel}:{getattr(exc, 'lineno', 1) or 1}: cannot parse: {exc}")
        return
    seen: set[tuple[int, str]] = set()
    for imp in imports_in(tree, rel):
        names = [imp.module] + [f"{imp.module}.{n}" for n in imp.names if n != "*"]
        for prefix, allowed in THIRD_PARTY.items():
            hit = next((n for n in names if matches(n, prefix)), None)
            if hit and not any(rel.startswith(a) for a in allowed):
                scan.problems.append(
                    f"{rel}:{imp.line}: {rel} imports {hit}: only {' or '.join(allowed)} may"
                )
        for target in vkml_targets(root, imp):
            if (imp.line, target) in seen:
                continue
            seen.add((imp.line, target))
            found = module_file(root, target)
            if found and found.endswith(".py") and found != rel and not _reexport(rel, found):
                scan.imports.setdefault(rel, {}).setdefault(found, imp.line)
            to = resolve_layer(root, target)
            if layer is None or to is None or to == layer:
                continue
            scan.edges[(layer, to)] += 1
            if to > layer:
                scan.problems.append(
                    f"{rel}:{imp.line}: upward import: {LAYERS[layer][0]} module {rel} "
                    f"imports {target} (layer {LAYERS[to][0]})"
                )


def _reexport(rel: str, target: str) -> bool:
    """A module importing its package's ``__init__`` (``from vkml.nn import x``) loads the
    package, whose ``__init__`` imports the module: that is how packages work, not a cycle
    the module wrote, so this edge is left out."""
    return target.endswith("/__init__.py") and rel.startswith(target[: -len("__init__.py")])


def cycles(imports: dict[str, dict[str, int]]) -> list[list[str]]:
    """The import cycles (strongly connected sets of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, with an explicit stack
        work = [(start, iter(sorted(imports.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return sorted(found)


def scan_tree(root: Path) -> Scan:
    """Scan every .py file under the package directory, in sorted order."""
    scan = Scan()
    files = sorted(p.relative_to(root).as_posix() for p in (root / PACKAGE).rglob("*.py"))
    for rel in files:
        check_file(root, rel, scan)
    for component in cycles(scan.imports):
        members = set(component)
        where = ", ".join(
            f"{m}:{line} imports {t}"
            for m in component
            for t, line in sorted(scan.imports.get(m, {}).items())
            if t in members
        )
        scan.problems.append(
            f"{component[0]}:1: import cycle among {len(component)} modules: {where}"
        )
    return scan


def render(scan: Scan) -> str:
    """The Markdown architecture document (layer table + Mermaid diagram) for `scan`."""
    counts = Counter(scan.modules.values())
    top_down = list(reversed(range(len(LAYERS))))
    rules = "; ".join(
        f"`{m}` may be imported only under {', '.join(f'`{p}`' for p in ps)}"
        for m, ps in sorted(THIRD_PARTY.items())
    )
    out = [
        "# vkml architecture",
        "",
        (
            "This file is generated by `scripts/check_layering.py` from the same import scan that "
            "enforces the layering; do not edit it by hand, run "
            "`python scripts/check_layering.py --write` to regenerate it. A module may import "
            "only from its own layer or from the layers below it. Arrows point from the importing "
            "layer to the imported one and are labelled with the number of imports; layers with "
            f"no modules yet are dashed. Third-party rules: {rules}."
        ),
        "",
        "| # | Layer | Paths | Modules | Imports from |",
        "|---|---|---|---|---|",
    ]
    for i in top_down:
        deps = ", ".join(
            f"{LAYERS[to][0]} ({n})"
            for (fr, to), n in sorted(scan.edges.items(), key=lambda e: -e[0][1])
            if fr == i
        )
        paths = ", ".join(f"`{p}`" for p in LAYERS[i][1])
        out.append(f"| L{i} | {LAYERS[i][0]} | {paths} | {counts[i]} | {deps or '-'} |")
    out += ["", "```mermaid", "flowchart TD"]
    for i in top_down:
        noun = "module" if counts[i] == 1 else "modules"
        out.append(f'    L{i}["L{i} {LAYERS[i][0]}<br/>{counts[i]} {noun}"]')
    for (fr, to), n in sorted(scan.edges.items(), key=lambda e: (-e[0][0], -e[0][1])):
        out.append(f"    L{fr} -->|{n}| L{to}")
    for i in top_down[:-1]:  # invisible links keep the layers stacked in order
        if (i, i - 1) not in scan.edges:
            out.append(f"    L{i} ~~~ L{i - 1}")
    out.append("    classDef empty stroke-dasharray: 5 5,color:#888")
    empty = [f"L{i}" for i in top_down if counts[i] == 0]
    if empty:
        out.append(f"    class {','.join(empty)} empty")
    out += ["```", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the check (and optionally write the diagram); return the exit status."""
    parser = argparse.ArgumentParser(description="Check vkml import layering.")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parents[1],
        help="repository root (default: the parent of scripts/)",
    )
    parser.add_argument("--write", action="store_true", help=f"regenerate {DOC}, then check")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    if not (root / PACKAGE).is_dir():
        print(f"layering: no {PACKAGE}/ directory under {root}", file=sys.stderr)
        return 1
    scan = scan_tree(root)
    doc, text = root / DOC, render(scan)
    if args.write:
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(text, encoding="utf-8", newline="\n")
    problems = list(scan.problems)
    if not doc.is_file() or doc.read_text(encoding="utf-8") != text:
        problems.append(STALE)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(
        f"layering: {len(scan.modules)} modules, {len(LAYERS)} layers, "
        f"{len(scan.problems)} violations"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
