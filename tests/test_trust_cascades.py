"""`dialeval trust --cascades`: a cascade, its calibrated twin and a jury on the card, over HTTP.

The judges are scripted (:mod:`dialeval.testing.cascade_judges`): ``cheap`` is right and
sure on easy units, wrong and unsure on the hard quarter; ``strong`` is right everywhere
at twenty times the price.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from dialeval.cli import main
from dialeval.testing import cascade_judges as cj
from dialeval.testing.openai_server import OpenAIStub
from dialeval.trust.cascades import calibrate, upper_bound
from tests.dialogue_helpers import write_jsonl

CONVERSATIONS = 12  # 36 units, 9 of them hard


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    root = tmp_path_factory.mktemp("cascades")
    data = write_jsonl(root / "chats.jsonl", cj.conversations(CONVERSATIONS))
    human = write_jsonl(root / "labels.jsonl", cj.labels(CONVERSATIONS))
    (root / "rubric.yaml").write_text(cj.RUBRIC, encoding="utf-8")
    with OpenAIStub(respond=cj.respond) as server:
        candidates = {"candidates": [
            {"model": {"spec": f"openai-compatible:{name}", "base_url": server.base_url, "price": cj.PRICES[name], "max_retries": 0},
             "name": name} for name in ("strong", "cheap")
        ]}
        (root / "candidates.yaml").write_text(json.dumps(candidates), encoding="utf-8")
        code = main(["trust", "--data", str(data), "--labels", str(human), "--rubric", str(root / "rubric.yaml"),
                     "--candidates", str(root / "candidates.yaml"), "--output-dir", str(root / "trust"), "--id", "card",
                     "--cascades", "--probes", "position,verbosity,consistency", "--tolerance", "0.1"])
        sent = Counter((b["model"], b.get("seed")) for b in server.requests)
    folder = root / "trust" / "card"
    return {"code": code, "sent": sent, "json": json.loads((folder / "card.json").read_text()),
            "md": (folder / "card.md").read_text(), "folder": folder}


def rows(card: dict) -> dict[str, dict]:
    return {c["label"]: c for c in card["json"]["candidates"]}


@pytest.mark.timeout(300)
def test_the_card_adds_a_cascade_a_calibrated_cascade_and_a_jury(card):
    assert card["code"] == 0
    assert list(rows(card)) == ["strong", "cheap", "cascade-cheap-strong", "jury-strong-cheap", "cascade-cheap-strong-calibrated"]
    cascade = rows(card)["cascade-cheap-strong"]
    comp = cascade["composite"]
    assert comp["kind"] == "cascade" and comp["escalated_share"] == pytest.approx(9 / 36)
    assert comp["stages"]["0"]["calls"] == 72 and comp["stages"]["1"]["calls"] == 9  # two cheap readings a unit, strong on 9
    jury = rows(card)["jury-strong-cheap"]["composite"]
    assert jury["kind"] == "ensemble" and jury["stages"]["0"]["calls"] == 72
    # each composite has agreement, probes (position not measured: its pairwise judge is its first member) and a cost
    for label in ("cascade-cheap-strong", "jury-strong-cheap"):
        row = rows(card)[label]
        assert row["alpha"] is not None and row["cost_per_1000_units"] > 0
        assert row["probes"]["position"]["fails"] is None and row["probes"]["verbosity"]["fails"] is False
    assert "## Cascades and juries" in card["md"]


def test_the_cascade_agrees_as_the_strong_judge_does_at_a_fraction_of_its_cost(card):
    r = rows(card)
    assert r["cascade-cheap-strong"]["alpha"] == pytest.approx(r["strong"]["alpha"])
    assert r["cheap"]["alpha"] < r["strong"]["alpha"] - 0.1
    share = r["cascade-cheap-strong"]["cost_per_1000_units"] / r["strong"]["cost_per_1000_units"]
    assert 0.3 < share < 0.4  # two cheap readings at 1/20 each, plus the strong judge on a quarter of the units
    assert card["json"]["recommended"]["label"].startswith("cascade-cheap-strong")


def test_the_calibrated_threshold_and_its_guarantee(card):
    (found,) = card["json"]["calibration"]
    assert found["cascade"] == "cascade-cheap-strong" and found["threshold"] == 1.0
    assert found["strong_disagreement"] == 0.0 and found["target"] == pytest.approx(0.1)
    # threshold 1.0 keeps the 27 easy units, all right: the bound 1 - 0.1 ** (1 / 27) is under 0.1
    assert found["tried"][0] == {"threshold": 1.0, "kept": 27, "errors": 0, "upper_bound": round(upper_bound(0, 27, 0.9), 4)}
    assert found["tried"][1]["threshold"] == 0.5 and found["tried"][1]["errors"] == 9  # looser: the hard ones come in, and it stops
    assert "With probability at least 0.9" in found["guarantee"]
    assert rows(card)["cascade-cheap-strong-calibrated"]["composite"]["escalated_share"] == pytest.approx(9 / 36)


def test_the_calibrated_twin_reads_the_cascades_answers_from_the_cache(card):
    # second readings: the cascade's base and padded runs once each (its calibrated twin reads them
    # from the cache), and the two cascades' consistency repeats, which never read the cache
    assert card["sent"][("cheap", 2)] == 36 * (2 + 2)


def test_clopper_pearson_bound():
    assert upper_bound(0, 45, 0.9) == pytest.approx(1 - 0.1 ** (1 / 45))
    assert upper_bound(3, 3, 0.9) == 1.0
    assert calibrate([], {}, {}, 0.05)["threshold"] is None
