"""Prompts are written in our own words: no packaged prompt file of any benchmark shares a
run of 12 consecutive words with any of the five papers (the project's rule, and the check
the before-stop hook runs). Skips when the papers are not beside the checkout."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from tests.conftest import SHARED

PAPERS = SHARED / "papers"
RUN = 12


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _runs(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


def prompt_files() -> list[str]:
    """Every prompt file (templates, rubric fragments, example and demonstration JSON) of every benchmark."""
    names = []
    for bench in resources.files("dialeval.protocols").iterdir():
        folder = bench.joinpath("prompts")
        if not folder.is_dir():
            continue
        stack = [(folder, f"{bench.name}/")]
        while stack:
            here, prefix = stack.pop()
            for entry in here.iterdir():
                if entry.is_dir():
                    stack.append((entry, f"{prefix}{entry.name}/"))
                elif entry.name.endswith((".txt", ".json")):
                    names.append(prefix + entry.name)
    return sorted(names)


@pytest.fixture(scope="module")
def paper_runs() -> set[tuple[str, ...]]:
    papers = sorted(PAPERS.glob("*.txt")) if PAPERS.is_dir() else []
    if not papers:
        pytest.skip("the papers' text is not available (../shared/papers)")
    return set().union(*(_runs(p.read_text(encoding="utf-8", errors="ignore")) for p in papers))


def test_every_benchmark_has_prompt_files():
    assert {name.split("/")[0] for name in prompt_files()} >= {"answers", "kgds", "vdact", "mmrc", "mmdu", "mdseval"}


@pytest.mark.parametrize("name", prompt_files())
def test_no_prompt_shares_twelve_consecutive_words_with_a_paper(name, paper_runs):
    bench, _, rest = name.partition("/")
    text = resources.files("dialeval.protocols").joinpath(bench, "prompts", *rest.split("/")).read_text(encoding="utf-8")
    shared = _runs(text) & paper_runs
    assert not shared, f"{name} repeats a paper: {' '.join(sorted(shared)[0])!r}"
