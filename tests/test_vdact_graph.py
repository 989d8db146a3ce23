"""The VDAct graph takes one dialogue in the prediction file's own format, as LangGraph Studio sends it."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from dialeval.config import EvalContext
from dialeval.data.io import DataError
from dialeval.protocols.vdact.graph import VdactInput, VdactState, build_graph
from tests.helpers import scripted

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo"
RECORDS = [r for r in json.loads((DEMO / "predictions" / "demo-bot.json").read_text()) if r["dial_id"] == "0000102"]


def _context(**options) -> EvalContext:
    settings, _ = scripted(respond=lambda m: "Looks right. So rating=3")
    return EvalContext(default_model=settings, cache_path=None, options=options)


async def test_records_of_one_dialogue_are_judged_in_turn_order():
    records = list(reversed(RECORDS))  # order in the input does not matter: turn_num does
    state = await build_graph().ainvoke({"records": records, "summary": "He waters the plants."}, context=_context(judge="session"))
    assert [v["turn_num"] for v in state["judged"]] == [1, 2, 3, 4]
    assert all(v["scores"] == {"rating": 3} for v in state["judged"])
    assert state["dialogue"]["summary"] == "He waters the plants."


async def test_the_summary_is_looked_up_by_scenario_when_a_kg_folder_is_configured():
    state = await build_graph().ainvoke({"records": RECORDS}, context=_context(kg_dir=str(DEMO / "kg")))
    assert "bread and cheese" in state["dialogue"]["summary"]  # scenario 00001, refined


async def test_without_a_summary_or_its_folder_the_error_says_what_to_give():
    with pytest.raises(DataError, match="give 'summary' in the input, or set option kg_dir"):
        await build_graph().ainvoke({"records": RECORDS}, context=_context())
    state = await build_graph().ainvoke({"records": RECORDS}, context=_context(summary="none"))
    assert state["dialogue"]["summary"] is None


async def test_a_wrong_field_name_is_reported_with_record_and_field():
    bad = [{**r, "answer": r["gen_answer"]} for r in RECORDS]
    for r in bad:
        del r["ref_answer"]
    with pytest.raises(DataError) as err:
        await build_graph().ainvoke({"records": bad}, context=_context(summary="none"))
    assert "record 1" in str(err.value) and "ref_answer" in str(err.value)
    with pytest.raises(DataError, match="'records' must be a non-empty list"):
        await build_graph().ainvoke({"records": []}, context=_context(summary="none"))


async def test_records_of_two_dialogues_are_refused():
    other = [{**RECORDS[0], "id": "x", "dial_id": "0000103"}]
    with pytest.raises(DataError, match="2 dialogues"):
        await build_graph().ainvoke({"records": RECORDS + other}, context=_context(summary="none"))


def test_state_schemas_are_typing_extensions_typed_dicts():
    # pydantic (LangGraph Studio's schemas) needs typing_extensions.TypedDict before Python 3.12
    assert type(VdactInput).__module__ == type(VdactState).__module__ == "typing_extensions"
    assert typing.get_type_hints(VdactInput)["records"] == list[dict[str, typing.Any]]
