"""MMDU against the local test server: what each request carries, in the OpenAI and Anthropic formats."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.protocols.mmdu.data import load_dialogues
from dialeval.protocols.mmdu.metrics import DIMENSIONS
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
DEMO = FIXTURES / "mmdu_demo.json"
PREDICTIONS = FIXTURES / "mmdu_demo_predictions.json"
SCORES = {d: 6 for d in DIMENSIONS}


def _b64(name: str) -> str:
    return base64.b64encode((FIXTURES / "mmdu_images" / name).read_bytes()).decode()


SHAPES = [_b64(n) for n in ("red_circle.png", "blue_square.png", "green_triangle.png")]


def _texts(message: dict) -> str:
    body = message["content"]
    return body if isinstance(body, str) else "".join(p.get("text", "") for p in body if p.get("type") == "text")


def _openai_images(message: dict) -> list[str]:
    body = message["content"]
    if isinstance(body, str):
        return []
    return [p["image_url"]["url"].split("base64,")[1] for p in body if p.get("type") == "image_url"]


def _is_judge(body: dict) -> bool:
    return any("impartial grader" in _texts(m) for m in body["messages"] if m["role"] == "system") or "impartial grader" in str(
        body.get("system", "")
    )


def _judge_or_answer(body: dict) -> str:
    if _is_judge(body):
        return json.dumps({"explanation": "fine", "scores": SCORES})
    question = _texts(body["messages"][-1])
    return f"My answer to: {question[-40:]}"


def _config(tmp_path: Path, settings: ModelSettings, **options) -> RunConfig:
    options = {"image_root": str(FIXTURES), **options}  # the data is a copy (see _shapes); its pictures stay here
    # figures: false: these tests read results and requests; test_report_plots draws MMDU's figures
    return RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, options=options, figures=False)


def _shapes(tmp_path: Path, name: str = "mmdu_demo.json") -> Path:
    """The demo's first dialogue alone (its pictures still in the fixtures folder), and its answers."""
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    for source in (DEMO, PREDICTIONS):
        (tmp_path / "data" / source.name).write_text(json.dumps(json.loads(source.read_text())[:1]))
    return tmp_path / "data" / name


def _answers(tmp_path: Path) -> Path:
    return _shapes(tmp_path, PREDICTIONS.name)


def test_six_turns_make_six_judge_requests_each_with_its_turn_and_images(tmp_path):
    shapes = load_dialogues(DEMO)[0]
    answers = json.loads(PREDICTIONS.read_text())[0]["answers"]
    with OpenAIStub(respond=_judge_or_answer) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        result = run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, predictions=str(_answers(tmp_path))), progress=False)
        bodies = list(server.completions)
        turn_mode = run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, predictions=str(_answers(tmp_path)), judge_images="turn"), progress=False)
        turn_bodies = server.completions[len(bodies) :]

    assert len(bodies) == 6 and all(_is_judge(b) for b in bodies)
    for turn, answer in zip(shapes.turns, answers):
        [body] = [b for b in bodies if f"<question>\n{turn.question}\n</question>" in _texts(b["messages"][-1])]
        text = _texts(body["messages"][-1])
        assert f"<reference_answer>\n{turn.reference}\n</reference_answer>" in text
        assert f"<assistant_answer>\n{answer}\n</assistant_answer>" in text
        assert _openai_images(body["messages"][-1]) == SHAPES  # every picture of the dialogue, in order
    # judge_images=turn: only the pictures the turn's question or reference tags
    by_question = {t.question: t for t in shapes.turns}
    seen = {}
    for body in turn_bodies:
        question = _texts(body["messages"][-1]).split("<question>\n")[1].split("\n</question>")[0]
        seen[by_question[question].number] = _openai_images(body["messages"][-1])
    assert seen == {1: SHAPES, 2: [], 3: [SHAPES[2]], 4: [], 5: [], 6: []}
    for r in (result, turn_mode):
        assert r.metrics["scores"]["dimensions"]["Overall Score"]["score"] == 60.0


def test_anthropic_requests_carry_base64_image_blocks_in_tag_order(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the SDK wants one; the stub ignores it

    def respond(body: dict):
        return "", "tool_use", {"explanation": "fine", "scores": SCORES}

    with OpenAIStub(respond=respond) as server:
        settings = ModelSettings(spec="anthropic:claude-haiku-4-5", base_url=server.root_url, max_retries=0)
        result = run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, predictions=str(_answers(tmp_path))), progress=False)
        bodies = list(server.completions)

    assert len(bodies) == 6 and result.metrics["scores"]["judged"] == 6
    for body in bodies:
        blocks = body["messages"][-1]["content"]
        images = [b for b in blocks if b["type"] == "image"]
        assert [b["source"]["type"] for b in images] == ["base64"] * 3
        assert [b["source"]["media_type"] for b in images] == ["image/png"] * 3
        assert [b["source"]["data"] for b in images] == SHAPES
        texts = [b["text"] for b in blocks if b["type"] == "text"]
        assert texts[1:-2] == ["[image 1]", "[image 2]", "[image 3]"]
        # pictures first, then the turn: the breakpoint closes the prefix every turn repeats
        assert texts[0].endswith("each after its label:") and texts[-2] == "\n</pictures>" and "<question>" in texts[-1]
        assert [b.get("text") for b in blocks if "cache_control" in b] == ["\n</pictures>"]


