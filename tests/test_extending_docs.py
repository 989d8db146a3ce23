"""The importer and probe examples of docs/extending.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[1] / "docs" / "extending.md"


def example(section: str) -> str:
    """The Python block of the section whose heading starts with ``section``."""
    text = DOC.read_text(encoding="utf-8").split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_importer_example_registers_a_format_that_import_and_the_dialogue_loader_read(tmp_path, monkeypatch):
    from dialeval.data.importers import importer_names
    from dialeval.errors import DataError

    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(example("4. An importer"), "docs/extending.md#4", "exec"), scope)
    assert "chatlog" in importer_names()
    (tmp_path / "bad.log").write_text("user: hi\nagent: hello\n", encoding="utf-8")
    with pytest.raises(DataError, match="chat 1"):
        scope["import_records"]("chatlog", tmp_path / "bad.log")


@pytest.mark.timeout(120)
def test_the_probe_example_builds_a_card_with_its_figure(tmp_path, monkeypatch, capsys):
    from dialeval.trust.probe_registry import all_probes

    monkeypatch.chdir(tmp_path)
    exec(compile(example("5. A trust probe"), "docs/extending.md#5", "exec"), {})
    assert "halving" in all_probes()
    assert capsys.readouterr().out.startswith("halving: -")
    card = (tmp_path / "trust").glob("*/card.md")
    assert "halving: mean score change" in next(card).read_text(encoding="utf-8")
