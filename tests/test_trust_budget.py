"""`dialeval trust` spends what it was allowed and judges what was labelled: budgets refused
before any call, calls counted by the test server, and a card without a pick says why."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import write_jsonl

RUBRIC = "criteria:\n  - name: helpfulness\n    description: Does the reply help?\n    scale: [1, 5]\n"
SCORES = [5, 2, 4, 1, 3, 4]  # the humans' label of the second reply of each conversation


def score_of(text: str) -> int:
    """The judge reads the hidden score of the reply it is asked about."""
    judged = text.rsplit('<reply turn="', 1)[1]
    return int(judged.split("[s=", 1)[1][0])


@pytest.fixture()
def files(tmp_path):
    """Six conversations of two replies each; the humans labelled only the second replies."""
    chats = write_jsonl(tmp_path / "chats.jsonl", [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": f"[s=3] Hello {i}."},
                                     {"role": "user", "content": "And?"}, {"role": "assistant", "content": f"[s={s}] More {i}."}]}
        for i, s in enumerate(SCORES)
    ])
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        {"id": f"c{i}", "turn": 4, "criterion": "helpfulness", "score": [s, max(1, s - (i % 2))]} for i, s in enumerate(SCORES)
    ])
    (tmp_path / "rubric.yaml").write_text(RUBRIC, encoding="utf-8")
    return tmp_path, chats, labels


def trust(tmp_path, chats, labels, *extra):
    return main(["trust", "--data", str(chats), "--labels", str(labels), "--rubric", str(tmp_path / "rubric.yaml"),
                 "--output-dir", str(tmp_path / "trust"), "--no-cache", *extra])


def respond(body: dict) -> str:
    if "<candidate_1>" in prompt_of(body):  # the position probe's pairs
        return json.dumps({"rationale": "alike", "winner": "tie"})
    return json.dumps({"rationale": "scripted", "verdict": score_of(prompt_of(body))})


def test_a_card_judges_only_the_labelled_units_and_reads_the_same_figures(files):
    tmp_path, chats, labels = files
    cards, sent = {}, {}
    with OpenAIStub(respond=respond) as server:
        for judge_only in ("labelled", "all"):
            before = len(server.requests)
            assert trust(tmp_path, chats, labels, "--judge", "openai-compatible:j", "--base-url", server.base_url,
                         "--probes", "verbosity,position", "--id", judge_only, "--option", f"judge_only={judge_only}") == 0
            sent[judge_only] = len(server.requests) - before
            cards[judge_only] = json.loads((tmp_path / "trust" / judge_only / "card.json").read_text())
    # six labelled replies, judged plain, padded, and in the position run alone and in pairs both ways: 30 calls
    assert sent == {"labelled": 5 * len(SCORES), "all": 10 * len(SCORES)}
    labelled, everything = (cards[k]["candidates"][0] for k in ("labelled", "all"))
    assert labelled["agreement"] == everything["agreement"] and labelled["units_judged"] == len(SCORES)


def test_an_unpriced_candidate_under_a_budget_needs_a_call_limit(files, capsys):
    tmp_path, chats, labels = files
    with OpenAIStub(respond=respond) as server:
        judge = ["--judge", "openai-compatible:j", "--base-url", server.base_url, "--probes", "verbosity"]
        refused = trust(tmp_path, chats, labels, *judge, "--budget", "0.0000001")
        refused_err = capsys.readouterr().err
        too_many = trust(tmp_path, chats, labels, *judge, "--budget", "0.0000001", "--max-calls", "11")
        too_many_err = capsys.readouterr().err
        sent_before = len(server.requests)
        allowed = trust(tmp_path, chats, labels, *judge, "--budget", "0.0000001", "--max-calls", "12")
        sent = len(server.requests)
    assert refused == 2 and "'openai-compatible:j'" in refused_err and "no price is known" in refused_err
    assert "--max-calls" in refused_err and "nothing was sent" in refused_err
    assert too_many == 2 and "counts 12 model calls for the card, over --max-calls 11" in too_many_err
    assert sent_before == 0  # neither refusal sent a request
    assert allowed == 0 and sent == 12


@pytest.mark.parametrize("budget", ["nan", "inf", "-1", "lots"])
def test_a_budget_that_bounds_nothing_is_refused(files, capsys, budget):
    tmp_path, chats, labels = files
    with OpenAIStub(respond=respond) as server, pytest.raises(SystemExit) as stopped:  # argparse's usage error
        trust(tmp_path, chats, labels, "--judge", "openai-compatible:j", "--base-url", server.base_url,
              "--max-calls", "100", f"--budget={budget}")
    assert stopped.value.code == 2 and len(server.requests) == 0
    assert "--budget" in capsys.readouterr().err


def test_the_python_api_refuses_a_nan_budget_before_reading_anything(files):
    import dialeval
    from dialeval.errors import ConfigError

    tmp_path, chats, labels = files
    with pytest.raises(ConfigError, match="finite amount"):
        dialeval.trust_card(chats, labels, str(tmp_path / "rubric.yaml"), [{"model": {"spec": "openai:gpt-4o", "price": [1, 1]}}],
                            output_dir=tmp_path / "trust", budget=float("nan"))


def test_a_card_without_a_pick_names_the_condition_each_candidate_failed(files):
    tmp_path, chats, labels = files

    def contrary(body: dict) -> str:  # scores upside down: agreement below chance
        return json.dumps({"rationale": "scripted", "verdict": 6 - score_of(prompt_of(body))})

    with OpenAIStub(respond=contrary) as server:
        assert trust(tmp_path, chats, labels, "--judge", "openai-compatible:j", "--base-url", server.base_url,
                     "--probes", "verbosity", "--id", "card") == 0
    card = json.loads((tmp_path / "trust" / "card" / "card.json").read_text())
    why = card["recommended"]["why_not"]["openai-compatible:j"]
    assert card["recommended"]["label"] is None
    assert any(w.startswith("mean alpha -") and "below 0.2" in w for w in why)
    first = (tmp_path / "trust" / "card" / "card.md").read_text().splitlines()[2]
    assert first.startswith("No candidate is shown to agree with the humans (openai-compatible:j: mean alpha -")
