"""Prompts of the growing-conversation protocols stay prefix-stable, so API prompt caches pay off.

A session judge, a responder replying turn after turn and a judge grading every turn of
one dialogue send much the same text again and again. Each test sends consecutive
prompts of one dialogue through the prefix-cache emulator (or the test server) and
checks that the next prompt starts with everything the previous one had before its
new part; for Anthropic, that the breakpoint closes exactly that part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from dialeval.protocols.vdact.session_judge import build_messages
from dialeval.config import ModelSettings, RunConfig
from dialeval.models.prompt_cache import PrefixCache, mark_stable_prefix, prompt_tokens, with_cache_breakpoints
from dialeval.evaluation import run
from dialeval.agents.templates import load_template
from dialeval.testing.conversations import mmdu_dialogues, mmrc_conversations
from dialeval.testing.openai_server import OpenAIStub

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"


def _text(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in messages]


def _session_prompts(turns: int) -> list[list[Any]]:
    """The VDEval session judge's prompt for every turn of one dialogue, each earlier turn graded."""
    dialogue = {
        "summary": "A man walks into the kitchen, opens the fridge, takes out milk and pours a glass.",
        "turns": [
            {"id": f"t{n}", "turn_num": n, "question": f"What happens in step {n}?", "reference": f"He does thing {n}.",
             "candidate": f"He does something like thing {n}."}
            for n in range(1, turns + 1)
        ],
    }
    template = load_template("vdact/session_judge")
    prompts, judged = [], []
    for index, turn in enumerate(dialogue["turns"]):
        prompts.append(build_messages(template, {"dialogue": dialogue, "index": index, "judged": list(judged)}))
        judged.append({"turn_id": turn["id"], "scores": {"rating": 2}, "rationale": f"Step {index + 1} is partly right."})
    return prompts


def test_each_session_judge_prompt_starts_with_the_previous_one_up_to_its_turn_to_grade():
    prompts = _session_prompts(6)
    cache = PrefixCache(min_cached=0, step=1)  # every shared token counts
    for before, after in zip(prompts, prompts[1:]):
        stable = before[-1].content.split("\n</earlier_turns>")[0] if "Turn 1\n" in before[-1].content else None
        cache.lookup_and_add(prompt_tokens(_text(before)))
        hit = cache.lookup_and_add(prompt_tokens(_text(after)))
        assert after[0].content == before[0].content  # instructions and example: the same system prompt
        if stable is not None:  # the earlier turns of ``before`` open the earlier turns of ``after``
            assert after[-1].content.startswith(stable)
            assert hit >= len(prompt_tokens(_text([before[0], HumanMessage(stable)]))) - 2  # a merged token at the seam


def test_anthropic_breakpoint_of_the_session_judge_closes_the_earlier_turns_and_recurs_in_the_next_prompt():
    prompts = [with_cache_breakpoints(p) for p in _session_prompts(4)]
    for before, after in zip(prompts[1:], prompts[2:]):  # from the second turn on there are earlier turns
        blocks = before[-1].content
        marked = [i for i, b in enumerate(blocks) if "cache_control" in b]
        assert marked == [len(blocks) - 2]  # the block before the turn to grade
        assert blocks[-1]["text"].startswith("\n</earlier_turns>")
        # the next prompt holds the same blocks up to that breakpoint: Anthropic finds it there
        assert [b["text"] for b in after[-1].content[: len(blocks) - 1]] == [b["text"] for b in blocks[:-1]]
        assert "".join(b["text"] for b in blocks) == HumanMessage(blocks).text  # nothing added or lost
    first = with_cache_breakpoints(_session_prompts(1)[0])
    assert isinstance(first[-1].content, str)  # no earlier turns: only the system prompt is marked


def test_mark_stable_prefix_reaches_no_provider_but_anthropic():
    message = mark_stable_prefix(HumanMessage("stable part|new part"), [11])
    assert message.content == "stable part|new part"  # OpenAI and local models get the text as it was
    system, marked = with_cache_breakpoints([SystemMessage("rules"), message])
    assert marked.content == [
        {"type": "text", "text": "stable part", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "|new part"},
    ]
    assert marked.additional_kwargs == {}