def test_the_model_under_test_answers_with_its_history_and_the_pictures_where_tagged(tmp_path):
    with OpenAIStub(respond=_judge_or_answer) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0, max_tokens=64)
        result = run("mmdu", _shapes(tmp_path), _config(tmp_path, settings), progress=False)
        answers = [b for b in server.completions if not _is_judge(b)]

    assert len(answers) == 6
    first = answers[0]["messages"][-1]["content"]
    assert [p["type"] for p in first] == ["text", "image_url"] * 3 + ["text"]
    assert [p["text"] for p in first if p["type"] == "text"][:3] == ["[image 1]", "\n[image 2]", "\n[image 3]"]
    assert _openai_images(answers[0]["messages"][-1]) == SHAPES
    third = answers[2]["messages"]
    # system, then turns 1 and 2 (question, own answer), then the third question with image 3 in place
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third[2]["content"].startswith("My answer to:") and _openai_images(third[-1]) == [SHAPES[2]]
    [record] = result.records
    assert [t["history_turns"] for t in record["turns"]] == [0, 1, 2, 3, 4, 5]
    assert all(t["judge_status"] == "ok" for t in record["turns"])


def test_past_the_context_window_the_oldest_turn_goes_or_the_dialogue_fails(tmp_path):
    with OpenAIStub(respond=_judge_or_answer) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0, max_tokens=64)
        # turn 1 with its three pictures (765 tokens each) fits in 2420 tokens, turns 1 and 2 do not
        result = run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, context_window=2420), progress=False)
        answers = [b for b in server.completions if not _is_judge(b)]
        failed = run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, context_window=2420, overflow="fail"), progress=False)

    [record] = result.records
    assert [t["dropped_turns"] for t in record["turns"]] == [0, 1, 1, 1, 1, 1]
    assert all(not _openai_images(m) for m in answers[1]["messages"])  # the pictures left with turn 1
    assert result.metrics["context"]["dialogues_with_dropped_turns"] == {"shapes-1": 5}
    assert failed.metrics["run"]["failed"] == 1
    report = failed.report_path.read_text()
    assert "dialogue 'shapes-1', turn 2:" in report and "exceed the context window of 2420" in report


@pytest.mark.parametrize("mode", ["text"])
def test_text_only_backends_get_captions_in_place(tmp_path, mode):
    with OpenAIStub(respond=_judge_or_answer) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, images=mode), progress=False)
        first = next(b for b in server.completions if not _is_judge(b))
        judge = next(b for b in server.completions if _is_judge(b))

    question = first["messages"][-1]["content"]
    assert isinstance(question, str)
    assert question.startswith("[image 1: a red filled circle on a white background (red_circle.png)]\n[image 2:")
    assert "[image 3: a green filled triangle pointing up, on a white background (green_triangle.png)]" in judge["messages"][-1]["content"]


def _budgets_and_system_prompts(tmp_path: Path, model: dict, **options) -> tuple[set, set, set]:
    """Over HTTP: the answer budgets of the model under test's requests and of the judge's,
    and the system prompts the model under test received."""
    with OpenAIStub(respond=_judge_or_answer) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0, **model)
        run("mmdu", _shapes(tmp_path), _config(tmp_path, settings, **options), progress=False)
        bodies = list(server.completions)
    answers = [b for b in bodies if not _is_judge(b)]
    judges = [b for b in bodies if _is_judge(b)]

    def budgets(group: list[dict]) -> set:
        return {b.get("max_tokens") or b.get("max_completion_tokens") for b in group}

    return budgets(answers), budgets(judges), {_texts(b["messages"][0]) for b in answers}


def test_by_default_the_authors_budgets_and_a_generic_system_prompt(tmp_path):
    """The authors' scripts give API models and the judge 4096 new tokens and send the model
    under test a plain assistant system prompt; a budget the config sets wins."""
    answer_budgets, judge_budgets, systems = _budgets_and_system_prompts(tmp_path / "default", {})
    assert answer_budgets == {4096} and judge_budgets == {4096}
    assert systems == {"You are a helpful assistant."}

    answer_budgets, judge_budgets, _ = _budgets_and_system_prompts(tmp_path / "set", {"max_tokens": 300})
    assert answer_budgets == {300} and judge_budgets == {300}


def test_the_earlier_behaviour_stays_as_named_options(tmp_path):
    answer_budgets, judge_budgets, systems = _budgets_and_system_prompts(tmp_path, {}, budgets="config", system_prompt="guided")
    assert answer_budgets == {512} and judge_budgets == {512}
    [system] = systems
    assert "Answer each\nquestion fully" in system


def test_local_open_models_get_the_authors_open_model_budget_and_smollm2_keeps_its_own():
    from dialeval.config import EvalContext
    from dialeval.protocols.mmdu.common import role_model

    def budget(spec: str, role: str) -> int:
        context = EvalContext(default_model=ModelSettings.model_validate(spec), options={})
        return role_model(context, role).max_tokens

    assert budget("hf:/models/some-open-vlm", "responder") == 2048
    assert budget("hf:/models/some-open-vlm", "judge") == 4096
    assert budget("smollm2", "responder") == ModelSettings.model_validate("smollm2").max_tokens
