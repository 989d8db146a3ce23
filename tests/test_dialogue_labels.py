"""Human labels as people keep them: several annotators, lists, floats, N/A, 0-based scales."""

from __future__ import annotations

import json
import math
from statistics import fmean

import krippendorff
import numpy as np
import pytest
from scipy import stats

from dialeval.data.io import DataError
from dialeval.conversation.data import load_conversations
from dialeval.protocols.dialogue.human import agreement, human_ceiling, load_labels
from dialeval.conversation.labels import LabelWarning, only_labelled
from dialeval.conversation.rubric import parse_rubric
from tests.dialogue_helpers import write_jsonl

RUBRIC = parse_rubric({"criteria": [
    {"name": "engaging", "description": "keeps the talk going", "scale": [0, 4]},
    {"name": "sensible", "description": "makes sense", "scale": ["yes", "no"]},
    {"name": "overall", "level": "conversation", "description": "the whole talk", "scale": [0, 2]},
    {"name": "overall", "level": "turn", "description": "this reply", "scale": [1, 5]},
]}, "rubric.yaml")
# five annotators, eight replies: the fifth annotator disagrees with the others
FIVE = [[4, 4, 3, 4, 0], [3, 3, 3, 2, 4], [0, 1, 0, 0, 3], [2, 2, 1, 2, 1],
        [1, 0, 1, 1, 4], [3, 4, 4, 3, 0], [2, 3, 2, 2, 3], [1, 1, 2, 1, 2]]
JUDGE = [4, 3, 0, 2, 1, 4, 3, 1]


def conversations(tmp_path, n=8):
    data = write_jsonl(tmp_path / "d.jsonl", [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]} for i in range(n)
    ])
    return load_conversations(data)


def five_annotator_rows():
    return [{"id": f"c{i}", "turn": 2, "criterion": "engaging", "annotator": f"a{k + 1}", "score": s}
            for i, row in enumerate(FIVE) for k, s in enumerate(row)]


def test_five_annotators_per_unit_are_averaged_not_last_one_wins(tmp_path):
    labels = load_labels(write_jsonl(tmp_path / "h.jsonl", five_annotator_rows()), RUBRIC, conversations(tmp_path))
    assert labels.by_unit()[("c0/2", "engaging")] == {"a1": 4, "a2": 4, "a3": 3, "a4": 4, "a5": 0}
    assert labels.consensus()[("c0/2", "engaging")] == pytest.approx(3.0)

    judge = {"engaging": {f"c{i}/2": float(s) for i, s in enumerate(JUDGE)}}
    row = agreement(judge, labels)["engaging"]
    means = [fmean(r) for r in FIVE]
    assert row["spearman"]["value"] == pytest.approx(stats.spearmanr(JUDGE, means).statistic)
    fifth_only = stats.spearmanr(JUDGE, [r[4] for r in FIVE]).statistic
    assert row["spearman"]["value"] > 0.9 > fifth_only  # the old reading: annotator five alone
    assert (row["n"], row["labels"], row["rule"]) == (8, 40, "mean")


def test_the_human_ceiling_is_alpha_among_annotators_and_each_against_the_others(tmp_path):
    labels = load_labels(write_jsonl(tmp_path / "h.jsonl", five_annotator_rows()), RUBRIC)
    ceiling = human_ceiling(labels, "engaging")
    data = np.array(FIVE, dtype=float)
    expected_alpha = krippendorff.alpha(reliability_data=data.T, level_of_measurement="ordinal")
    assert ceiling["alpha"]["value"] == pytest.approx(expected_alpha, abs=1e-12)
    assert ceiling["alpha"]["ci_low"] <= ceiling["alpha"]["value"] <= ceiling["alpha"]["ci_high"]
    first = stats.spearmanr(data[:, 0], data[:, 1:].mean(axis=1)).statistic
    assert ceiling["per_annotator"]["a1"]["n"] == 8 and ceiling["per_annotator"]["a1"]["spearman"] == pytest.approx(first)
    assert ceiling["per_annotator"]["a5"]["spearman"] < 0 < ceiling["per_annotator"]["a1"]["spearman"]
    loo = ceiling["leave_one_out"]["spearman"]
    assert loo["value"] == pytest.approx(fmean(p["spearman"] for p in ceiling["per_annotator"].values()))
    assert loo["ci_low"] <= loo["value"] <= loo["ci_high"]
    assert ceiling["annotators"] == 5 and ceiling["multi_labelled"] == 8


