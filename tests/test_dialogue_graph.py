"""The dialogue graph takes one conversation as it appears in the data file (LangGraph Studio's input)."""

from __future__ import annotations

import asyncio
import json
from importlib import resources

from dialeval.config import EvalContext, ModelSettings
from dialeval.protocols.dialogue.graph import build_graph

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")


def test_a_record_of_the_file_is_the_graph_input(tmp_path):
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    context = EvalContext(default_model=ModelSettings(spec="dry-run"), cache_path=None, run_dir=str(tmp_path),
                          options={"criteria": ["relevance", "goal_completion"]})
    outputs = [asyncio.run(build_graph().ainvoke(record, context=context)) for record in records]

    trip, lamp = outputs
    assert [(u["turn"], u["criterion"], u["status"]) for u in trip["turn_units"]] == [(2, "relevance", "ok"), (4, "relevance", "ok")]
    assert [u["criterion"] for u in lamp["conversation_units"]] == ["goal_completion"]
    assert trip["grounding_units"] == [] and len(lamp["grounding_units"]) == 1  # lamp has a document
    assert trip["pairwise_units"] == [] and trip["note_updates"] == []  # no versus file; window mode


def test_a_conversation_carries_its_rubric_as_an_object_unless_the_run_names_one(tmp_path):
    from dialeval.conversation.rubric import parse_rubric

    written = {"criteria": [{"name": "refund_given", "level": "conversation", "description": "the bot refunds", "scale": ["yes", "no"]}]}
    rubric = parse_rubric(written, "for scenario 'refund'")
    record = {"id": "c1", "messages": [{"role": "user", "content": "my order is late"}, {"role": "assistant", "content": "refunded"}],
              "metadata": {"rubric": rubric}}
    own = EvalContext(default_model=ModelSettings(spec="dry-run"), cache_path=None, run_dir=str(tmp_path))
    judged = asyncio.run(build_graph().ainvoke(record, context=own))
    assert [u["criterion"] for u in judged["conversation_units"]] == ["refund_given"] and judged["turn_units"] == []

    as_data = {**record, "metadata": {"rubric": written}}  # as Studio posts it
    named = asyncio.run(build_graph().ainvoke(as_data, context=own))
    assert [u["criterion"] for u in named["conversation_units"]] == ["refund_given"]

    run_rubric = own.model_copy(update={"options": {"rubric": "dialogue", "criteria": ["relevance"]}})
    judged = asyncio.run(build_graph().ainvoke(record, context=run_rubric))
    assert [u["criterion"] for u in judged["turn_units"]] == ["relevance"] and judged["conversation_units"] == []


def test_a_rubric_read_back_from_a_langgraph_checkpoint_is_the_rubric_handed_in():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from dialeval.conversation.rubric import conversation_rubric, parse_rubric
    from dialeval.protocols.dialogue.common import DialogueOptions

    rubric = parse_rubric({"criteria": [{"name": "solved", "level": "conversation", "description": "d", "scale": ["yes", "no"]},
                                        {"name": "tone", "description": "d", "scale": [1, 5]},
                                        {"name": "calls", "match": {"mode": "subset"}}]}, "for scenario 'refund'")
    serde = JsonPlusSerializer()  # what a checkpointer (Studio's) stores the judge subgraph's state with
    metadata = serde.loads_typed(serde.dumps_typed({"rubric": rubric}))
    assert conversation_rubric(DialogueOptions(), metadata) == rubric
