"""`ask`: one agent call rendered, sent, parsed, retried and recorded honestly."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from dialeval.agents.base import AGENTS, AgentContext, agent_node, ask, register_agent
from dialeval.config import EvalContext, ModelSettings
from dialeval.models.client import get_client
from dialeval.agents.templates import parse_template
from dialeval.testing.scripted import prompt_text
from dialeval.models.usage import Ledger, current_ledger
from tests.helpers import scripted


class Score(BaseModel):
    rationale: str
    score: int = Field(ge=1, le=5)


def _ctx(settings: ModelSettings, retries: int = 2) -> AgentContext:
    return AgentContext(
        role="judge",
        client=get_client(settings),
        template=parse_template("<<user>>\n$q", "t"),
        parse_retries=retries,
        cache_path=None,
        options={},
    )


async def test_a_parsable_answer_is_returned_and_recorded():
    settings, _ = scripted(replies=['Fine. {"rationale": "good", "score": 4}'])
    ledger = Ledger()
    token = current_ledger.set(ledger)
    try:
        answer = await ask(_ctx(settings), "judge", [HumanMessage("q")], Score)
    finally:
        current_ledger.reset(token)
    assert answer.ok and answer.value.score == 4
    assert answer.call.status == "ok" and answer.call.attempts == 1
    assert [c.status for c in ledger.calls] == ["ok"] and ledger.calls[0].requests == 1


async def test_retries_with_a_corrective_message_then_succeeds():
    settings, model = scripted(replies=["I would say pretty good", '{"rationale": "ok", "score": 3}'])
    answer = await ask(_ctx(settings), "judge", [HumanMessage("q")], Score)
    assert answer.value.score == 3 and answer.call.attempts == 2
    second_prompt = prompt_text(model.prompts[1])
    assert "I would say pretty good" in second_prompt and '"score"' in second_prompt


async def test_an_unreadable_answer_becomes_unparsed_with_its_raw_text():
    settings, model = scripted(respond=lambda m: "It is a solid answer overall.")
    answer = await ask(_ctx(settings, retries=2), "judge", [HumanMessage("q")], Score)
    assert answer.value is None
    assert answer.call.status == "unparsed"
    assert answer.call.raw == "It is a solid answer overall."
    assert answer.call.attempts == 3 and len(model.prompts) == 3


async def test_an_answer_cut_off_by_the_token_limit_is_never_parsed_as_whole():
    settings, _ = scripted(respond=lambda m: ('{"rationale": "long...", "score": 5}', "length"))
    answer = await ask(_ctx(settings, retries=1), "judge", [HumanMessage("q")], Score)
    assert answer.value is None and answer.call.status == "truncated"


async def test_meaning_checks_turn_a_valid_shape_into_unparsed():
    settings, _ = scripted(respond=lambda m: '{"rationale": "x", "score": 5}')
    answer = await ask(
        _ctx(settings, retries=0), "judge", [HumanMessage("q")], Score, validate=lambda v: "score 5 not allowed here"
    )
    assert answer.call.status == "unparsed" and answer.call.reason == "score 5 not allowed here"


async def test_a_backend_that_gives_up_is_an_error_outcome():
    def broken(messages: Any) -> str:
        raise ConnectionError("server went away")

    settings, _ = scripted(respond=broken)
    answer = await ask(_ctx(settings), "judge", [HumanMessage("q")], Score)
    assert answer.call.status == "error" and "server went away" in answer.call.reason


async def test_dry_run_returns_a_schema_valid_placeholder_and_counts_tokens():
    ctx = _ctx(ModelSettings(spec="dry-run:gpt-4o-mini"))
    ledger = Ledger()
    token = current_ledger.set(ledger)
    try:
        answer = await ask(ctx, "judge", [HumanMessage("How many legs does a spider have?")], Score)
    finally:
        current_ledger.reset(token)
    assert answer.value.score == 1
    call = ledger.calls[0]
    assert call.estimated and call.requests == 0 and call.input_tokens > 5 and call.cost > 0


async def test_configs_swap_agent_implementations_by_name():
    @register_agent("test.loud_judge", role="judge", benchmark="test")
    def loud_judge():
        """Answers with a fixed marker, to show which agent ran."""

        async def run(state: dict, context: EvalContext) -> dict:
            return {"who": "loud"}

        return run

    @register_agent("test.quiet_judge", role="judge", benchmark="test")
    def quiet_judge():
        """Another implementation of the same role."""

        async def run(state: dict, context: EvalContext) -> dict:
            return {"who": "quiet"}

        return run

    class Runtime:
        def __init__(self, context):
            self.context = context

    node = agent_node("judge", "test.loud_judge")
    assert await node({}, Runtime(EvalContext())) == {"who": "loud"}
    assert await node({}, Runtime(EvalContext(agents={"judge": "test.quiet_judge"}))) == {"who": "quiet"}
    with pytest.raises(KeyError, match="test.loud_judge"):
        await node({}, Runtime(EvalContext(agents={"judge": "test.nope"})))
    with pytest.raises(ValueError, match="registered twice"):
        register_agent("test.loud_judge", role="judge", benchmark="test")(loud_judge)
    assert AGENTS["test.quiet_judge"].summary == "Another implementation of the same role."