@pytest.mark.parametrize("rule, expected", [("mean", 2.5), ("median", 3.0), ("majority", 3.0)])
def test_a_named_rule_combines_the_annotators(tmp_path, rule, expected):
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "engaging", "score": [3, 3, 0, 4]}])
    assert load_labels(path, RUBRIC, rule=rule).consensus() == {("c0/2", "engaging"): expected}


def test_majority_of_yes_and_no_ties_go_to_the_worse_label(tmp_path):
    """yes/no has no middle label: a split vote goes to the lower one unless told otherwise."""
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "sensible", "score": ["yes", "no", "Yes", "no"]}])
    labels = load_labels(path, RUBRIC, rule="majority")
    assert labels.consensus() == {("c0/2", "sensible"): 1.0}  # "no" is rank 1, "yes" rank 2
    assert RUBRIC.get("sensible").scale.label_of(1.0) == "no"


def test_lists_floats_nan_and_na_as_people_export_them(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join([
        json.dumps({"id": "c0", "turn": 2, "criterion": "engaging", "score": [0, 1.5, None, "N/A"]}),
        '{"id": "c1", "turn": 2, "criterion": "engaging", "score": NaN}',  # pandas wrote N/A as NaN
        json.dumps({"id": "c1", "turn": 2, "criterion": "sensible", "score": "n/a"}),
        json.dumps({"id": "c1", "criterion": "overall", "score": 2.0}),
        json.dumps({"id": "c1", "turn": 2, "criterion": "overall", "score": 5}),
    ]) + "\n")
    labels = load_labels(path, RUBRIC, conversations(tmp_path))
    assert labels.consensus() == {("c0/2", "engaging"): 0.75, ("c1", "overall (conversation)"): 2.0, ("c1/2", "overall"): 5.0}
    assert labels.skipped == 4 and labels.summary()["no_label"] == 4
    assert [r.annotator for r in labels.ratings[:2]] == ["#1", "#2"]


def test_unknown_criteria_and_units_are_counted_warnings_naming_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "h.jsonl", [
        {"id": "c0", "turn": 2, "criterion": "engaging", "score": 3},
        {"id": "c0", "turn": 2, "criterion": "tone", "score": 3},
        {"id": "zz", "turn": 2, "criterion": "engaging", "score": 3},
        {"id": "c0", "turn": 1, "criterion": "engaging", "score": 3},
    ])
    labels = load_labels(path, RUBRIC, conversations(tmp_path))
    assert labels.unknown == 3 and len(labels.ratings) == 1
    assert f"{path}, record 2 (line 2): 'tone' is not a criterion" in labels.warnings[0]
    assert "record 3 (line 3)" in labels.warnings[1] and "'zz/2'" in labels.warnings[1]
    assert "record 4 (line 4)" in labels.warnings[2]


def test_a_file_naming_no_known_unit_stops_with_a_message_about_the_labels_file(tmp_path):
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "other", "turn": 2, "criterion": "engaging", "score": 3}] * 3)
    with pytest.raises(DataError, match=r"h.jsonl: none of its 3 labels names a unit of the data"):
        load_labels(path, RUBRIC, conversations(tmp_path))


def test_the_same_annotator_twice_is_a_warning_and_both_labels_count(tmp_path):
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "engaging", "annotator": 7, "score": s} for s in (1, 3)])
    labels = load_labels(path, RUBRIC)
    assert labels.consensus() == {("c0/2", "engaging"): 2.0}
    assert "annotator '7' labelled 'c0/2' on 'engaging' again" in labels.warnings[0]


@pytest.mark.parametrize("score, message", [(5, "a number from 0 to 4"), (-0.5, "a number from 0 to 4"), ([1, 9], "field 'score.1'")])
def test_a_label_off_the_scale_still_stops(tmp_path, score, message):
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "engaging", "score": score}])
    with pytest.raises(DataError, match=message):
        load_labels(path, RUBRIC)


def test_judge_only_labelled_keeps_the_conversations_that_carry_a_label(tmp_path):
    convs = conversations(tmp_path)
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c3", "turn": 2, "criterion": "engaging", "score": 1},
                                              {"id": "c5", "criterion": "overall", "score": 0}])
    assert [c.id for c in only_labelled(convs, load_labels(path, RUBRIC, convs))] == ["c3", "c5"]


