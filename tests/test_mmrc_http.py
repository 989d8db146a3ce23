"""One fixture conversation end to end against the local OpenAI-compatible test server."""

from __future__ import annotations

from collections import Counter

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.test_mmrc_graph import _fast_embeddings, running_data, world  # noqa: F401  (fixtures)


def role_of(body: dict) -> str:
    text = prompt_of(body)
    for marker, role in (
        ("note-keeper", "notetaker"),
        ("You rate answers given by", "judge"),
        ("You check list answers", "item_extractor"),
        ("You classify answers", "refusal_detector"),
    ):
        if marker in text:
            return role
    return "responder"


def test_a_conversation_end_to_end_over_http(tmp_path, running_data):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    script = world()

    def respond(body: dict) -> str:
        kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
        messages = [kinds[m["role"]](m["content"]) for m in body["messages"]]
        return script(messages)

    with OpenAIStub(respond=respond) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "cache.sqlite"))
        result = run("mmrc", running_data, config, progress=False)
        requests = Counter(role_of(b) for b in server.completions)
        note_images = [
            part["image_url"]["url"][:22]
            for b in server.completions
            if role_of(b) == "notetaker"
            for m in b["messages"]
            if isinstance(m["content"], list)
            for part in m["content"]
            if part.get("type") == "image_url"
        ]
        again = run("mmrc", running_data, config.model_copy(update={"run_id": "again"}), progress=False)
        repeated = len(server.completions) - sum(requests.values())

    # 8 turns -> 8 notes and 8 replies of the model under test + 6 questions x 2 conditions;
    # 12 judges; 2 IE answers and 2 AR answers that no rule settles -> 2 extractor + 2 detector calls;
    # where both conditions gave the same answer the judge's prompt is the same: sent once, shared
    # (5 judges, 1 extractor, 1 detector; only IU's answer differs with the notes)
    assert requests == {"notetaker": 8, "responder": 20, "judge": 7, "item_extractor": 1, "refusal_detector": 1}
    assert result.metrics["run"]["usage"]["deduplicated"] == 5 + 1 + 1
    # the note-taker saw each picture once, with its turn: two local files as pixels, one URL
    assert note_images == ["data:image/png;base64,", "data:image/png;base64,", "https://example.org/mm"]
    assert result.metrics["run"]["failed"] == 0
    assert result.metrics["conditions"]["on"]["abilities"]["IU"]["mean"] == 4.0
    assert repeated == 0 and again.metrics["conditions"] == result.metrics["conditions"]  # all from the cache
