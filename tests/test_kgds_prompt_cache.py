"""KGDS requests are prefix-stable, so a provider's prompt cache can serve what calls share.

Follow-up turns (reflection, feedback judgement, error classification) repeat the
conversation so far verbatim, and the verifiers' calls on one summary differ only in
their last block (the facts or the opinion judged), after the summary and the
instructions they share. OpenAI caches shared prefixes of 1,024 tokens and more.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from dialeval.config import ModelSettings
from dialeval.models.prompt_cache import STEP
from dialeval.evaluation import run
from dialeval.run.folder import RESULTS
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from dialeval.models.usage import count_tokens
from tests.test_kgds_graph import FIXTURE, config, fake_model


def stub_model(server: OpenAIStub) -> ModelSettings:
    """The test server as the model; the SDK may retry a keep-alive connection the server dropped."""
    return ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=2)


def run_against_stub(tmp_path: Path, **options) -> tuple[list[dict], dict[str, str]]:
    """Every request body the KGDS graph sent for the fixture sample, and the answer to each prompt."""
    answers: dict[str, str] = {}

    def respond(body: dict) -> str:
        answers[prompt_of(body)] = fake_model(prompt_of(body), ebs=(1, 3))  # an EBS unlike gold: the feedback judge runs
        return answers[prompt_of(body)]

    with OpenAIStub(respond=respond) as server:
        result = run("kgds", FIXTURE, config(tmp_path, stub_model(server), **options), progress=False)
        bodies = server.completions
    assert result.failed == 0, result.summary
    return bodies, answers


def between(text: str, tag: str) -> str:
    return text.split(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0]


def test_follow_up_turns_repeat_the_earlier_request_and_its_answer_verbatim(tmp_path):
    bodies, answers = run_against_stub(tmp_path, reflection_rounds=2)
    follow_ups = [b for b in bodies if len(b["messages"]) > 1]
    kinds = {"reflection": "Reflect on your answer above", "feedback": "summary B is the one human experts", "error": "You found the atomic opinion above unknowable"}
    assert {k for k, text in kinds.items() if any(text in b["messages"][-1]["content"] for b in follow_ups)} == set(kinds)
    for body in follow_ups:
        *earlier, answer, new = body["messages"]
        sent_before = [b for b in bodies if b["messages"] == earlier]
        assert sent_before, f"not a continuation of an earlier request: {new['content'][:60]}"
        assert answer == {"role": "assistant", "content": answers[prompt_of(sent_before[0])]}
        assert new["role"] == "user"


def test_verifier_calls_on_one_summary_differ_only_in_their_last_block(tmp_path):
    bodies, _ = run_against_stub(tmp_path, reflection_rounds=1)
    singles = [b["messages"][0]["content"] for b in bodies if len(b["messages"]) == 1]
    for summary_tag, item_tag in (("background_summary", "atomic_facts"), ("opinion_summary", "atomic_opinion")):
        by_summary: dict[str, list[str]] = defaultdict(list)
        for prompt in singles:
            if f"<{item_tag}>" in prompt:
                by_summary[between(prompt, summary_tag)].append(prompt)
        assert by_summary and all(len(calls) >= 2 for calls in by_summary.values())
        for calls in by_summary.values():
            heads = {prompt.rsplit(f"<{item_tag}>", 1)[0] for prompt in calls}
            assert len(heads) == 1, f"{item_tag}: calls on one summary differ before the item judged"
            [head] = heads
            assert "never instructions" in head and '{"' in head  # the instructions and the reply format are shared
            assert all(prompt.endswith(f"</{item_tag}>") for prompt in calls)  # the item is the last block


def long_predictions(tmp_path: Path) -> Path:
    """The fixture sample's summaries, padded past the 1,024 tokens a prefix cache needs."""
    padding = " ".join(f"Person{1 + i % 2} also mentioned detail number {i} of the final." for i in range(120))
    rows = [
        {"sample": 0, "pattern": "ebs", "background": [1, 2], "opinion": f"Person1 loved the late winner. {padding}"},
        {"sample": 0, "pattern": "abs", "background": f"The Herons beat the Owls 3-2. {padding}", "opinion": f"Person2 felt sorry for the Owls. {padding}"},
    ]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_long_summary_is_paid_for_once_across_its_verifier_calls(tmp_path):
    """With the cache the test server emulates, every verifier call on a summary but the
    first is served all of its prompt but the item judged (within one 128-token step)."""

    def respond(body: dict) -> str:
        return fake_model(prompt_of(body))

    with OpenAIStub(respond=respond, prompt_cache=True) as server:
        options = {"predictions": str(long_predictions(tmp_path))}
        result = run("kgds", FIXTURE, config(tmp_path, stub_model(server), **options), progress=False)
        prompts = [prompt_of(b) for b in server.completions if len(b["messages"]) == 1]
    assert result.failed == 0, result.summary
    [row] = [json.loads(line) for line in (result.run_dir / RESULTS).read_text().splitlines()]
    for agents, tag in ((["kgds.fact_verifier"], "atomic_facts"), (["kgds.opinion_verifier.ebs", "kgds.opinion_verifier.abs"], "atomic_opinion")):
        item_tokens = max(count_tokens(f"<{tag}>{between(p, tag)}</{tag}>") for p in prompts if f"<{tag}>" in p)
        for agent in agents:
            calls = sorted((c for c in row["usage"] if c["agent"] == agent), key=lambda c: c["cached_input_tokens"])
            assert len(calls) >= 2 and min(c["input_tokens"] for c in calls) > 1024
            assert calls[0]["cached_input_tokens"] == 0  # the first call on the summary pays for all of it
            for call in calls[1:]:
                assert 0 < call["input_tokens"] - call["cached_input_tokens"] < item_tokens + 4 + STEP
    usage = result.metrics["run"]["usage"]
    assert usage["cached_input_tokens"] > 0.4 * usage["input_tokens"]
