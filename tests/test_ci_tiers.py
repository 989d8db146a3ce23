"""CI runs every test: `make test` runs all but the long tier (`-m long`), `make examples` runs
exactly that tier, and `.ci/run` calls both. A test marked long is never silently dropped."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def recipe(target: str) -> list[str]:
    """The command lines of a Makefile target, without comments."""
    text = (ROOT / "Makefile").read_text().split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in text.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]


def marker_filter(target: str) -> str:
    """The `-m` expression of the one pytest line of a target ('' when it selects everything)."""
    [line] = [line for line in recipe(target) if "/pytest " in line]
    words = shlex.split(line)
    return words[words.index("-m") + 1] if "-m" in words else ""


def test_make_test_and_make_examples_split_the_suite_on_the_long_marker():
    assert marker_filter("test") == "not long"
    assert marker_filter("examples") == "long"
    assert re.search(r"^\s+\"long: ", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)  # a declared marker


def test_ci_calls_both_targets():
    steps = [line.split("#")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make test" in steps and "make examples" in steps