def test_the_dialogue_benchmark_warns_and_reports_skipped_labels(tmp_path):
    from dialeval.protocols.dialogue.loading import load

    convs = write_jsonl(tmp_path / "d.jsonl", [{"id": "c0", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}])
    labels = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "relevance", "score": 4},
                                                {"id": "c9", "turn": 2, "criterion": "relevance", "score": 4}])
    with pytest.warns(LabelWarning, match=r"h.jsonl, record 2 \(line 2\): no assistant turn 'c9/2'"):
        assert [c.id for c in load(convs, {"human_scores": str(labels), "judge_only": "labelled"})] == ["c0"]


def test_the_report_puts_the_human_ceiling_beside_the_judge(tmp_path):
    from dialeval.protocols.dialogue.human import agreement_table

    labels = load_labels(write_jsonl(tmp_path / "h.jsonl", five_annotator_rows() + [
        {"id": "c0", "turn": 2, "criterion": "engaging", "annotator": "a6", "score": "N/A"}]), RUBRIC)
    rows = agreement({"engaging": {f"c{i}/2": float(s) for i, s in enumerate(JUDGE)}}, labels)
    table = agreement_table(rows, labels.summary())
    ceiling = rows["engaging"]["human"]
    humans, judge = ceiling["leave_one_out"]["spearman"], ceiling["judges"]["judge"]["spearman"]
    assert f"| engaging | humans (5 annotators, alpha among them {ceiling['alpha']['value']:.2f} [" in table
    assert f"| 8 | {humans['value']:.2f} [{humans['ci_low']:.2f}, {humans['ci_high']:.2f}] |" in table
    assert f"| engaging | judge, in each annotator's place | 8 | {judge['value']:.2f} [" in table
    assert "mean of the annotators per unit" in table and "1 answers without a label (1 N/A) left out" in table


def test_one_name_at_two_levels_stays_two_dimensions(tmp_path):
    from dialeval.protocols.dialogue.metrics import item_scores

    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "overall", "score": 5},
                                              {"id": "c0", "criterion": "overall", "score": 1}])
    assert load_labels(path, RUBRIC).per_criterion() == {"overall": {"c0/2": 5.0}, "overall (conversation)": {"c0": 1.0}}
    record = {"id": "c0", "turn_units": [{"criterion": "overall", "turn": 2, "score": 4.0, "verdict": 4}],
              "conversation_units": [{"criterion": "overall", "level": "conversation", "score": 2.0, "verdict": 2}]}
    assert item_scores([record]) == {"overall": {"c0/2": 4.0}, "overall (conversation)": {"c0": 2.0}}


def test_the_done_when_file_five_annotators_zero_based_na_and_floats(tmp_path):
    """What the issue asks in one file: five annotators per unit, a 0-4 scale, N/A answers
    and averaged floats load; the run's metrics give the mean-based agreement and the ceiling."""
    from dialeval.benchmarks import get_benchmark

    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("criteria:\n  - name: engaging\n    description: keeps the talk going\n    scale: [0, 4]\n")
    rows = [{"id": f"c{i}", "turn": 2, "criterion": "engaging", "annotator": f"a{k + 1}", "score": s}
            for i, row in enumerate(FIVE) for k, s in enumerate(row)]
    rows[4]["score"], rows[9]["score"], rows[14]["score"] = "N/A", float("nan"), 2.5
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    records = [{"id": f"c{i}", "turn_units": [{"criterion": "engaging", "turn": 2, "status": "ok", "verdict": s, "score": float(s),
                                                "context": {"prompt_tokens": 10}}], "conversation_units": []} for i, s in enumerate(JUDGE)]
    metrics = get_benchmark("dialogue").aggregate(records, {"rubric": str(rubric), "human_scores": str(path)})
    row = metrics["human_agreement"]["engaging"]
    means = [fmean(v for v in r if v is not None) for r in
             [[4, 4, 3, 4, None], [3, 3, 3, 2, None], [0, 1, 0, 0, 2.5]] + [list(r) for r in FIVE[3:]]]
    assert row["spearman"]["value"] == pytest.approx(stats.spearmanr(JUDGE, means).statistic)
    assert row["human"]["annotators"] == 5 and row["human"]["alpha"]["value"] is not None
    assert metrics["human_labels"]["no_label"] == 2 and metrics["human_labels"]["labels"] == 38


