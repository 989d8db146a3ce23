"""MMRC metrics: EP, IMP, RP, ability means and NOTE-TAKING deltas, with their edge cases."""

from __future__ import annotations

import pytest

from dialeval.protocols.mmrc.metrics import (
    aggregate,
    ep_counts,
    extraction_precision,
    image_hits,
    image_precision,
    refusal_precision,
)
from dialeval.protocols.mmrc.text_rules import exact_matches, image_numbers, match_items, refusal_by_rule, split_items


def test_extraction_precision_counts_each_reference_item_once():
    # four items named: two distinct reference items, one repeat, one invented
    assert ep_counts([1, 2, 2, None]) == (4, 2)
    assert extraction_precision(4, 2) == 0.5
    assert extraction_precision(0, 0) == 0.0  # nothing listed: the formula's 0/0 scores 0, never a reward


def test_image_precision_is_hits_over_hits_and_misses():
    result = image_hits("The 7th and 8th images, and maybe image 2.", [7, 9])
    assert result == {"expected": [7, 9], "predicted": [7, 8, 2], "hits": 1, "misses": 1}
    assert image_precision(result["hits"], result["misses"]) == 0.5
    assert image_hits("I don't remember any picture of that.", [3])["hits"] == 0
    assert image_precision(0, 0) is None


def test_refusal_precision_is_refusals_given_over_refusals_expected():
    # two questions call for a refusal, the model refused one; a third needs an answer and got one
    toy = [(True, True), (True, False), (False, False)]
    assert refusal_precision(toy) == 0.5  # the paper's RP; matching behaviour overall would be 0.667
    assert refusal_precision([(True, True), (False, True)]) == 1.0  # a needless refusal is counted apart
    assert refusal_precision([(False, False)]) is None and refusal_precision([]) is None


def test_rp_in_the_summary_counts_needless_refusals_beside_it():
    rows = [
        _q("off", "AR", 5, refuse=True, refusal={"expected": True, "refused": True, "status": "ok"}),
        _q("off", "AR", 1, refuse=True, refusal={"expected": True, "refused": False, "status": "ok"}),
        _q("off", "MR", 2, refuse=False, refusal={"expected": False, "refused": True, "status": "ok"}),
        _q("off", "CR", 4, refuse=False, refusal={"expected": False, "refused": False, "status": "ok"}),
    ]
    rp = aggregate([{"questions": rows}])["conditions"]["off"]["RP"]
    assert (rp["value"], rp["n"], rp["refused"]) == (0.5, 2, 1)
    assert (rp["false_refusals"], rp["answerable"]) == (1, 2)


@pytest.mark.parametrize(
    "answer, numbers",
    [
        ("The third one.", [3]),
        ("Images 2 and 5.", [2, 5]),
        ("the second and fourth pictures", [2, 4]),
        ("Picture two shows it", [2]),
        ("In the first place, it was raining.", []),
    ],
)
def test_image_numbers_read_digits_and_ordinals(answer, numbers):
    assert image_numbers(answer) == numbers


def test_items_are_split_and_matched():
    pieces = split_items("The user visited: Alfama, Belem and a viewpoint over the river.")
    assert pieces == ["Alfama", "Belem", "a viewpoint over the river"]
    assert exact_matches(pieces, ["Alfama", "Belem", "viewpoint"]) is None
    assert exact_matches(["alfama", "Belem."], ["Alfama", "Belem", "viewpoint"]) == [1, 2]
    assert match_items(pieces, ["Alfama", "Belem", "viewpoint", "Mouraria"]) == [1, 2, 3]


@pytest.mark.parametrize(
    "answer, refused",
    [
        ("It was not mentioned in our conversation.", True),
        ("You never told me the name of the hostel.", True),
        ("I can't answer that from what you shared.", True),
        ("It was not mentioned, but probably the blue one.", None),  # a hedged guess: no plain refusal
        ("You never said; my guess is Brand X.", None),
        ("B", False),
        ("True.", False),
        ("The hostel is called Sunny Alfama.", None),  # the model decides
    ],
)
def test_refusal_rule_settles_only_plain_cases(answer, refused):
    assert refusal_by_rule(answer) is refused


def _q(condition, ability, score, **extra):
    row = {"condition": condition, "ability": ability, "score": score, "answer_status": "ok", "refuse": None}
    row.update(extra)
    return row


