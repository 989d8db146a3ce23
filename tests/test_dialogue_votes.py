"""Pairwise human votes (A / B / tie) in a versus run, over HTTP: S1 and S2 agreement as the
MT-Bench paper computes them, vote by vote, against the majority and among the voters."""

from __future__ import annotations

import json
import re

import pytest

from dialeval.data.io import DataError
from dialeval.errors import ConfigError
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import write_jsonl
from tests.helpers import http_config

RUBRIC = """criteria:
  - name: helpfulness
    level: turn
    description: Does the reply help?
    scale: [1, 5]
"""
# (A's reply, B's reply) at turns 2 and 4 of c0, c1, c2
REPLIES = {"c0": [("GOOD", "BAD"), ("BAD", "GOOD")], "c1": [("GOOD", "GOOD"), ("BAD", "BAD")], "c2": [("GOOD", "BAD"), ("GOOD", "BAD")]}
VOTES = [
    {"id": "c0", "turn": 2, "criterion": "helpfulness", "votes": ["a", "a"]},
    {"id": "c0", "turn": 4, "criterion": "helpfulness", "vote": "b", "annotator": "x"},
    {"id": "c0", "turn": 4, "criterion": "helpfulness", "vote": "tie", "annotator": "y"},
    {"id": "c1", "turn": 2, "criterion": "helpfulness", "votes": ["tie", "A"]},
    {"id": "c1", "turn": 4, "criterion": "helpfulness", "votes": ["b", "b"]},
    {"id": "c2", "turn": 2, "criterion": "helpfulness", "votes": ["a", "b"]},
    {"id": "c2", "turn": 4, "criterion": "helpfulness", "vote": "a"},
]


def side(system: int) -> list[dict]:
    out = []
    for cid, turns in REPLIES.items():
        messages = []
        for k, pair in enumerate(turns):
            messages += [{"role": "user", "content": f"Question {k + 1} of {cid}?"},
                         {"role": "assistant", "content": f"{pair[system]} reply from {'AB'[system]} ({cid}, {k})"}]
        out.append({"id": cid, "messages": messages})
    return out


def last_reply(text: str, n: int) -> str:
    return re.findall(rf"<candidate_{n}>\n(.*?)\n</candidate_{n}>", text, re.S)[-1].rsplit("Assistant: ", 1)[-1]


def referee(body: dict) -> str:
    """The better reply wins; two good ones: A when A is shown first, else a tie (the verdict
    changes with the order); two bad ones: always the first shown (it flips)."""
    text = prompt_of(body)
    if "<candidate_1>" not in text:
        return '{"rationale": "fine", "verdict": 3}'
    first, second = last_reply(text, 1), last_reply(text, 2)
    good = ("GOOD" in first, "GOOD" in second)
    if good == (True, True):
        return '{"rationale": "both", "winner": "%s"}' % ("1" if "from A" in first else "tie")
    if good == (False, False):
        return '{"rationale": "first", "winner": "1"}'
    return '{"rationale": "better", "winner": "%s"}' % ("1" if good[0] else "2")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "rubric.yaml").write_text(RUBRIC, encoding="utf-8")
    return {"a": write_jsonl(tmp_path / "a.jsonl", side(0)), "b": write_jsonl(tmp_path / "b.jsonl", side(1)),
            "votes": write_jsonl(tmp_path / "votes.jsonl", VOTES), "rubric": str(tmp_path / "rubric.yaml"), "tmp": tmp_path}


def test_agreement_with_votes_s1_s2_vote_by_vote_majority_and_humans(files):
    with OpenAIStub(respond=referee) as server:
        config = http_config(files["tmp"], {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"versus": str(files["b"]), "human_scores": str(files["votes"]), "rubric": files["rubric"],
                                      "facts": "off"})
        result = run("dialogue", str(files["a"]), config, progress=False)
    winners = {f"{r['id']}/{u['turn']}": u["winner"] for r in result.records for u in r["pairwise_units"]}
    assert winners == {"c0/2": "a", "c0/4": "b", "c1/2": "tie", "c1/4": "tie", "c2/2": "a", "c2/4": "a"}
    row = result.metrics["pairwise_human_agreement"]["turn/helpfulness"]
    assert (row["units"], row["votes"], row["order_inconsistent"]) == (6, 11, 2)
    # worked by hand in the module's terms: 6 of 11 votes match (S1); without ties 5 of 6 (S2)
    assert row["s1"]["vote"] == {"n": 11, "agreement": pytest.approx(6 / 11)}
    assert row["s2"]["vote"] == {"n": 6, "agreement": pytest.approx(5 / 6)}
    # majorities a, tie (split), tie (split), b, tie (split), a
    assert row["s1"]["majority"] == {"n": 6, "agreement": 0.5} and row["s2"]["majority"] == {"n": 2, "agreement": 1.0}
    # the voters among themselves: five units with two votes
    assert row["s1"]["humans"] == {"n": 5, "agreement": 0.4} and row["s2"]["humans"] == {"n": 3, "agreement": pytest.approx(2 / 3)}
    assert "S1 vote by vote" in (result.run_dir / "report.md").read_text(encoding="utf-8")


