"""The VDAct judges on the demo fixture, with scripted models: what each prompt holds,
how verdicts are parsed, and how failures of the judge and of the system count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import register_client
from dialeval.evaluation import run
from dialeval.testing.scripted import ScriptedChatModel

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo"
PREDICTIONS = DEMO / "predictions" / "demo-bot.json"
QUESTIONS = {
    "What is the first thing the man does?": 1,
    "What does he take out of the fridge?": 2,
    "Does he use a knife?": 3,
    "Where does he put the sandwich?": 4,
    "What does he do after that?": 5,
}


def _system(messages) -> str:
    return messages[0].content


def _user(messages) -> str:
    return messages[1].content


def _turn_being_graded(messages) -> int:
    """The turn a session prompt grades (read from the first prompt, also on retries)."""
    return int(re.search(r"Turn to grade \(turn (\d+)\)", messages[1].content).group(1))


def _judge(tmp_path, name: str, respond, data: Path = PREDICTIONS, **options):
    model = ScriptedChatModel(respond=respond)
    settings = ModelSettings(spec=f"openai:scripted-vdact-{name}")
    register_client(settings, model)
    # figures: false: these tests read the judges' results; test_report_plots draws VDAct's figures
    config = RunConfig(model=settings, cache_path=None, output_dir=str(tmp_path), options=options, parse_retries=1, figures=False)
    return run("vdact", data, config, progress=False), model


def _example_file(tmp_path: Path) -> Path:
    """A two-turn example dialogue of our own, with the grader's verdicts (scenario 00002 of the demo)."""
    records = [
        {"id": "000020901", "dial_id": "0000209", "turn_num": 1, "question": "Where is the man when it starts?",
         "ref_answer": "In the bathroom.", "gen_answer": "He is in the garden.",
         "rationale": "The garden contradicts the bathroom of the reference.", "rating": 1},
        {"id": "000020902", "dial_id": "0000209", "turn_num": 2, "question": "What does he pick up there?",
         "ref_answer": "A towel from the rack.", "gen_answer": "A towel.",
         "rationale": "A towel, as in the reference; where it hung is a detail.", "rating": 3},
    ]
    path = tmp_path / "example.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    return path


def test_session_judge_sees_exactly_the_earlier_turns_with_their_verdicts(tmp_path):
    def respond(messages):
        t = _turn_being_graded(messages)
        if t == 3:
            return "I am not sure about this one."  # never parseable: every turn 3 ends unparsed
        return f"Reason given for turn {t}. So rating={1 + t % 3}"

    result, model = _judge(tmp_path, "session", respond, judge="session")
    # prompts of dialogue 0000101 (10 turns), by the turn they grade
    prompts = {
        _turn_being_graded(p): _user(p)
        for p in model.prompts
        if len(p) == 2 and "Question: What is the first thing the man does?" in _user(p)  # not a retry
    }
    assert sorted(prompts) == list(range(1, 11))
    for t, text in prompts.items():
        earlier = text.split("Turn to grade")[0]
        for k in range(1, 11):
            header = f"Turn {k}\nQuestion:"
            if k < t:
                assert header in earlier
                verdict = "(no grade: the grader's reply" if k == 3 else f"Reason given for turn {k}. So rating={1 + k % 3}"
                assert verdict in earlier
            else:
                assert header not in earlier and f"Reason given for turn {k}." not in earlier
        assert "<video_summary>\nThe person walks from the bedroom" in text  # refined summary by default
    assert "(none: this is the first turn)" in prompts[1]
    ten = next(r for r in result.records if r["dial_id"] == "0000101")
    assert [t["turn_num"] for t in ten["turns"]] == list(range(1, 11))
    assert ten["turns"][2]["scores"] is None and ten["turns"][2]["status"] == "unparsed"
    assert [(t["scores"] or {}).get("rating") for t in ten["turns"]][:4] == [2, 3, None, 2]
    assert ten["calls"][2]["raw"] == "I am not sure about this one."
    rating = result.metrics["systems"]["demo-bot"]["dimensions"]["rating"]
    assert rating["unparsed"] == 3 and rating["error"] == 0  # turn 3 of each of the three dialogues
    assert rating["turns"] == 17 and result.metrics["systems"]["demo-bot"]["dialogues"] == 3


