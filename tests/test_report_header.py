"""The report header: what a run evaluated, the agent and model of each role, the abbreviations."""

from __future__ import annotations

import re

from dialeval.benchmarks import get_benchmark
from dialeval.report.header import citation, header



def _resolved(**options):
    return {
        "data": "samples.json",
        "context": {
            "default_model": {"spec": "smollm2"},
            "models": {"fact_verifier": {"spec": "openai:gpt-4o"}},
            "agents": {"fact_verifier": "kgds.fact_verifier_single"},
            "options": options,
        },
    }


USAGE = {
    "per_agent": {
        "kgds.summarizer.ebs": {"models": ["smollm2"]},
        "kgds.summarizer.abs": {"models": ["smollm2"]},
        "kgds.fact_verifier": {"models": ["openai:gpt-4o"]},  # the single-fact verifier records this name
    }
}


def test_the_header_names_each_role_with_its_agent_and_the_models_it_called():
    lines = header(get_benchmark("kgds"), _resolved(reflection_rounds=1), USAGE)
    assert "| summarizer | `kgds.summarizer` | `smollm2` |" in lines
    assert "| fact_verifier | `kgds.fact_verifier_single` | `openai:gpt-4o` |" in lines
    assert "| error_classifier | `kgds.error_classifier` | no call recorded |" in lines
    assert lines[0] == "- evaluated: summaries written by `smollm2` for `samples.json` (structured prompt, 1 self-reflection round(s))"


def test_calls_recorded_per_ability_count_for_their_role():
    usage = {"per_agent": {"mmrc.judge_ar": {"models": ["hf:judge"]}, "mmrc.judge_ie": {"models": ["hf:judge"]}}}
    lines = header(get_benchmark("mmrc"), _resolved(), usage)
    assert "| judge | `mmrc.ability_judge` | `hf:judge` |" in lines


def test_the_header_says_when_given_summaries_were_scored():
    lines = header(get_benchmark("kgds"), _resolved(predictions="mine.jsonl"), USAGE)
    assert lines[0] == "- evaluated: the summaries in `mine.jsonl` (for the samples in `samples.json`)"


def test_abbreviations_are_spelled_out_once():
    kgds = " ".join(header(get_benchmark("kgds"), _resolved(), USAGE))
    mmrc = " ".join(header(get_benchmark("mmrc"), _resolved(), {"per_agent": {}}))
    for code in ("OM", "IRIC", "IRU", "OSD", "OFI"):
        assert kgds.count(f"{code} = ") == 1
    assert "OM = opinion misattribution" in kgds
    for code in ("EP", "IMP", "RP", "IE", "AR"):
        assert mmrc.count(f"{code} = ") == 1
    assert "IMP = image management precision" in mmrc


def test_mmdu_without_predictions_names_the_responder_as_the_author_of_the_answers():
    line = header(get_benchmark("mmdu"), _resolved(), {"per_agent": {}})[0]
    assert line == (
        "- evaluated: answers of `smollm2` (role responder) to the questions in `samples.json`, "
        "judged by `smollm2` against the reference answers in `samples.json`"
    )


def test_mmdu_with_predictions_names_the_answers_file():
    line = header(get_benchmark("mmdu"), _resolved(predictions="answers/"), {"per_agent": {}})[0]
    assert line.startswith("- evaluated: the answers in `answers/` to the questions in `samples.json`")


def test_vdact_answers_and_mdseval_say_what_was_judged_and_by_whom():
    vdact = header(get_benchmark("vdact"), _resolved(judge="video_chatgpt"), {"per_agent": {}})[0]
    assert vdact == "- evaluated: the system responses in `samples.json`, judged by `smollm2` (video_chatgpt judge)"
    answers = header(get_benchmark("answers"), _resolved(), {"per_agent": {}})[0]
    assert answers == "- evaluated: the answers in `samples.json`, graded 1-5 by `smollm2` against each record's reference"
    mdseval = header(get_benchmark("mdseval"), _resolved(evaluators=["pointwise", "checklist"]), {"per_agent": {}})[0]
    assert mdseval == (
        "- evaluated: the judges (pointwise: `smollm2`, checklist: `smollm2`), "
        "set against the human ratings of the summaries in `samples.json`"
    )


def test_mmdu_and_mdseval_spell_out_their_column_codes():
    mmdu = " ".join(header(get_benchmark("mmdu"), _resolved(), {"per_agent": {}}))
    for code in ("C", "R", "VP", "LC", "AA", "IRU"):
        assert len(re.findall(rf"\b{code} = ", mmdu)) == 1
    assert "IRU = Image Relationship Understanding" in mmdu
    assert "Overall = " not in mmdu
    mdseval = " ".join(header(get_benchmark("mdseval"), _resolved(), {"per_agent": {}}))
    assert "COV-I = coverage-image" in mdseval


def test_the_benchmark_line_cites_the_paper_once_in_parentheses():
    for name in ("kgds", "mmdu", "mmrc", "mdseval", "vdact", "answers"):
        cited = citation(get_benchmark(name))
        assert ".txt" not in cited and "((" not in cited and "))" not in cited
    assert citation(get_benchmark("kgds")).startswith(" (Zhou et al.")
