"""An empty reply is a turn: a bot that said nothing is judged on having said nothing.
Every reader keeps it (OpenAI and ShareGPT messages, the importers), the judge reads it as
"(empty reply)" and the viewer shows the same words."""

from __future__ import annotations

from dialeval.evaluation import run
from dialeval.report.viewer import write_site
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed, write_jsonl
from tests.helpers import http_config

OPENAI = {"id": "quiet", "messages": [{"role": "user", "content": "Compose an engaging travel blog post about Hawaii."},
                                      {"role": "assistant", "content": ""},
                                      {"role": "user", "content": "Hello?"}, {"role": "assistant", "content": "Sorry, here it is."}]}
SHAREGPT = {"id": "quiet-sharegpt", "conversations": [{"from": "human", "value": "Compose a blog post."}, {"from": "gpt", "value": ""}]}


def test_every_reader_keeps_the_empty_turn(tmp_path):
    from dialeval.conversation.data import load_conversations

    data = write_jsonl(tmp_path / "chats.jsonl", [OPENAI, SHAREGPT])
    quiet, sharegpt = load_conversations(data)
    assert [(t.role, t.text) for t in quiet.turns][:2] == [("user", OPENAI["messages"][0]["content"]), ("assistant", "")]
    assert [(t.role, t.text) for t in sharegpt.turns] == [("user", "Compose a blog post."), ("assistant", "")]
    [imported] = load_conversations(data, "hf")[1:]  # an importer's rows too
    assert imported.turns[1].text == ""


def test_the_judge_and_the_viewer_say_empty_reply(tmp_path, monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("criteria:\n  - name: helpful\n    description: Does the reply help?\n    scale: [1, 5]\n")
    data = write_jsonl(tmp_path / "chats.jsonl", [OPENAI])
    with OpenAIStub(respond=lambda body: '{"rationale": "it says nothing", "verdict": 1}') as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"rubric": str(rubric)}, run_id="quiet")
        result = run("dialogue", data, config, progress=False)
        prompts = [prompt_of(b) for b in server.completions]
    assert any('<reply turn="2">' in p and "(empty reply)" in p.split('<reply turn="2">', 1)[1][:40] for p in prompts)
    assert {u["turn"]: u["score"] for u in result.records[0]["turn_units"]} == {2: 1, 4: 1}
    write_site(tmp_path / "runs")
    page = (tmp_path / "runs" / "quiet" / "view" / "items" / "00001.html").read_text(encoding="utf-8")
    assert '<div class="text muted empty-reply">(empty reply)</div>' in page
    assert result.records[0]["turns"][1]["text"] == ""  # the record keeps what was said: nothing


def test_an_empty_answer_is_graded_as_an_empty_reply():
    from dialeval.protocols.answers.judge import variables

    shown = variables({"id": "q1", "question": "Compose a blog post.", "reference": "A post.", "answer": ""}, None)
    assert shown["answer"] == "(empty reply)"