def test_aggregate_reports_both_conditions_and_their_deltas():
    records = [
        {
            "questions": [
                _q("off", "IE", 2, ep={"status": "ok", "n_model": 4, "n_hit": 2}),
                _q("on", "IE", 4, ep={"status": "ok", "n_model": 2, "n_hit": 2}),
                _q("off", "IM", 1, imp={"hits": 0, "misses": 2}),
                _q("on", "IM", 3, imp={"hits": 1, "misses": 1}),
                _q("off", "AR", 1, refuse=True, refusal={"expected": True, "refused": False, "status": "ok"}),
                _q("on", "AR", 5, refuse=True, refusal={"expected": True, "refused": True, "status": "ok"}),
                _q("off", "MR", 0, answer_status="unparsed"),  # an empty answer scores 0
                _q("on", "MR", 4),
            ],
            "note_updates": [{"status": "ok"}, {"status": "unparsed"}],
        }
    ]
    m = aggregate(records)
    off, on = m["conditions"]["off"], m["conditions"]["on"]
    assert list(m["conditions"]) == ["off", "on"]
    assert off["abilities"]["MR"] == {"mean": 0, "ci": None, "n": 1, "cut_off": 0, "empty": 1, "judge_failed": 0, "errored": 0}
    assert off["abilities"]["CR"]["mean"] is None
    assert off["overall"] == pytest.approx((2 + 1 + 1 + 0) / 4)
    assert on["overall"] == pytest.approx((4 + 3 + 5 + 4) / 4)
    assert (off["EP"]["value"], on["EP"]["value"]) == (0.5, 1.0)
    assert (off["IMP"]["value"], on["IMP"]["value"]) == (0.0, 0.5)
    assert (off["RP"]["value"], on["RP"]["value"]) == (0.0, 1.0)
    assert m["deltas"]["IE"] == 2 and m["deltas"]["MR"] == 4 and m["deltas"]["RP"] == 1.0
    assert m["note_taking"] == {"updates": 2, "ok": 1, "unusable": 1}
    assert off["answers"] == {"total": 4, "ok": 3, "unparsed": 1}


def test_unusable_helper_verdicts_are_left_out_and_counted():
    m = aggregate(
        [
            {
                "questions": [
                    _q("off", "IE", 3, ep={"status": "unparsed", "n_model": 0, "n_hit": 0}),
                    _q("off", "IE", 3, ep={"status": "ok", "n_model": 0, "n_hit": 0}),
                    _q("off", "IM", None, answer_status="error"),
                    _q("off", "AR", 2, refuse=False, refusal={"expected": False, "refused": None, "status": "unparsed"}),
                ]
            }
        ]
    )
    s = m["conditions"]["off"]
    assert s["EP"] == {"value": 0.0, "ci": None, "n": 1, "named_none": 1, "cut_off": 0, "empty": 0, "helper_failed": 1, "errored": 0}
    assert s["IMP"] == {"value": None, "ci": None, "n": 0, "cut_off": 0, "empty": 0, "errored": 1}
    assert (s["RP"]["value"], s["RP"]["n"], s["RP"]["helper_failed"]) == (None, 0, 1)
    assert s["abilities"]["IM"] == {"mean": None, "ci": None, "n": 0, "cut_off": 0, "empty": 0, "judge_failed": 0, "errored": 1}
    assert "deltas" not in m


def test_cut_off_answers_count_in_the_figures_and_are_shown_beside_them():
    rows = [
        _q("on", "IE", 2, answer_status="truncated", ep={"status": "ok", "n_model": 2, "n_hit": 1}),
        _q("on", "IE", None, ep={"status": "ok", "n_model": 1, "n_hit": 1}),  # the judge failed
    ]
    s = aggregate([{"questions": rows}])["conditions"]["on"]
    assert s["abilities"]["IE"] == {"mean": 2, "ci": None, "n": 1, "cut_off": 1, "empty": 0, "judge_failed": 1, "errored": 0}
    assert (s["EP"]["value"], s["EP"]["n"], s["EP"]["cut_off"]) == (0.75, 2, 1)


def test_note_taking_on_and_off_are_tested_question_by_question():
    records = [
        {"id": f"conv-{c}", "questions": [
            _q("off", "IE", 2, index=0), _q("on", "IE", 4, index=0),
            _q("off", "MR", 3, index=1), _q("on", "MR", 3, index=1),
            _q("off", "CR", None, index=2), _q("on", "CR", 5, index=2),  # the judge failed once: left out
        ]}
        for c in range(20)
    ]
    (test,) = aggregate(records)["condition_tests"]
    assert (test["a"], test["b"], test["dimension"]) == ("off", "on", "score (0-5)")
    assert (test["n"], test["only_b"]) == (40, 20)  # twenty conversations x two questions both scored
    assert test["mean_diff"] == pytest.approx(1.0) and test["p_value"] < 0.05
    assert "condition_tests" not in aggregate([{"id": "x", "questions": [_q("off", "IE", 2, index=0)]}])
    from dialeval.benchmarks import get_benchmark

    m = aggregate(records)
    m["conditions"] = {}  # the tables under test here are the paired ones only
    assert "NOTE-TAKING off (A) and on (B) compared question by question" in get_benchmark("mmrc").tables(m)