def test_bad_votes_stop_before_any_call(files):
    bad = write_jsonl(files["tmp"] / "bad.jsonl", [{"id": "c0", "turn": 2, "criterion": "helpfulness", "vote": "left"}])
    options = {"versus": str(files["b"]), "human_scores": str(bad), "rubric": files["rubric"]}
    with OpenAIStub(respond=referee) as server:
        config = http_config(files["tmp"], {"spec": "openai-compatible:stub", "base_url": server.base_url}, options=options)
        with pytest.raises(DataError, match="'left' is not a vote"):
            run("dialogue", str(files["a"]), config, progress=False)
        config = http_config(files["tmp"], {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={**options, "human_scores": str(files["votes"]), "versus": None})
        with pytest.raises(ConfigError, match="give option versus"):
            run("dialogue", str(files["a"]), config, progress=False)
        assert not server.requests
    assert json.loads(files["votes"].read_text().splitlines()[0])["votes"] == ["a", "a"]


def flipper(body: dict) -> str:
    """Always the candidate shown first: every verdict changes with the order."""
    if "<candidate_1>" not in prompt_of(body):
        return '{"rationale": "fine", "verdict": 3}'
    return '{"rationale": "first", "winner": "1"}'


@pytest.mark.timeout(120)
def test_the_card_reads_votes_and_picks_the_judge_that_agrees_with_the_voters(files):
    from dialeval.cli import main

    with OpenAIStub(respond=referee) as good, OpenAIStub(respond=flipper) as first:
        candidates = {"candidates": [
            {"model": {"spec": "openai-compatible:first", "base_url": first.base_url, "price": [0.1, 0.1]}, "name": "first"},
            {"model": {"spec": "openai-compatible:good", "base_url": good.base_url, "price": [1.0, 1.0]}, "name": "good"},
        ]}
        (files["tmp"] / "candidates.yaml").write_text(json.dumps(candidates), encoding="utf-8")
        code = main(["trust", "--data", str(files["a"]), "--labels", str(files["votes"]), "--rubric", files["rubric"],
                     "--candidates", str(files["tmp"] / "candidates.yaml"), "--option", f"versus={files['b']}",
                     "--output-dir", str(files["tmp"] / "trust"), "--id", "pairs", "--tolerance", "0.1"])
        scored = [b for b in good.requests + first.requests if "<candidate_1>" not in prompt_of(b)]
    card = json.loads((files["tmp"] / "trust" / "pairs" / "card.json").read_text())
    rows = {r["label"]: r for r in card["candidates"]}
    assert code == 0 and not scored  # judge_only=pairs: the card's runs compare, they score nothing
    assert rows["good"]["s2_vote_agreement"] == pytest.approx(5 / 6) and rows["good"]["pairs"] == 6
    assert rows["first"]["s2_vote_agreement"] is None and rows["first"]["order_inconsistent_share"] == 1.0  # all ties
    assert card["units"] == {"pairs": 6, "conversations": 3, "votes": 11}
    # 5 of 6 is too few votes to be sure of beating chance: the card says so rather than pick
    assert rows["good"]["s2_lower_bound"] < 0.5 and card["recommended"]["label"] is None
    assert "above chance" in (files["tmp"] / "trust" / "pairs" / "card.md").read_text()


def test_the_pairwise_pick_is_the_cheapest_close_candidate_clearly_above_chance():
    from dialeval.trust.pairwise import lower_bound, recommend

    def row(label, hits, n, cost):
        return {"label": label, "s2_vote_agreement": hits / n, "s2_lower_bound": lower_bound(hits, n), "cost_per_1000_pairs": cost}

    rows = [row("big", 36, 40, 1.0), row("small", 34, 40, 0.1), row("tiny", 5, 6, 0.01), row("poor", 20, 40, 0.001)]
    assert lower_bound(36, 40) == pytest.approx(0.7857, abs=1e-3)
    picked = recommend(rows, 0.1)
    assert picked["label"] == "small" and picked["close"] == ["tiny", "small", "big"]  # tiny is close but unsure