def test_session_headline_rates_unreadable_replies_1_as_the_released_scoring_does(tmp_path):
    def respond(messages):
        return "Cannot tell." if _turn_being_graded(messages) == 1 else "Right. So rating=3"

    result, _ = _judge(tmp_path, "official", respond, judge="session")
    rating = result.metrics["systems"]["demo-bot"]["dimensions"]["rating"]
    assert rating["unparsed"] == 3  # turn 1 of each dialogue
    assert (rating["n"], rating["mean"]) == (17, pytest.approx((14 * 3 + 3 * 1) / 17))
    assert (rating["valid_n"], rating["valid_mean"]) == (14, 3.0)
    assert result.metrics["unreadable_rule"]["score"] == 1
    report = (result.run_dir / "report.md").read_text()
    assert "counts as 1" in report and "calc_score.py" in report


def test_without_an_example_file_the_built_in_example_is_used_and_the_report_says_so(tmp_path):
    result, model = _judge(tmp_path, "builtin", lambda m: "Fine. So rating=3", judge="session")
    system = _system(model.prompts[0])
    assert "<example_dialogue>\nSummary: A woman walks from the hallway" in system
    assert "Output: The candidate names the living room" in system
    assert result.metrics["example"] == "built-in"
    assert "built-in, hand-written dialogue" in (result.run_dir / "report.md").read_text()


def test_the_one_shot_example_comes_from_the_file_the_user_points_to(tmp_path):
    example = _example_file(tmp_path)
    result, model = _judge(tmp_path, "example", lambda m: "Fine. So rating=3", judge="session", example_path=str(example))
    system = _system(model.prompts[0])
    # its summary is the run's kind (refined) for the example's own scenario
    assert "<example_dialogue>\nSummary: The person is in the bathroom" in system
    assert "Turn 2\nQuestion: What does he pick up there?\nReference answer: A towel from the rack.\n" in system
    assert "Output: A towel, as in the reference; where it hung is a detail. So rating=3" in system
    assert "A woman walks from the hallway" not in system
    assert re.fullmatch(rf"{re.escape(str(example))}#0000209 \(sha256 [0-9a-f]{{12}}\)", result.metrics["example"])
    assert f"One-shot example: `{result.metrics['example']}`" in (result.run_dir / "report.md").read_text()


def test_an_example_file_with_several_dialogues_needs_an_id(tmp_path):
    from dialeval.data.io import DataError

    path = tmp_path / "two.json"
    rows = [json.loads(line) for line in _example_file(tmp_path).read_text().splitlines()]
    path.write_text(json.dumps(rows + [{**rows[0], "id": "x", "dial_id": "0000210"}]))
    with pytest.raises(DataError, match="example_dialogue"):
        _judge(tmp_path, "two", lambda m: "", judge="session", example_path=str(path))
    result, model = _judge(tmp_path / "b", "two-b", lambda m: "Ok. So rating=2", judge="session", summary="none",
                           example_path=str(path), example_dialogue="0000210")
    assert "Summary:" not in _system(model.prompts[0])  # a run without summaries shows none in the example either
    assert "#0000210 (sha256 " in result.metrics["example"]


def test_turn_judge_has_the_one_shot_example_and_no_other_turn(tmp_path):
    result, model = _judge(tmp_path, "turn", lambda m: "Fine. So rating=3", judge="turn")
    assert len(model.prompts) == 17
    for prompt in model.prompts:
        user = _user(prompt)
        assert "Earlier turns" not in user and "<video_summary>" not in user
        assert sum(q in user for q in QUESTIONS) <= 1
        assert "<examples>\nTurn 1\nQuestion: Where does she go first?" in _system(prompt)
    dims = result.metrics["systems"]["demo-bot"]["dimensions"]
    assert dims["rating"]["mean_scaled"] == 1.0
    assert result.metrics["unreadable_rule"]["score"] == 1


