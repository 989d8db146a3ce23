"""`dialeval trust` end to end: four scripted judges over HTTP, one card.

The judges answer from what a real judge would read in its prompt. Every reply carries a
hidden tag ``[q=<quality> u=<unit>]``; the humans label the quality (two annotators, the
second sometimes one point off). The judges:

- ``good``: the quality, one point off on a few units (its noise), ties equal pairs;
- ``flipper``: scores as ``good`` does, but in a pair always prefers the one shown first;
- ``lengthy``: scores by length, one point more for GPT-written replies, misses contradictions;
- ``costly``: ``good``'s verdicts at fifty times the price.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

from dialeval.cli import main
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from dialeval.trust.perturb import NEEDLES
from tests.dialogue_helpers import write_jsonl

# per unit: 12 conversations x 3 replies; the humans labelled the first 8 conversations (24 units)
QUALITY = [5, 2, 4, 1, 3, 5, 2, 4, 3, 1, 4, 2, 5, 3, 1, 4, 2, 3, 5, 1, 3, 4, 2, 5, 4, 4, 3, 5, 2, 4, 1, 3, 4, 5, 2, 3]
LABELLED = 24
NOISY_UNITS = {3, 10, 17}  # the good judge is one point off here
# candidate -> (served model name, price per million tokens in and out); a gpt- name makes its family OpenAI's
JUDGES = {"good": ("good", [0.1, 0.2]), "flipper": ("flipper", [0.05, 0.1]), "lengthy": ("gpt-lengthy", [0.08, 0.1]),
          "costly": ("costly", [5.0, 10.0])}


def reply(unit: int) -> str:
    """Longer replies are not better ones: length cycles independently of quality."""
    return f"[q={QUALITY[unit]} u={unit}] Here is my answer." + " It has more detail." * (unit % 4)


def conversations() -> list[dict]:
    out = []
    for c in range(12):
        messages = []
        for k in range(3):
            messages += [{"role": "user", "content": f"Question {k + 1} about topic {c}?"},
                         {"role": "assistant", "content": reply(3 * c + k)}]
        out.append({"id": f"c{c}", "messages": messages, "metadata": {"model": "gpt-4o" if c % 2 else "claude-3-5-sonnet"}})
    return out


def labels() -> list[dict]:
    rows = []
    for unit, q in enumerate(QUALITY[:LABELLED]):
        second = q if unit % 5 else max(1, min(5, q + (1 if q < 3 else -1)))
        rows.append({"id": f"c{unit // 3}", "turn": 2 * (unit % 3) + 2, "criterion": "helpfulness", "score": [q, second]})
    return rows


def _tag(text: str) -> tuple[int, int]:
    q, u = re.search(r"\[q=(\d) u=(\d+)\]", text).groups()
    return int(q), int(u)


def good_score(unit: int) -> float:
    """The good judge's verdict: the quality, one point off on the noisy units."""
    q = QUALITY[unit]
    return float(max(1, min(5, q + (1 if unit in NOISY_UNITS and q < 5 else -1 if unit in NOISY_UNITS else 0))))


