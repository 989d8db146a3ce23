"""`make setup` prints no ERROR line on success: xgrammar goes in with --no-deps (its
GPU-only triton stays out), and pip reports such a package's missing dependency whenever a
later install touches one of its other dependencies; a --no-deps install is not checked, so
it comes last (checked with two throwaway venvs: notes/s16/newuser-fixes.md)."""

from __future__ import annotations

import re
from pathlib import Path

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


def _setup_pip_installs() -> list[str]:
    """The install lines of `make setup`: pip's, and uv's with pip behind each (``$(UV)``, ``$(PIP)``)."""
    recipe = MAKEFILE.read_text().split("$(STAMP):", 1)[1].split("\nsetup:", 1)[0]
    return [line.strip() for line in recipe.splitlines()
            if re.search(r"pip install|\$\(UV\)|\$\(PIP\)", line) and not line.strip().startswith("#")]


def test_every_uv_install_falls_back_to_the_same_pip_install_and_uv_is_pinned():
    """uv installs the packages in parallel (9 s where pip took 46 s); where it is missing or
    fails (no uv wheel, a proxy it does not trust), pip installs exactly the same. torch
    stays pip's: only pip takes the CPU build from this machine's disk."""
    installs = _setup_pip_installs()
    uv = [i for i, line in enumerate(installs) if line.startswith("$(UV)")]
    assert len(uv) == 3
    for i in uv:
        assert installs[i].endswith("\\") and installs[i + 1].startswith("|| $(PIP)")
        assert installs[i].removeprefix("$(UV)").removesuffix("\\").strip() == installs[i + 1].removeprefix("|| $(PIP)").strip()
    assert any("torch==" in line and "$(UV)" not in line for line in installs)
    constraints = (MAKEFILE.parent / "constraints.txt").read_text().splitlines()
    assert any(line.startswith("uv==") for line in constraints)


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


def test_the_warm_start_says_on_stdout_what_failed_and_goes_on(tmp_path, monkeypatch, capsys):
    """`make setup` drops the libraries' warnings on stderr; a module that breaks on import or
    a SmolLM2 that cannot load must still be said, where the setup's log shows it."""
    import runpy

    from dialeval.models import local_models

    script = runpy.run_path(str(MAKEFILE.parent / "scripts" / "warm_start.py"))
    (tmp_path / "breaks_on_import.py").write_text("raise RuntimeError('no GPU driver')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    script["import_all"](["json", "breaks_on_import", "not_a_library_anywhere"])

    def no_model(source: str) -> None:
        raise local_models.LocalModelError(f"{source}: the GGUF file is missing")

    monkeypatch.setattr(local_models, "load_engine", no_model)
    script["load_smollm2"]()

    said = capsys.readouterr().out
    assert "3 modules imported" in said and "breaks_on_import (failed: RuntimeError: no GPU driver)" in said
    assert "not_a_library_anywhere (No module named" in said
    assert "SmolLM2 did not load (LocalModelError: smollm2: the GGUF file is missing)" in said
