"""A run id covers everything that decides results: edited prompt files, another
server, a replaced image or another dialeval version start a new run (and an explicit
--run-id that would mix two setups stops and names what changed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import dialeval
from dialeval.errors import RunError
from dialeval.protocols.mmdu.metrics import DIMENSIONS
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
ANSWERS = FIXTURES / "answers_demo.jsonl"
PROMPT = Path(dialeval.__file__).parent / "protocols" / "answers" / "prompts" / "answer_judge.txt"
GRADE = '{"rationale": "agrees", "score": 4}'


def test_an_edited_prompt_file_is_a_new_run_not_a_resume(tmp_path):
    template = tmp_path / "judge.txt"
    template.write_text(PROMPT.read_text())
    with OpenAIStub(respond=lambda body: GRADE) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url},
                             templates={"judge": str(template)})
        first = run("answers", ANSWERS, config, progress=False)
        template.write_text(PROMPT.read_text().replace("impartial", "careful", 1) + "\nBe brief.\n")
        second = run("answers", ANSWERS, config, progress=False)
        assert second.run_dir != first.run_dir and len(server.requests) == 6  # every item judged again
        assert all("Be brief." in str(b["messages"]) for b in server.requests[3:])
        template.write_text(PROMPT.read_text())
        with pytest.raises(RunError, match=rf"template 'judge' changed \({template}\)"):
            run("answers", ANSWERS, config.model_copy(update={"run_id": second.run_dir.name}), progress=False)


def test_the_same_command_against_another_server_is_another_run(tmp_path, monkeypatch):
    with OpenAIStub(respond=lambda body: GRADE) as one, OpenAIStub(respond=lambda body: GRADE) as other:
        config = http_config(tmp_path, {"spec": "openai:gpt-4o-mini"})
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-identity")
        monkeypatch.setenv("OPENAI_BASE_URL", one.base_url)
        first = run("answers", ANSWERS, config, progress=False)
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
        second = run("answers", ANSWERS, config, progress=False)
        assert second.run_dir != first.run_dir
        assert len(one.completions) == 3 and len(other.completions) == 3  # the second server judged every item
        with pytest.raises(RunError, match=rf"endpoint of 'model' changed \({other.base_url} -> {one.base_url}\)"):
            monkeypatch.setenv("OPENAI_BASE_URL", one.base_url)
            run("answers", ANSWERS, config.model_copy(update={"run_id": second.run_dir.name}), progress=False)


def _mmdu_reply(body: dict) -> str:
    import json

    if "impartial grader" in json.dumps(body["messages"][0]):
        return json.dumps({"explanation": "fine", "scores": {d: 6 for d in DIMENSIONS}})
    return "An answer"


def test_a_replaced_image_is_new_data(tmp_path):
    shutil.copytree(FIXTURES / "mmdu_images", tmp_path / "mmdu_images")
    data = tmp_path / "mmdu_demo.json"
    shutil.copy(FIXTURES / "mmdu_demo.json", data)
    (tmp_path / "data").mkdir()
    with OpenAIStub(respond=_mmdu_reply) as server:
        config = http_config(tmp_path / "out", {"spec": "openai-compatible:stub", "base_url": server.base_url}, limit=1)
        first = run("mmdu", data, config, progress=False)
        sent = len(server.requests)
        shutil.copy(tmp_path / "mmdu_images" / "blue_square.png", tmp_path / "mmdu_images" / "sales_2022.png")  # --limit 1: sales-2
        second = run("mmdu", data, config, progress=False)
    assert second.run_dir != first.run_dir and len(server.requests) > sent


def test_another_dialeval_version_is_another_run(tmp_path, monkeypatch):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, limit=1)
        first = run("answers", ANSWERS, config, progress=False)
        monkeypatch.setattr(dialeval.version, "__version__", "99.0")
        second = run("answers", ANSWERS, config, progress=False)
    assert second.run_dir != first.run_dir and '"dialeval": "99.0"' in (second.run_dir / "config.json").read_text()
