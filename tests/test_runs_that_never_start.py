"""A run that never starts (no key, nothing listening at preflight) leaves no run folder,
names every model that failed its check at once, and `dialeval report` refuses a folder
that holds no results instead of writing an empty report."""

from __future__ import annotations

import json
import socket
import warnings
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.config import ConfigError
from dialeval.report.writer import write_report
from dialeval.evaluation import run
from dialeval.report.viewer import write_site
from tests.helpers import http_config

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
KGDS = ROOT / "src" / "dialeval" / "fixtures" / "kgds_demo.json"


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_a_missing_key_leaves_no_run_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = http_config(tmp_path, {"spec": "anthropic:claude-haiku-4-5"})
    with pytest.raises(ConfigError, match="no API key"):
        run("answers", DATA, config, progress=False)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_an_unreachable_api_at_preflight_leaves_no_run_folder(tmp_path, capsys):
    code = main(["run", "answers", "--data", str(DATA), "--model", "openai-compatible:x", "--base-url",
                 _closed_port_url(), "--output-dir", str(tmp_path), "--no-progress"])
    assert code == 2 and "cannot reach openai-compatible:x" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_every_missing_key_is_named_at_once_and_no_coroutine_is_left_pending(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["run", "kgds", "--data", str(KGDS), "--config", str(ROOT / "configs" / "openai-judges.yaml"),
                     "--output-dir", str(tmp_path), "--no-progress"])
        import gc

        gc.collect()  # a never-awaited coroutine warns when it is collected
    err = capsys.readouterr().err
    assert code == 2
    assert "$OPENAI_API_KEY" in err and "$ANTHROPIC_API_KEY" in err
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert list(tmp_path.iterdir()) == []


def test_report_on_a_folder_without_results_says_so_and_fails(tmp_path, capsys):
    folder = tmp_path / "answers-0000000000"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"benchmark": "answers", "data": str(DATA)}))
    with pytest.raises(ConfigError, match="never evaluated an item"):
        write_report(folder)
    assert main(["report", str(folder)]) == 2
    assert "never evaluated an item" in capsys.readouterr().err
    assert not (folder / "report.md").exists()


def test_the_viewer_does_not_list_a_folder_without_results(tmp_path):
    folder = tmp_path / "answers-0000000000"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"benchmark": "answers", "data": str(DATA)}))
    index = write_site(tmp_path).read_text()
    assert "answers-0000000000" not in index
