"""The VDAct judges on the demo fixture, with scripted models: what each prompt holds,
how verdicts are parsed and aggregated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.models import register_client
from dialeval.runner import run
from dialeval.testing.scripted import ScriptedChatModel

DEMO = Path(__file__).resolve().parents[1] / "dialeval" / "fixtures" / "vdact_demo"
PREDICTIONS = DEMO / "predictions" / "demo-bot.json"
QUESTIONS = {
    "What is the first thing the man does?": 1,
    "What does he take out of the fridge?": 2,
    "Does he use a knife?": 3,
    "Where does he put the sandwich?": 4,
    "What does he do after that?": 5,
}


def _user(messages) -> str:
    return messages[-1].content


def _turn_being_graded(messages) -> int:
    """The turn a session prompt grades (read from the first prompt, also on retries)."""
    return int(re.search(r"Turn to grade \(turn (\d+)\)", messages[1].content).group(1))


def _judge(tmp_path, name: str, respond, **options):
    model = ScriptedChatModel(respond=respond)
    settings = ModelSettings(spec=f"openai:scripted-vdact-{name}")
    register_client(settings, model)
    config = RunConfig(model=settings, cache_path=None, output_dir=str(tmp_path), options=options, parse_retries=1)
    return run("vdact", PREDICTIONS, config, progress=False), model


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
                verdict = "(none: the grader's answer" if k == 3 else f"Reason given for turn {k}. So rating={1 + k % 3}"
                assert verdict in earlier
            else:
                assert header not in earlier and f"Reason given for turn {k}." not in earlier
    assert "(none: this is the first turn)" in prompts[1]
    ten = next(r for r in result.records if r["dial_id"] == "0000101")
    assert [t["turn_num"] for t in ten["turns"]] == list(range(1, 11))
    assert ten["turns"][2]["score"] is None and ten["turns"][2]["status"] == "unparsed"
    assert [t["score"] for t in ten["turns"]][:4] == [2, 3, None, 2]
    assert ten["calls"][2]["raw"] == "I am not sure about this one."
    system = result.metrics["systems"]["demo-bot"]
    assert system["unparsed"] == 3  # turn 3 of each of the three dialogues
    assert system["turns"] == 17 and system["dialogues"] == 3


def test_turn_judge_prompt_holds_no_other_turn(tmp_path):
    result, model = _judge(tmp_path, "turn", lambda m: "Fine. So rating=3", judge="turn")
    assert len(model.prompts) == 17
    for prompt in model.prompts:
        user = _user(prompt)
        assert "Earlier turns" not in user and "Summary of the video" not in user
        assert sum(q in user for q in QUESTIONS) <= 1
    assert result.metrics["systems"]["demo-bot"]["mean_scaled"] == 1.0


@pytest.mark.parametrize("summary, expected, absent", [("none", None, "Summary of the video"), ("template", "The fridge is CLOSED.", "bread and cheese, takes"), ("refined", "bread and cheese, takes", "The fridge is CLOSED.")])
def test_summary_option_chooses_what_the_prompt_shows(tmp_path, summary, expected, absent):
    result, model = _judge(tmp_path, f"summary-{summary}", lambda m: "Ok. So rating=2", judge="turn", summary=summary)
    first = _user(model.prompts[0])
    if expected:
        assert expected in first
    assert absent not in first
    assert result.metrics["summary"] == summary


def test_llm_acc_and_llm_rel_scale_to_unit(tmp_path):
    acc, _ = _judge(tmp_path / "acc", "acc", lambda m: '{"rationale": "matches", "correct": "Yes"}' if "Yes" in _user(m) else '{"correct": false}', judge="llm_acc")
    s = acc.metrics["systems"]["demo-bot"]
    assert acc.metrics["scale"] == [0, 1]
    assert s["scored"] == 17 and 0 < s["mean_scaled"] < 1
    rel, _ = _judge(tmp_path / "rel", "rel", lambda m: 'The answer is close.\n{"rationale": "close", "score": 4}', judge="llm_rel")
    assert rel.metrics["systems"]["demo-bot"]["mean"] == 4
    assert rel.metrics["systems"]["demo-bot"]["mean_scaled"] == pytest.approx(0.8)


def test_json_answers_parse_too(tmp_path):
    result, _ = _judge(tmp_path, "json", lambda m: '{"rationale": "right", "rating": 3}', judge="turn")
    assert result.metrics["systems"]["demo-bot"]["unparsed"] == 0


def test_unknown_option_is_a_config_error(tmp_path):
    from dialeval.config import ConfigError

    with pytest.raises(ConfigError, match="judge"):
        _judge(tmp_path, "bad", lambda m: "", judge="pairwise")


def test_human_agreement_is_reported_with_a_permutation_test(tmp_path):
    def respond(messages):
        # agree with the human majority votes of the fixture where they exist
        user = _user(messages).split("Turn to grade")[-1]
        for fragment, score in (("fridge", 3), ("knife", 1), ("sandwich", 3), ("after that", 1), ("glasses", 3),
                                ("living room", 3), ("How long", 1), ("finish", 2), ("last thing", 3), ("first thing", 3),
                                ("bathroom at the start", 2), ("after the toothbrush", 3), ("window", 1)):
            if fragment in user:
                return f"Judged. So rating={score}"
        return "Judged. So rating=2"

    result, _ = _judge(tmp_path, "human", respond, judge="session", human_scores=str(DEMO / "human_scores.jsonl"), permutations=200)
    human = result.metrics["systems"]["demo-bot"]["human"]
    assert human["rated_turns"] == 13 and human["excluded_no_majority"] == 1
    assert human["n"] == 12
    assert human["kendall_tau_b"] > 0.8
    assert human["permutations"] == 200 and 0 < human["vs_rouge_l_p_value"] <= 1
    assert "Agreement with human majority votes" in (result.run_dir / "report.md").read_text()