@pytest.mark.parametrize("summary, expected, absent", [("none", None, "<video_summary>"), ("template", "The fridge is CLOSED.", "bread and cheese, takes"), ("refined", "bread and cheese, takes", "The fridge is CLOSED.")])
def test_summary_option_chooses_what_the_prompt_shows(tmp_path, summary, expected, absent):
    result, model = _judge(tmp_path, f"summary-{summary}", lambda m: "Ok. So rating=2", judge="turn", summary=summary)
    first = _user(model.prompts[0])
    if expected:
        assert expected in first
    assert absent not in first
    assert result.metrics["summary"] == summary


def test_lave_shows_its_own_demonstrations_binary_ones_for_a_bare_yes_or_no(tmp_path):
    def respond(messages):
        return "Unclear." if "Does he open the window?" in _user(messages) else "Ok. So rating=3"

    result, model = _judge(tmp_path, "lave", respond, judge="lave")
    by_question = {re.search(r"Question: (.*)", _user(p)).group(1): _system(p) for p in model.prompts}
    general, binary = by_question["Does he use a knife?"], by_question["Does he open the window?"]  # reference "No."
    assert general.count("\nOutput: ") == 8 and binary.count("\nOutput: ") == 8
    assert "What is the girl holding?" in general and "Is the door open?" not in general
    assert "Is the door open?" in binary
    assert "Where does she go first?" not in general  # VDEval's example is not LAVE's
    rating = result.metrics["systems"]["demo-bot"]["dimensions"]["rating"]
    # LAVE's released scoring maps an unexpected output to 2; the valid-only mean leaves it out
    assert rating["unparsed"] == 1 and rating["mean"] == pytest.approx((16 * 3 + 2) / 17) and rating["valid_mean"] == 3.0


def test_video_chatgpt_judge_gives_llm_acc_and_llm_rel_in_one_call(tmp_path):
    def respond(messages):
        assert "<video_summary>" not in _user(messages) and "Output" not in _system(messages)
        return "{'pred': 'yes', 'score': 4.8}" if "Yes" in _user(messages) else "{'pred': 'no', 'score': 1}"

    result, model = _judge(tmp_path, "vcg", respond, judge="video_chatgpt")
    assert len(model.prompts) == 17  # one call per turn for both metrics
    s = result.metrics["systems"]["demo-bot"]["dimensions"]
    assert result.metrics["dimensions"] == {"LLM-Acc": [0, 1], "LLM-Rel": [0, 5]}
    yes = sum("Yes" in _user(p) for p in model.prompts)
    assert 0 < yes < 17
    assert s["LLM-Acc"]["mean"] == pytest.approx(yes / 17)
    # Video-ChatGPT's scoring reads the score with int(): 4.8 counts 4
    assert s["LLM-Rel"]["mean"] == pytest.approx((4 * yes + (17 - yes)) / 17)
    assert result.metrics["unreadable_rule"] is None
    again, _ = _judge(tmp_path / "alias", "vcg-alias", respond, judge="llm_rel")
    assert again.metrics["judge"] == "vdact.video_chatgpt"


def test_judges_without_a_summary_slot_refuse_a_summary(tmp_path):
    from dialeval.config import ConfigError

    for judge in ("lave", "video_chatgpt"):
        with pytest.raises(ConfigError, match="takes no video summary"):
            _judge(tmp_path, f"refuse-{judge}", lambda m: "", judge=judge, summary="refined")


def test_a_turn_without_an_answer_is_the_systems_failure_scored_lowest(tmp_path):
    records = json.loads(PREDICTIONS.read_text())[:4]
    records[1]["gen_answer"] = "  "
    del records[2]["gen_answer"]
    data = tmp_path / "quiet-bot.json"
    data.write_text(json.dumps(records))
    result, model = _judge(tmp_path, "quiet", lambda m: "Good. So rating=3", data=data, judge="session", summary="none")
    assert len(model.prompts) == 2  # the judge is not asked about turns 2 and 3
    assert "Turn 2\nQuestion: What does he take out of the fridge?" in _user(model.prompts[1])
    assert "Candidate answer: (no answer)\nOutput: The system gave no answer. So rating=1" in _user(model.prompts[1])
    rating = result.metrics["systems"]["quiet-bot"]["dimensions"]["rating"]
    assert (rating["no_answer"], rating["judged"], rating["unparsed"]) == (2, 2, 0)
    assert rating["mean"] == rating["valid_mean"] == 2.0  # 3, 1, 1, 3
    assert [t["status"] for t in result.records[0]["turns"]] == ["ok", "no_answer", "no_answer", "ok"]


