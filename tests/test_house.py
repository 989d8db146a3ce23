"""The shape of the package that DESIGN.md promises: small modules, conversations at the
core (no module outside the dialogue benchmark reaches into it), no protocol importing
another's internals, and an architecture page that names only paths that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dialeval"


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(SRC)): n for p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}


def test_no_module_outside_a_protocol_imports_its_internals():
    """A protocol is reached through the benchmark registry; conversations, rubrics and
    labels live in dialeval.conversation for everyone."""
    offenders = []
    for path in _modules():
        parts = path.relative_to(SRC).parts
        own = parts[1] if parts[0] == "protocols" and len(parts) > 2 else None
        for name in _imports(path):
            m = re.match(r"dialeval\.protocols\.(\w+)", name)
            if m and (SRC / "protocols" / m.group(1)).is_dir() and m.group(1) != own:
                offenders.append(f"{path.relative_to(SRC)} imports {name}")
    assert offenders == []


def test_the_architecture_page_names_only_paths_that_exist():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:[\w.]+/)+[\w.]*)`", text))  # folder/..., the package's or the checkout's
    named = {p for p in paths if not p.startswith("../")  # ../shared: beside a checkout, not in it
             and ((SRC / p.split("/")[0]).is_dir() or (ROOT / p.split("/")[0]).is_dir())}
    assert len(named) > 20  # the page does name the package's parts
    missing = sorted(n for n in named if not (SRC / n).exists() and not (ROOT / n).exists())
    assert missing == []


def _module_name(path: Path) -> str:
    parts = ("dialeval", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(every: bool) -> dict[str, set[str]]:
    """Module -> the package's modules it imports. ``every=False``: only the imports that run
    when the module is imported (not inside a function, not under ``TYPE_CHECKING``)."""
    paths = {_module_name(p): p for p in _modules()}

    def target(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    def imported(body: list[ast.stmt]) -> list[str]:
        out: list[str] = []
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.module:
                out += [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in paths else node.module for a in node.names]
            elif isinstance(node, ast.Import):
                out += [a.name for a in node.names]
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                out += imported(node.body) if every else []
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out += imported(node.body) if every else []
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.ClassDef)):
                out += imported([*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                                 *(s for h in getattr(node, "handlers", []) for s in h.body)])
        return out

    graph = {}
    for name, path in paths.items():
        found = (target(n) for n in imported(ast.parse(path.read_text(encoding="utf-8")).body))
        graph[name] = {t for t in found if t is not None and t != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = set()
            while True:
                top = stack.pop()
                part.add(top)
                if top == node:
                    break
            if len(part) > 1:
                out.append(part)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_no_import_circle_at_run_time():
    """Layers import downwards (docs/architecture.md): importing any module never comes back to one half-imported."""
    assert _circles(_import_graph(every=False)) == []


def test_no_import_circle_even_through_functions_or_type_hints():
    """A lazy or type-only import back up is a circle too, only hidden: there is none."""
    assert _circles(_import_graph(every=True)) == []