def test_json_true_and_false_are_yes_and_no(tmp_path):
    path = write_jsonl(tmp_path / "h.jsonl", [{"id": "c0", "turn": 2, "criterion": "sensible", "score": [True, False, True]}])
    assert load_labels(path, RUBRIC, rule="majority").consensus() == {("c0/2", "sensible"): 2.0}  # yes


def test_a_label_naming_a_user_turn_is_left_out_of_every_figure_and_counted(tmp_path):
    """The run's records say which turns are the assistant's: a label of user turn 1 is a
    counted warning in the report, not a label, a unit or a score of the ceiling."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.protocols.dialogue.human import agreement_table

    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("criteria:\n  - name: engaging\n    description: keeps the talk going\n    scale: [0, 4]\n")
    rows = five_annotator_rows() + [{"id": "c0", "turn": 1, "criterion": "engaging", "annotator": "a1", "score": 0}]
    path = write_jsonl(tmp_path / "labels.jsonl", rows)
    records = [{"id": f"c{i}", "turns": [{"turn": 1, "role": "user", "text": "hi"}, {"turn": 2, "role": "assistant", "text": "yo"}],
                "turn_units": [{"criterion": "engaging", "turn": 2, "status": "ok", "verdict": s, "score": float(s)}],
                "conversation_units": []} for i, s in enumerate(JUDGE)]
    options = {"rubric": str(rubric), "human_scores": str(path)}
    metrics = get_benchmark("dialogue").aggregate(records, options)
    clean = get_benchmark("dialogue").aggregate(records, options | {"human_scores": str(write_jsonl(tmp_path / "c.jsonl", rows[:-1]))})
    summary = metrics["human_labels"]
    assert (summary["labels"], summary["units"], summary["unknown"]) == (40, 8, 1)
    assert metrics["human_agreement"]["engaging"]["human"] == clean["human_agreement"]["engaging"]["human"]
    assert "1 labels for a criterion or unit that is not there skipped" in agreement_table(metrics["human_agreement"], summary)


PREFERENCE = parse_rubric({"criteria": [
    {"name": "preference", "description": "which reply is better", "scale": ["A better", "tie", "B better"]},
    {"name": "quality", "description": "how good", "scale": [1, 5]},
]}, "preference.yaml")


def split_votes(tmp_path):
    return write_jsonl(tmp_path / "h.jsonl", [
        {"id": "c0", "turn": 2, "criterion": "preference", "score": ["A better", "B better"]},  # split
        {"id": "c1", "turn": 2, "criterion": "preference", "score": ["B better", "A better", "A better"]},  # a majority
        {"id": "c2", "turn": 2, "criterion": "quality", "score": [4, 5]},  # split on a five-point scale
        {"id": "c3", "turn": 2, "criterion": "quality", "score": [1, 5, 2, 4]},  # split far apart: the middle is 3
    ])


@pytest.mark.parametrize("tie, expected", [
    (None, {"c0/2": "tie", "c1/2": "A better", "c2/2": 4.0, "c3/2": 3.0}),  # the default on scales with a middle label
    ("middle", {"c0/2": "tie", "c1/2": "A better", "c2/2": 4.0, "c3/2": 3.0}),
    ("lower", {"c0/2": "B better", "c1/2": "A better", "c2/2": 4.0, "c3/2": 1.0}),
    ("upper", {"c0/2": "A better", "c1/2": "A better", "c2/2": 5.0, "c3/2": 5.0}),
    ("drop", {"c1/2": "A better"}),
])
def test_a_split_majority_is_broken_by_the_stated_rule(tmp_path, tie, expected):
    """On A better / tie / B better, a vote split between A and B is no win for either side."""
    labels = load_labels(split_votes(tmp_path), PREFERENCE, rule="majority", majority_tie=tie)
    scale = PREFERENCE.get("preference").scale
    got = {unit: scale.label_of(score) if criterion == "preference" else score
           for (unit, criterion), score in labels.consensus().items()}
    assert got == expected
    summary = labels.summary()
    assert summary["ties"] == {"preference": 1, "quality": 2}
    assert summary["majority_tie"] == dict.fromkeys(("preference", "quality"), tie or "middle")


def test_without_a_middle_label_the_default_tie_is_the_lower_label():
    from dialeval.conversation.labels import Labels, break_tie

    assert Labels("x", scales={"q": (1.0, 4.0)}).tie_rule("q") == "lower"
    assert Labels("x", scales={"q": (1.0, 5.0)}).tie_rule("q") == "middle"
    assert break_tie([1.0, 2.0], "middle", (1.0, 5.0)) == 2.0  # halfway is 1.5: the label nearer the centre
    assert break_tie([4.0, 5.0], "middle", (1.0, 5.0)) == 4.0


def test_fed_style_na_with_a_reason_is_no_label_and_the_reason_is_kept(tmp_path):
    """FED writes an annotator's no-answer as "N/A (reason)": read as N/A, counted by reason, warned."""
    path = write_jsonl(tmp_path / "h.jsonl", [
        {"id": "c0", "turn": 2, "criterion": "engaging", "score": [3, "N/A (the reply is not a question)", 4]},
        {"id": "c1", "turn": 2, "criterion": "engaging", "score": ["N/A (no context)", "n/a [no context]", 2]},
    ])
    labels = load_labels(path, RUBRIC, conversations(tmp_path))  # the run and the card warn each of its warnings
    [warning] = labels.warnings
    assert "3 answers without a label, read as N/A and left out: 2 N/A (no context) (record 2 (line 2)), 1 N/A (the reply is not a question) (record 1 (line 1))" in warning
    assert labels.consensus() == {("c0/2", "engaging"): 3.5, ("c1/2", "engaging"): 2.0}
    assert labels.summary()["no_label_by_kind"] == {"N/A (the reply is not a question)": 1, "N/A (no context)": 2}


