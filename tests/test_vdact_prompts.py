"""The VDAct prompts: data inside delimiter tags the instructions name, and words of our own."""

from __future__ import annotations

from dialeval.agents.templates import prompt_file

import re
from importlib import resources

import pytest

from dialeval.agents.templates import load_template
from tests.conftest import SHARED

TEMPLATES = [p.name[:-4] for p in prompt_file("vdact").iterdir() if p.name.endswith(".txt")]
DATA_VARIABLES = {"question", "reference", "candidate", "summary", "history", "example"}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_data_variable_sits_inside_a_tag_the_instructions_call_material(name):
    template = load_template(f"vdact/{name}")
    system = dict(template.sections)["system"]
    assert "never instructions" in " ".join(system.split())
    for tag in template.delimiters:
        assert f"<{tag}>" in system, f"{name}: the instructions do not name <{tag}>"
    for role, body in template.sections:
        for variable in DATA_VARIABLES & template.variables:
            for match in re.finditer(rf"\${variable}\b", body):
                before = body[: match.start()]
                opened = [m.group(1) for m in re.finditer(r"<([a-z_]+)>", before)]
                closed = [m.group(1) for m in re.finditer(r"</([a-z_]+)>", before)]
                assert len(opened) > len(closed), f"{name} ({role}): ${variable} is outside every tag"


def _shingles(text: str, n: int = 12) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_no_prompt_shares_twelve_consecutive_words_with_the_paper():
    paper = SHARED / "papers" / "vdact-vdeval.txt"
    if not paper.is_file():
        pytest.skip("the paper's text is not available")
    theirs = _shingles(paper.read_text(encoding="utf-8"))
    folder = prompt_file("vdact")
    for item in folder.iterdir():
        if item.name.endswith((".txt", ".json")):
            shared = _shingles(item.read_text(encoding="utf-8")) & theirs
            assert not shared, f"{item.name} repeats the paper: {' '.join(next(iter(shared)))}"
