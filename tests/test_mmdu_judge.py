"""The MMDU judge: answers read dimension by dimension, and prompts that carry the images."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import HumanMessage

from dialeval.protocols.mmdu.common import content, fit_history, message_tokens
from dialeval.protocols.mmdu.judge import DIMENSIONS, TurnJudgement, dimension_scores, judged_images
from dialeval.config import RunConfig
from dialeval.protocols.mmdu.data import load_dialogues
from dialeval.agents.parsing import parse_answer
from dialeval.evaluation import run
from tests.helpers import scripted

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
DEMO = FIXTURES / "mmdu_demo.json"
PREDICTIONS = FIXTURES / "mmdu_demo_predictions.json"


def test_a_partial_answer_keeps_the_dimensions_it_got_right():
    dims = dimension_scores(
        {"creativity": 6, "Richness": 11, "Visual Perception": "7", "Logical Coherence": 7.5, "AA": 8, "Overall Score": 7}
    )
    assert {d: v["score"] for d, v in dims.items()} == {
        "Creativity": 6,
        "Richness": None,
        "Visual Perception": 7,
        "Logical Coherence": None,
        "Answer Accuracy": 8,
        "Image Relationship Understanding": None,
        "Overall Score": 7,
    }
    assert dims["Richness"]["reason"] == "11 is outside 1-10"
    assert dims["Logical Coherence"]["reason"] == "not an integer: 7.5"
    assert dims["Image Relationship Understanding"]["reason"] == "missing"


def test_the_paper_answer_shape_prose_then_a_python_dictionary_is_read():
    raw = (
        "Creativity: plain and expected. Score: 3\nRichness: thin. Score: 4\n...\n"
        "{'Creativity': 3, 'Richness': 4, 'Visual Perception': 6, 'Logical Coherence': 7, "
        "'Answer Accuracy': 6, 'Image Relationship Understanding': 5, 'Overall Score': 5}"
    )
    value = parse_answer(raw, TurnJudgement)
    scores = {d: v["score"] for d, v in dimension_scores(value.scores).items()}
    assert scores == dict(zip(DIMENSIONS, [3, 4, 6, 7, 6, 5, 5]))


def test_images_go_where_the_tags_are_as_blocks_or_caption_lines():
    shapes = load_dialogues(DEMO)[0]
    question = "Compare <image-3> with <image-1>."
    blocks = content(question, shapes.image, True)
    assert [p["type"] for p in blocks] == ["text", "image_url", "text", "image_url", "text"]
    assert [p["text"] for p in blocks if p["type"] == "text"] == ["Compare [image 3]", " with [image 1]", "."]
    assert content(question, shapes.image, False) == (
        "Compare [image 3: a green filled triangle pointing up, on a white background (green_triangle.png)] "
        "with [image 1: a red filled circle on a white background (red_circle.png)]."
    )


def test_the_judge_sees_all_images_or_only_the_ones_a_turn_tags():
    shapes = load_dialogues(DEMO)[0]
    assert [judged_images(shapes, t, "dialogue") for t in shapes.turns[:3]] == [[1, 2, 3]] * 3
    assert [judged_images(shapes, t, "turn") for t in shapes.turns[:3]] == [[1, 2, 3], [], [3]]
    assert judged_images(shapes, shapes.turns[0], "none") == []


def test_history_past_the_window_drops_the_oldest_turns_first():
    pairs = [[HumanMessage("q" * 400)], [HumanMessage("second question")]]
    fixed = [HumanMessage("the question")]
    sizes = [message_tokens(p[0], 0) for p in pairs]
    fixed_size = message_tokens(fixed[0], 0)
    kept, dropped, tokens = fit_history(pairs, fixed, fixed_size + sizes[1] + 10, 10, 0, "drop_oldest")
    assert (kept, dropped, tokens) == (pairs[1:], 1, fixed_size + sizes[1])
    try:
        fit_history(pairs, fixed, fixed_size + sizes[1] + 10, 10, 0, "fail")
    except RuntimeError as err:
        assert "exceed the context window" in str(err)
    else:
        raise AssertionError("policy fail must raise")


def _judge_reply(overall_of_turn: dict[str, int], broken: str | None = None):
    """Scripted judge: Overall from the question; Richness out of range for ``broken``; nothing for 'Which shop'."""

    def respond(messages):
        text = "\n".join(
            m.content if isinstance(m.content, str) else "".join(p.get("text", "") for p in m.content) for m in messages
        )
        question = text.rsplit("<question>", 1)[1].split("</question>")[0].strip()
        if question.startswith("Which shop's sales fell"):
            return "I cannot decide."
        overall = next(v for k, v in overall_of_turn.items() if question.startswith(k))
        scores = {d: 5 for d in DIMENSIONS} | {"Overall Score": overall}
        if broken and question.startswith(broken):
            scores["Richness"] = 0
        return json.dumps({"explanation": "checked", "scores": scores})

    return respond


def test_unreadable_dimensions_and_answers_are_counted_never_averaged(tmp_path):
    starts = {"<image-1>": 8, "Which picture": 6, "Look again": 4, "If you placed": 4, "Which two": 6, "Write a": 8,
              "Image1:": 9, "What were": 7, "How do": 5, "Suggest": 3}
    settings, model = scripted(respond=_judge_reply(starts, broken="Look again"))
    config = RunConfig(model=settings, cache_path=None, output_dir=str(tmp_path), options={"predictions": str(PREDICTIONS)},
                       parse_retries=1)
    result = run("mmdu", DEMO, config, progress=False)

    scores = result.metrics["scores"]
    assert result.metrics["run"]["failed"] == 0
    assert len(model.prompts) == 11 + 1  # one judge call per turn, plus one retry of the unreadable answer
    # sales-2 turn 2 has no readable score: the whole turn is left out and counted
    assert scores["judge_failed"] == 1 and scores["dimensions"]["Overall Score"]["turns"] == 10
    # shapes-1 turn 3 lost only Richness
    assert scores["dimensions"]["Richness"] == {**scores["dimensions"]["Richness"], "turns": 9, "unparsed": 1}
    assert scores["dimensions"]["Creativity"]["turns"] == 10
    # Overall: shapes-1 mean 6, sales-2 mean (9 + 7 + 5 + 3) / 4 = 6 -> 60
    assert scores["dimensions"]["Overall Score"]["score"] == 60.0
    shapes = next(r for r in result.records if r["id"] == "shapes-1")
    assert shapes["turns"][2]["unparsed"] == {"Richness": "0 is outside 1-10"}
    assert shapes["turns"][2]["scores"]["Creativity"] == 5
