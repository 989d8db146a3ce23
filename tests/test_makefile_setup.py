"""`make setup` prints no ERROR line on success: xgrammar goes in with --no-deps (its
GPU-only triton stays out), and pip reports such a package's missing dependency whenever a
later install touches one of its other dependencies; a --no-deps install is not checked, so
it comes last (checked with two throwaway venvs: notes/s16/newuser-fixes.md)."""

from __future__ import annotations

import re
from pathlib import Path

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


def _setup_pip_installs() -> list[str]:
    recipe = MAKEFILE.read_text().split("$(STAMP):", 1)[1].split("\nsetup:", 1)[0]
    return [line.strip() for line in recipe.splitlines() if re.search(r"pip install", line) and not line.strip().startswith("#")]


def test_every_install_that_pip_would_check_comes_before_the_no_deps_ones():
    installs = _setup_pip_installs()
    xgrammar = next(i for i, line in enumerate(installs) if "xgrammar" in line)
    assert "--no-deps" in installs[xgrammar]
    assert all("--no-deps" in line for line in installs[xgrammar:])
    assert any('-e ".[' in line for line in installs[:xgrammar])


def test_the_warm_start_imports_every_dialeval_module_but_main_and_only_installed_libraries():
    """`make setup` writes bytecode by importing these; a name that is not installed would
    only print "not installed", so a renamed library would silently lose its bytecode."""
    import importlib.util
    import runpy

    script = runpy.run_path(str(MAKEFILE.parent / "scripts" / "warm_start.py"))
    modules = script["dialeval_modules"]()
    assert "dialeval.cli" in modules and "dialeval.report.plots" in modules
    assert not any(name.endswith("__main__") for name in modules)  # importing it would run the CLI
    libraries = [*script["MODEL_STACK"], *script["LAZY"]]
    assert [name for name in libraries if importlib.util.find_spec(name.split(".")[0]) is None] == []
    assert script["main"](["modles"]) == 2  # a misspelt part imports nothing and says so