def test_nan_labels_are_counted_and_the_units_they_empty_are_named(tmp_path):
    """24 labelled units, two of them NaN from every annotator: 22 units, and the file says so."""
    path = tmp_path / "h.jsonl"
    rows = [json.dumps({"id": f"c{i}", "turn": 2, "criterion": "engaging", "score": [i % 5, (i + 1) % 5]}) for i in range(22)]
    rows += ['{"id": "c22", "turn": 2, "criterion": "engaging", "score": [NaN, NaN]}',
             '{"id": "c23", "turn": 2, "criterion": "engaging", "score": NaN}']
    path.write_text("\n".join(rows) + "\n")
    labels = load_labels(path, RUBRIC, conversations(tmp_path, n=24))
    assert len(labels.by_unit()) == 22 and labels.skipped == 3
    summary = labels.summary()
    assert summary["no_label_by_kind"] == {"NaN": 3} and summary["units_without_label"] == 2
    [warning] = labels.warnings
    assert "3 answers without a label" in warning and "2 units have no label left" in warning and "'c23/2'" in warning


def test_an_exact_duplicate_row_is_warned_and_read_once(tmp_path):
    row = {"id": "c0", "turn": 2, "criterion": "engaging", "score": 4}
    path = write_jsonl(tmp_path / "h.jsonl", [row, {**row, "score": 2}, row])
    labels = load_labels(path, RUBRIC)
    assert labels.by_unit() == {("c0/2", "engaging"): {"#1": 4.0, "#2": 2.0}}
    assert labels.duplicates == 1 and "record 3 (line 3): repeats record 1 (line 1) exactly; read once" in labels.warnings[0]


def test_the_run_reads_majority_tie_from_its_options(tmp_path):
    from dialeval.protocols.dialogue.human_compare import human_scores

    rubric = tmp_path / "preference.yaml"
    rubric.write_text("criteria:\n  - name: preference\n    description: which is better\n    scale: [A better, tie, B better]\n")
    options = {"rubric": str(rubric), "human_rule": "majority"}
    assert human_scores(split_votes(tmp_path), options)["preference"] == {"c0/2": 2.0, "c1/2": 3.0}
    assert human_scores(split_votes(tmp_path), options | {"majority_tie": "drop"})["preference"] == {"c1/2": 3.0}


def test_a_figure_the_labels_cannot_give_is_marked_and_its_reason_footnoted(tmp_path):
    from dialeval.protocols.dialogue.human import agreement_table

    labels = load_labels(write_jsonl(tmp_path / "h.jsonl", five_annotator_rows()), RUBRIC)
    rows = agreement({"engaging": {f"c{i}/2": 3.0 for i in range(8)}}, labels)  # a judge that says 3 to everything
    table = agreement_table(rows, labels.summary())
    assert rows["engaging"]["spearman"]["value"] is None
    assert "| engaging | 8 | 40 | n/a [1] | n/a [1] | n/a [1] |" in table
    assert "[1] the judge gives every shared unit the same score: a correlation is undefined." in table