def _mmdu_judge_prompts(blocks: bool) -> list[list[Any]]:
    from dialeval.agents.base import AgentContext
    from dialeval.protocols.mmdu.judge import build_messages as judge_messages
    from dialeval.config import EvalContext
    from dialeval.protocols.mmdu.data import Dialogue

    dialogue = Dialogue.model_validate(mmdu_dialogues(1, seed=3)[0])
    ctx = AgentContext.for_role(EvalContext(default_model=ModelSettings(spec="dry-run")), "judge", "mmdu/judge")
    return [judge_messages(ctx, dialogue, turn, "An answer.", "dialogue", blocks) for turn in dialogue.turns[:4]]


def test_every_mmdu_judge_prompt_of_a_dialogue_opens_with_the_same_instructions_and_pictures():
    prompts = _mmdu_judge_prompts(blocks=False)
    stable = prompts[0][-1].content.split("</pictures>")[0] + "</pictures>"
    assert "[image 1:" in stable and "<question>" not in stable
    cache = PrefixCache()  # OpenAI's rule
    hits = [cache.lookup_and_add(prompt_tokens(_text(p))) for p in prompts]
    shared = len(prompt_tokens([("system", prompts[0][0].content), ("user", stable)]))
    assert hits[0] == 0 and all(h >= shared - 128 - 2 and h >= 1024 for h in hits[1:])
    for prompt in prompts:
        assert prompt[-1].content.startswith(stable)


def test_the_mmdu_judge_marks_its_pictures_for_anthropic_in_either_image_mode():
    for blocks in (False, True):
        prompt = with_cache_breakpoints(_mmdu_judge_prompts(blocks)[1])
        parts = prompt[-1].content
        marked = [i for i, p in enumerate(parts) if "cache_control" in p]
        assert len(marked) == 1 and parts[marked[0]]["text"].endswith("</pictures>")
        assert all("<question>" not in p.get("text", "") for p in parts[: marked[0] + 1])


def _chat_requests(bench: str, data: Path, tmp_path: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    with OpenAIStub(respond=lambda body: '{"score": 3}') as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0, max_tokens=64)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, options=options, concurrency=1)
        run(bench, data, config, progress=False)
        return list(server.completions)


def test_the_model_under_test_is_one_continued_chat_each_request_extending_the_last(tmp_path):
    mmrc = tmp_path / "mmrc.json"
    mmrc.write_text(json.dumps(mmrc_conversations(1, seed=5)))
    mmdu = tmp_path / "mmdu.json"
    mmdu.write_text(json.dumps(mmdu_dialogues(1, seed=5)))
    cases = [
        ("mmrc", mmrc, {"note_taking": "off", "images": "text"}, lambda b: not b["messages"][0]["role"] == "system"),
        ("mmdu", mmdu, {"images": "text"}, lambda b: "helpful assistant" in str(b["messages"][0]["content"])),
    ]
    for bench, data, options, is_responder in cases:
        chats = [b["messages"] for b in _chat_requests(bench, data, tmp_path / bench, options) if is_responder(b)]
        assert len(chats) > 5
        for before, after in zip(chats, chats[1:]):
            # everything sent before comes again, in the same order, ahead of what is new
            assert after[: len(before)] == before, bench


def test_synthetic_conversations_load_and_have_the_papers_typical_shape(tmp_path):
    from dialeval.protocols.mmdu.data import load_dialogues
    from dialeval.protocols.mmrc.data import load_conversations

    (tmp_path / "mmdu.json").write_text(json.dumps(mmdu_dialogues(30)))
    (tmp_path / "mmrc.json").write_text(json.dumps(mmrc_conversations(30)))
    dialogues = load_dialogues(tmp_path / "mmdu.json")
    conversations = load_conversations(tmp_path / "mmrc.json")
    assert 12 <= sum(len(d.turns) for d in dialogues) / 30 <= 18  # MMDU: 15 turns on average
    assert 12 <= sum(len(c.turns) for c in conversations) / 30 <= 18  # MMRC: 15.2
    assert all(len(c.questions) == 6 for c in conversations)
    assert mmdu_dialogues(2, seed=1) == mmdu_dialogues(2, seed=1) != mmdu_dialogues(2, seed=2)  # made from the seed
