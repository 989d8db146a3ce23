"""The VDAct prompts: data inside delimiter tags the instructions name, and words of our own."""

from __future__ import annotations

from dialeval.agents.templates import prompt_file

import re

import pytest

from dialeval.agents.templates import load_template

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
