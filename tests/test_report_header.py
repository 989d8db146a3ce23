"""The report header: what a run evaluated, the agent and model of each role, the abbreviations."""

from __future__ import annotations

from dialeval.benchmarks import get_benchmark
from dialeval.report_header import header



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
