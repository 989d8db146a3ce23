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