def respond(body: dict) -> str:
    judge, text = body["model"], prompt_of(body)
    if "<candidate_1>" in text:  # pairwise, in one order
        first, second = (text.rsplit(f"<candidate_{i}>", 1)[1].split(f"</candidate_{i}>", 1)[0] for i in (1, 2))
        if judge == "flipper":
            return json.dumps({"rationale": "the first one", "winner": "1"})
        if judge == "gpt-lengthy":
            winner = "1" if len(first) > len(second) else "2" if len(second) > len(first) else "tie"
            return json.dumps({"rationale": "longer", "winner": winner})
        a, b = _tag(first)[0], _tag(second)[0]
        return json.dumps({"rationale": "by quality", "winner": "1" if a > b else "2" if b > a else "tie"})
    judged = re.findall(r'<reply turn="\d+">(.*?)</reply>', text, re.S)[-1]
    if "name: remembers_user" in text:
        before = text.split('<reply turn=', 1)[0]
        caught = judge != "gpt-lengthy" and any(late in judged and early in before for early, late in NEEDLES)
        return json.dumps({"rationale": "checked", "verdict": "no" if caught else "yes"})
    unit = _tag(judged)[1]
    if judge == "gpt-lengthy":  # conversations with odd numbers were written by GPT: one point more
        score = min(5, 1 + len(judged) // 30 + (1 if unit // 3 % 2 else 0))
    else:
        score = good_score(unit)
    return json.dumps({"rationale": "scripted", "verdict": score})


RUBRIC = """criteria:
  - name: helpfulness
    level: turn
    description: Does the reply help the user with what they asked?
    scale: [1, 5]
"""


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    root = tmp_path_factory.mktemp("trust")
    data = write_jsonl(root / "chats.jsonl", conversations())
    human = write_jsonl(root / "labels.jsonl", labels())
    (root / "rubric.yaml").write_text(RUBRIC, encoding="utf-8")
    with OpenAIStub(respond=respond) as server:
        candidates = {"candidates": [
            {"model": {"spec": f"openai-compatible:{model}", "base_url": server.base_url, "price": price, "max_retries": 0}, "name": name}
            for name, (model, price) in JUDGES.items()
        ]}
        (root / "candidates.yaml").write_text(json.dumps(candidates), encoding="utf-8")
        argv = ["trust", "--data", str(data), "--labels", str(human), "--rubric", str(root / "rubric.yaml"),
                "--candidates", str(root / "candidates.yaml"), "--output-dir", str(root / "trust"), "--id", "card",
                "--corpus"]
        priced = main([*argv, "--dry-run"])
        sent_by_dry_run = len(server.requests)
        code = main(argv)
    folder = root / "trust" / "card"
    return {"code": code, "priced": priced, "dry_sent": sent_by_dry_run, "folder": folder,
            "json": json.loads((folder / "card.json").read_text()), "md": (folder / "card.md").read_text(), "labels": labels()}


def by_label(card_json: dict) -> dict[str, dict]:
    return {c["label"]: c for c in card_json["candidates"]}


def test_the_card_recommends_the_cheapest_good_judge_and_says_so_first(card):
    assert card["priced"] == 0 and card["dry_sent"] == 0  # the dry run priced the card without one request
    assert card["code"] == 0
    assert card["json"]["recommended"]["label"] == "good"
    first = card["md"].splitlines()[2]
    assert first.startswith("Use **good**") and "cheapest" in first and "not a guarantee" in first
    assert set(card["json"]["recommended"]["close"]) == {"good", "flipper", "costly"}  # lengthy agrees far less


def test_the_biased_judges_are_named_by_their_probes(card):
    rows = by_label(card["json"])
    assert rows["good"]["failed_probes"] == [] and rows["costly"]["failed_probes"] == []
    assert rows["flipper"]["failed_probes"] == ["position"]
    assert rows["flipper"]["probes"]["position"]["value"] == 1.0 and rows["flipper"]["probes"]["position"]["first_position_rate"] == 1.0
    assert set(rows["lengthy"]["failed_probes"]) == {"verbosity", "self_preference", "needle"}
    assert rows["good"]["probes"]["needle"]["value"] == 1.0 and rows["good"]["probes"]["verbosity"]["value"] == 0.0
    assert rows["good"]["probes"]["self_preference"]["fails"] is None  # no reply of its own family: not measured
    assert "position" in card["md"] and "flipper (position)" in card["json"]["recommended"]["sentence"]


def test_agreement_figures_equal_scipys_on_the_same_units(card):
    import krippendorff

    good = by_label(card["json"])["good"]["agreement"]["turn/helpfulness"]
    units = [(row["score"], row) for row in card["labels"]]
    human = np.array([np.mean(s) for s, _ in units])
    judge = np.array([good_score(u) for u in range(LABELLED)])
    assert good["n"] == LABELLED
    assert good["spearman"]["value"] == pytest.approx(stats.spearmanr(judge, human).statistic)
    assert good["kendall_tau_b"]["value"] == pytest.approx(stats.kendalltau(judge, human).statistic)
    alpha = krippendorff.alpha(reliability_data=np.array([judge, human]), level_of_measurement="ordinal")
    assert good["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    labels_flat = [(judge[i], y) for i, (s, _) in enumerate(units) for y in s]
    assert good["exact_agreement"]["value"] == pytest.approx(np.mean([j == y for j, y in labels_flat]))
    assert good["adjacent_agreement"]["value"] == pytest.approx(np.mean([abs(j - y) <= 1 for j, y in labels_flat]))
    ceiling = good["ceiling"]
    first, second = np.array([s[0] for s, _ in units]), np.array([s[1] for s, _ in units])
    expected = np.mean([stats.spearmanr(first, second).statistic] * 2)  # each annotator against the other: the same rho
    assert ceiling["spearman"]["value"] == pytest.approx(expected) and ceiling["annotators"] == 2
    assert ceiling["exact_agreement"]["value"] == pytest.approx(np.mean(first == second))
    for figure in (good["spearman"], good["krippendorff_alpha"], ceiling["krippendorff_alpha"]):
        assert figure["ci_low"] <= figure["value"] <= figure["ci_high"]


def test_cost_per_thousand_units_follows_the_price_and_the_tokens(card):
    rows = by_label(card["json"])
    good, costly = rows["good"], rows["costly"]
    assert good["units_judged"] == LABELLED
    usage = good["usage"]["base"]
    by_hand = 1000 * (usage["input_tokens"] * 0.1 + usage["output_tokens"] * 0.2) / 1e6 / LABELLED
    assert good["cost_per_1000_units"] == pytest.approx(by_hand)
    assert costly["cost_per_1000_units"] == pytest.approx(50 * good["cost_per_1000_units"], rel=0.05)
    assert card["json"]["estimate"]["per_candidate"]["costly"] > card["json"]["estimate"]["per_candidate"]["good"]



def test_the_whole_file_judged_by_the_pick_gets_a_prediction_powered_mean(card):
    ppi = card["json"]["prediction_powered"]
    assert ppi["candidate"] == "good"
    figures = ppi["criteria"]["helpfulness"]
    judge = [good_score(u) for u in range(len(QUALITY))]
    human = [np.mean(row["score"]) for row in card["labels"]]
    correction = np.mean([h - judge[u] for u, h in enumerate(human)])
    assert figures["judge_only"]["mean"] == pytest.approx(np.mean(judge)) and figures["judge_only"]["n_judged"] == len(QUALITY)
    assert figures["human_only"]["mean"] == pytest.approx(np.mean(human))
    assert figures["prediction_powered"]["mean"] == pytest.approx(np.mean(judge) + correction)
    assert figures["prediction_powered"]["n_labelled"] == LABELLED
    assert "## The whole data file, judged by good" in card["md"]


def test_the_viewer_page_shows_the_card_and_links_its_runs(card):
    page = (card["folder"] / "view" / "index.html").read_text()
    assert "<h1>Judge trust card card</h1>" in page and "Use <strong>good</strong>" in page
    assert 'href="../runs/flipper-position/view/index.html"' in page and 'src="../plots/trust-alpha.png"' in page
    # the card draws its own two plots; its runs, read by the card, draw none (figures: false)
    assert sorted(p.name for p in (card["folder"] / "plots").iterdir()) == ["trust-alpha.png", "trust-probes.png"]
    assert list(card["folder"].glob("runs/*/plots")) == [] and len(list(card["folder"].glob("runs/*/report.md"))) >= 12


def test_compare_takes_a_cards_folder_as_its_candidates_runs(card, capsys):
    assert main(["compare", str(card["folder"]), "--no-plots", "--out", str(card["folder"].parent / "compare")]) == 0
    shown = capsys.readouterr().out
    assert all(f"{name}-base" in shown for name in JUDGES)



def test_a_failed_call_marks_the_card_incomplete_and_a_rerun_finishes_it(tmp_path, capsys):
    data = write_jsonl(tmp_path / "chats.jsonl", conversations()[:8])
    human = write_jsonl(tmp_path / "labels.jsonl", labels())
    (tmp_path / "rubric.yaml").write_text(RUBRIC, encoding="utf-8")
    down = {"now": True}

    def flaky(body: dict) -> str:  # the server breaks on one reply until it is mended
        if down["now"] and "u=0]" in prompt_of(body):
            raise ConnectionAbortedError("the judge's server fell over")
        return respond(body)

    with OpenAIStub(respond=flaky) as server:
        judge = {"candidates": [{"model": {"spec": "openai-compatible:good", "base_url": server.base_url, "max_retries": 0}}]}
        (tmp_path / "candidates.yaml").write_text(json.dumps(judge), encoding="utf-8")
        argv = ["trust", "--data", str(data), "--labels", str(human), "--rubric", str(tmp_path / "rubric.yaml"),
                "--candidates", str(tmp_path / "candidates.yaml"), "--probes", "verbosity",
                "--output-dir", str(tmp_path / "trust"), "--id", "card", "--no-cache"]
        first = main(argv)
        card = json.loads((tmp_path / "trust" / "card" / "card.json").read_text())
        down["now"] = False
        sent = len(server.requests)
        second = main(argv)
        resent = [prompt_of(b) for b in server.requests[sent:]]
        third = main(argv)
        sent_third = len(server.requests) - sent - len(resent)
    assert first == 1 and card["complete"] is False and card["candidates"][0]["failed_items"] == 2  # c0, plain and padded
    assert "Incomplete" in capsys.readouterr().out
    again = json.loads((tmp_path / "trust" / "card" / "card.json").read_text())
    assert second == 0 and again["complete"] is True and again["candidates"][0]["units_judged"] == LABELLED
    assert len(resent) == 6 and all("u=0]" in p or "u=1]" in p or "u=2]" in p for p in resent)  # c0 only, plain and padded
    assert third == 0 and sent_third == 0  # a finished card built again sends nothing
