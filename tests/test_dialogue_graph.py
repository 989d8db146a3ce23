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
