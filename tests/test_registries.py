"""Importers and trust probes register by name; the CLI and the dialogue options read the registries."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.config import ConfigError, EvalContext
from dialeval.protocols.dialogue.common import DialogueOptions
from tests.plugin_helpers import install_plugin

PLUGIN = '''
from dialeval.data.importers import register_importer


@register_importer("pipes", "one chat per line: user|bot|user|bot")
def read(path, options, log):
    return [{"id": f"p{n}", "messages": [{"role": ("user", "assistant")[i % 2], "content": text}
                                          for i, text in enumerate(line.split("|"))]}
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
'''


def test_dialeval_import_reads_a_format_its_plugin_registers(tmp_path, monkeypatch, capsys):
    (tmp_path / "pipes_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "chats.txt").write_text("hi|hello, how can I help?\nbye|goodbye\n", encoding="utf-8")
    out = tmp_path / "chats.jsonl"
    assert main(["import", "pipes", str(tmp_path / "chats.txt"), "-o", str(out), "--plugin", "pipes_plugin"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["p1", "p2"]
    assert rows[0]["messages"][1] == {"role": "assistant", "content": "hello, how can I help?"}
    assert "2 conversations, 4 turns" in capsys.readouterr().out


def test_an_unknown_format_is_named_with_the_known_ones():
    with pytest.raises(ConfigError, match=r"dialogue option 'format': unknown format 'pipez'; formats: dialogue, otel, langsmith"):
        DialogueOptions.of(EvalContext(options={"format": "pipez"}))


def test_an_unknown_probe_stops_before_any_call(tmp_path, capsys):
    code = main(["trust", "--data", str(tmp_path / "x.jsonl"), "--labels", str(tmp_path / "y.jsonl"), "--rubric", "dialogue",
                 "--judge", "dry-run", "--probes", "position,halfing"])
    assert code != 0
    assert "unknown probe 'halfing'; choose from position, verbosity, self_preference, needle, consistency" in capsys.readouterr().err


def test_an_installed_package_registers_its_format_through_the_entry_point(tmp_path, monkeypatch):
    from dialeval.data.importers import get_importer, importer_names
    from dialeval.plugins import reset_entry_points

    site = tmp_path / "site"
    install_plugin(site, "pipes_installed", PLUGIN.replace('"pipes"', '"pipes_installed"'), "pipes")
    monkeypatch.syspath_prepend(str(site))
    reset_entry_points()
    try:
        importer = get_importer("pipes_installed")
        assert importer is not None and importer.description == "one chat per line: user|bot|user|bot"
        assert "pipes_installed" in importer_names()
    finally:
        reset_entry_points()
