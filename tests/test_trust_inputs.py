"""`dialeval trust` stops on bad input before any model call, naming file, record and field."""

from __future__ import annotations

import json

import pytest

import dialeval
from dialeval.cli import main
from dialeval.testing.openai_server import OpenAIStub
from dialeval.trust.dialogue import LabelWarning
from tests.dialogue_helpers import write_jsonl

RUBRIC = "criteria:\n  - name: helpfulness\n    description: Does the reply help?\n    scale: [1, 5]\n"


@pytest.fixture()
def files(tmp_path):
    chats = write_jsonl(tmp_path / "chats.jsonl", [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": f"Hello {i}."}]}
        for i in range(4)
    ])
    (tmp_path / "rubric.yaml").write_text(RUBRIC, encoding="utf-8")
    return tmp_path, chats


def trust(tmp_path, chats, labels, *extra):
    return main(["trust", "--data", str(chats), "--labels", str(labels), "--rubric", str(tmp_path / "rubric.yaml"),
                 "--output-dir", str(tmp_path / "trust"), *extra])


@pytest.mark.parametrize("label, message", [
    ({"id": "c0", "turn": 2, "criterion": "helpfulness", "score": 9}, "9 is not"),  # off the scale
    ({"id": "c0", "turn": 1, "criterion": "helpfulness", "score": 3}, "unit"),  # a user turn
    ({"id": "c0", "criterion": "helpfulness", "score": 3}, "turn"),  # a turn-level criterion without its turn
])
def test_a_bad_label_stops_before_the_first_call(files, capsys, label, message):
    tmp_path, chats = files
    labels = write_jsonl(tmp_path / "labels.jsonl", [label])
    with OpenAIStub() as server:
        code = trust(tmp_path, chats, labels, "--judge", "openai-compatible:j", "--base-url", server.base_url)
        sent = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and sent == 0
    assert "labels.jsonl" in err and message in err


def test_bad_candidates_and_probes_are_named(files, capsys, tmp_path):
    root, chats = files
    labels = write_jsonl(root / "labels.jsonl", [{"id": "c0", "turn": 2, "criterion": "helpfulness", "score": 3}])
    (tmp_path / "candidates.yaml").write_text(json.dumps({"candidates": [{"model": "openai:gpt-4o", "contxt": "notes"}]}))
    assert trust(root, chats, labels, "--candidates", str(tmp_path / "candidates.yaml")) == 2
    assert "contxt" in capsys.readouterr().err
    assert trust(root, chats, labels, "--judge", "openai:gpt-4o", "--probes", "postion") == 2
    assert "unknown probe 'postion'" in capsys.readouterr().err
    assert trust(root, chats, labels) == 2
    assert "at least one --judge" in capsys.readouterr().err


def test_the_python_api_prices_a_card_without_calling(files, monkeypatch):
    tmp_path, chats = files
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the keys are checked, never used, by a dry run
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        {"id": f"c{i}", "turn": 2, "criterion": "helpfulness", "score": [i + 1, i + 2]} for i in range(4)
    ])
    card = dialeval.trust_card(chats, labels, str(tmp_path / "rubric.yaml"), ["openai:gpt-4o-mini", {"model": "openai:gpt-4o", "name": "big"}],
                               output_dir=tmp_path / "trust", dry_run=True, probes=("verbosity",))
    assert card["dry_run"] is True and card["estimate"]["runs"] == 4  # base and padded, per candidate
    per = card["estimate"]["per_candidate"]
    assert set(per) == {"openai:gpt-4o-mini", "big"} and per["big"] > per["openai:gpt-4o-mini"] > 0


def test_the_card_functions_need_no_other_import_in_a_fresh_process():
    """``dialeval.trust_card`` and ``dialeval.trust.card`` are plain functions after ``import
    dialeval`` alone, and importing the package patches nothing: it stays an ordinary module."""
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src"
    code = ("import types, dialeval; print(dialeval.trust_card.__name__, dialeval.trust.card.__name__, "
            "type(dialeval.trust) is types.ModuleType, callable(dialeval.trust))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(src)})
    assert out.stdout.split() == ["trust_card", "card", "True", "False"], out.stderr[-500:]


def test_another_systems_replies_go_to_the_position_probe_only(files):
    from dialeval.trust.build import TrustSettings, plan, read_inputs
    from dialeval.trust.candidates import candidates_of

    tmp_path, chats = files
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": "c0", "turn": 2, "criterion": "helpfulness", "score": 3}])
    settings = TrustSettings(data=chats, labels=labels, rubric=str(tmp_path / "rubric.yaml"), candidates=candidates_of(["openai:gpt-4o"]),
                             options={"versus": "other.jsonl", "context_budget": 3000})
    runs, _ = plan(settings, read_inputs(settings), tmp_path / "card")
    by_probe = {r.probe: r.options for r in runs}
    assert by_probe["position"]["versus"] == "other.jsonl"
    assert all("versus" not in options for probe, options in by_probe.items() if probe != "position")
    assert all(options["context_budget"] == 3000 for options in by_probe.values())
    assert [r.cached for r in runs if r.probe.startswith("repeat")] == [False]  # a repeat never reads the cache


def test_a_card_priced_over_the_budget_stops_before_any_call(files, capsys):
    tmp_path, chats = files
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": f"c{i}", "turn": 2, "criterion": "helpfulness", "score": 3} for i in range(4)])
    with OpenAIStub() as server:
        priced = {"candidates": [{"model": {"spec": "openai-compatible:j", "base_url": server.base_url, "price": [1000.0, 1000.0]}}]}
        (tmp_path / "candidates.yaml").write_text(json.dumps(priced), encoding="utf-8")
        code = trust(tmp_path, chats, labels, "--candidates", str(tmp_path / "candidates.yaml"), "--budget", "0.01")
        sent = len(server.requests)
    assert code == 2 and sent == 0
    assert "over the budget of $0.01" in capsys.readouterr().err



@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_every_candidates_key_is_checked_before_the_first_call(files, capsys, monkeypatch, dry_run):
    """The second candidate's missing key stops the card before the first candidate's runs
    (and its dry run says so too), naming the candidate."""
    tmp_path, chats = files
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": f"c{i}", "turn": 2, "criterion": "helpfulness", "score": 3} for i in range(4)])
    with OpenAIStub() as server:
        code = trust(tmp_path, chats, labels, "--judge", "openai-compatible:x", "--judge", "openai:gpt-4o-mini",
                     "--base-url", server.base_url, "--probes", "verbosity", *dry_run)
        sent = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and sent == 0
    assert "candidate 'openai:gpt-4o-mini'" in err and "OPENAI_API_KEY" in err


def test_skipped_labels_are_warned_on_stderr_each_with_its_record(files, capsys, monkeypatch):
    tmp_path, chats = files
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": "c0", "turn": 2, "criterion": "helpfulness", "score": 3},
                                                     {"id": "c1", "turn": 1, "criterion": "helpfulness", "score": 3},
                                                     {"id": "c2", "turn": 2, "criterion": "tone", "score": 3}])
    with pytest.warns(LabelWarning) as caught:  # the command line prints each as `dialeval: warning: ...`
        assert trust(tmp_path, chats, labels, "--judge", "openai:gpt-4o-mini", "--probes", "verbosity", "--dry-run") == 0
    warned = [str(w.message) for w in caught if w.category is LabelWarning]
    assert len(warned) == 2
    assert "record 2" in warned[0] and "'c1/1'" in warned[0] and "record 3" in warned[1] and "'tone'" in warned[1]