def test_json_answers_parse_too(tmp_path):
    result, _ = _judge(tmp_path, "json", lambda m: '{"rationale": "right", "rating": 3}', judge="turn")
    assert result.metrics["systems"]["demo-bot"]["dimensions"]["rating"]["unparsed"] == 0


def test_unknown_option_is_a_config_error(tmp_path):
    from dialeval.config import ConfigError

    with pytest.raises(ConfigError, match="judge"):
        _judge(tmp_path, "bad", lambda m: "", judge="pairwise")


def test_item_scores_are_turn_level_per_dimension(tmp_path):
    from dialeval.benchmarks import get_benchmark

    result, _ = _judge(tmp_path, "items", lambda m: "Unclear." if "knife" in _user(m) else "Ok. So rating=2", judge="turn")
    scores = get_benchmark("vdact").item_scores(result.records)
    assert set(scores) == {"rating"}
    assert len(scores["rating"]) == 16  # the unreadable turn is left out
    assert scores["rating"]["0000101/1"] == 2  # <dial_id>/<turn>: no file name, so systems' runs align
    assert "0000101/3" not in scores["rating"]


MAJORITY = (("fridge", 3), ("knife", 1), ("sandwich", 3), ("after that", 1), ("glasses", 3), ("living room", 3),
            ("How long", 1), ("finish", 2), ("last thing", 3), ("first thing", 3), ("bathroom at the start", 2),
            ("after the toothbrush", 3), ("window", 1))


def _agreeing(messages) -> str:
    """A judge that agrees with the human majority votes of the fixture where they exist."""
    user = _user(messages).split("Turn to grade")[-1]
    for fragment, score in MAJORITY:
        if fragment in user:
            return f"Judged. So rating={score}"
    return "Judged. So rating=2"


def test_human_agreement_is_tested_against_the_best_other_metric(tmp_path):
    respond = _agreeing

    result, _ = _judge(tmp_path, "human", respond, judge="session", human_scores=str(DEMO / "human_scores.jsonl"), permutations=200)
    human = result.metrics["systems"]["demo-bot"]["human"]["rating"]
    assert human["rated_turns"] == 13 and human["excluded_no_majority"] == 1
    assert human["n"] == 12
    assert human["kendall_tau_b"] > 0.8
    others = human["other_metrics"]
    assert {"BLEU", "ROUGE-L"} <= set(others)
    assert human["best_other"] == max((t, n) for n, t in others.items() if t is not None)[1]
    assert human["best_other_tau"] == others[human["best_other"]]
    assert human["permutations"] == 200 and 0 < human["vs_best_p_value"] <= 1
    assert "SPICE" in human["unavailable"]
    assert "Agreement with human majority votes" in (result.run_dir / "report.md").read_text()


def test_other_runs_join_the_comparison_so_an_llm_baseline_can_be_the_best_other_metric(tmp_path):
    humans = str(DEMO / "human_scores.jsonl")
    lave, _ = _judge(tmp_path / "lave", "baseline-lave", _agreeing, judge="lave")
    result, _ = _judge(tmp_path / "session", "baseline-session", lambda m: "Judged. So rating=2" if "knife" in _user(m).split("Turn to grade")[-1] else _agreeing(m),
                       judge="session", human_scores=humans, permutations=200, baseline_runs=[str(lave.run_dir)])
    human = result.metrics["systems"]["demo-bot"]["human"]["rating"]
    label = f"LAVE [{lave.run_dir.name}]"
    assert human["other_metrics"][label] == pytest.approx(1.0)  # the baseline run agrees with every majority vote
    assert human["best_other"] == label and human["difference"] < 0
    assert label in (result.run_dir / "report.md").read_text()
