"""KGDS agents: what their prompts hold and how they read answers."""

from __future__ import annotations

import pytest

from dialeval.protocols.kgds.error_classifier import ErrorClassification, normalise_error_type
from dialeval.protocols.kgds.fact_decomposer import AtomicFacts
from dialeval.protocols.kgds.fact_verifier import FactVerdicts, batches, check_numbers
from dialeval.protocols.kgds.feedback_judge import FeedbackJudgement
from dialeval.protocols.kgds.summarizer import EbsSummary
from dialeval.config import EvalContext, ModelSettings
from dialeval.protocols.kgds.graph import build_graph
from dialeval.models.client import register_client
from dialeval.agents.parsing import ParseFailure, parse_answer
from dialeval.testing.scripted import ScriptedChatModel, prompt_text
from dialeval.agents.templates import load_template

TEMPLATES = [
    "summarizer_ebs", "summarizer_abs", "reflection_ebs", "reflection_abs", "feedback_judge",
    "fact_verifier", "opinion_verifier", "error_classifier", "fact_decomposer",
]


@pytest.mark.parametrize("name", TEMPLATES)
def test_templates_load(name):
    assert load_template(f"kgds/{name}").sections[-1][0] == "user"


def test_summary_answers_accept_paper_style_labels():
    value = parse_answer('{"background_paragraphs": ["<Paragraph_2>", "3"], "opinion_summary": "Person1 ..."}', EbsSummary)
    assert value.background_paragraphs == [2, 3]
    with pytest.raises(ParseFailure):
        parse_answer('{"background_paragraphs": ["two"], "opinion_summary": "x"}', EbsSummary)


def test_fact_verdicts_need_one_verdict_per_fact():
    value = parse_answer('{"verdicts": [{"fact": 2, "verdict": "Unknowable"}, {"fact": 1, "verdict": "knowable"}]}', FactVerdicts)
    assert check_numbers(2)(value) is None
    assert "expected one verdict" in check_numbers(3)(value)
    with pytest.raises(ParseFailure):
        parse_answer('{"verdicts": [{"fact": 1, "verdict": "probably"}]}', FactVerdicts)


def test_batches_group_facts_per_paragraph():
    facts = [{"paragraph": p, "position": i} for p, i in [(2, 0), (1, 1), (1, 0), (3, 0)]]
    assert [[(f["paragraph"], f["position"]) for f in b] for b in batches(facts, False)] == [[(1, 0), (1, 1)], [(2, 0)], [(3, 0)]]
    assert len(batches(facts, True)) == 4


def test_error_types_read_in_several_spellings():
    assert [normalise_error_type(v) for v in ("iru", "Error Type1", 5, "opinion sentiment distortion")] == ["IRU", "OM", "OFI", "OSD"]
    with pytest.raises(ParseFailure):
        parse_answer('{"reasoning": "x", "error_type": "something else"}', ErrorClassification)


def test_feedback_and_decomposer_answers():
    assert parse_answer('{"reasoning": "r", "better": "EBS_B"}', FeedbackJudgement).better == "B"
    assert parse_answer('{"facts": ["A won.", " ", "B lost."]}', AtomicFacts).facts == ["A won.", "B lost."]


async def test_decomposer_fills_facts_of_paragraphs_that_have_none():
    """User data without atomic facts: paragraphs are decomposed before verification."""
    settings = ModelSettings(spec="openai:scripted-kgds-decompose")

    def respond(messages) -> str:
        prompt = prompt_text(messages)
        if "Break the paragraph inside the tags into fine-grained atomic facts" in prompt:
            return '{"facts": ["Fact one.", "Fact two."]}'
        if "<atomic_facts>" in prompt:
            return '{"verdicts": [{"fact": 1, "verdict": "knowable"}, {"fact": 2, "verdict": "unknowable"}]}'
        raise AssertionError(prompt)

    register_client(settings, ScriptedChatModel(respond=respond))
    sample = {
        "SBK": [{"paragraph_index": 1, "paragraph_text": "A."}, {"paragraph_index": 2, "paragraph_text": "B."}],
        "KGD": [{"participant": "Person1", "utterance": "hm"}],
        "BSP": [{"paragraph_index": 1, "paragraph_text": "A."}],
        "CAO": [],
    }
    state = await build_graph().ainvoke(
        {
            **sample,  # a record in the KGDS.json format, here without atomic facts
            "options": {"reflection_rounds": 0},
            "predictions": [{"pattern": "abs", "round": 0, "background": "A summary.", "opinion": None}],
        },
        context=EvalContext(default_model=settings, cache_path=None),
    )
    assert [f["kind"] for f in state["facts"]] == ["key", "key", "nonsupporting", "nonsupporting"]
    assert state["fact_gaps"] == []
    background = state["scores"]["abs"]["0"]["background"]
    assert background == {"recall": 0.5, "precision": 0.5, "f1": 0.5}
