"""What LangGraph Studio and its API post: one record exactly as it is in the data file.

Each graph is invoked in process with a record read from a bundled data file, as a user
pastes it into Studio (no run, no loader); every input field is described for Studio's
form; a bad record fails with an error LangGraph's server shows (a ``ValueError`` naming
the field), never one it hides as "An internal error occurred".
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dialeval.benchmarks import KNOWN
from dialeval.config import EvalContext, ModelSettings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "src" / "dialeval" / "fixtures"
GRAPHS = json.loads((ROOT / "langgraph.json").read_text())["graphs"]


def _graph(name: str):
    import importlib

    module, _, attr = GRAPHS[name].partition(":")
    return getattr(importlib.import_module(module.removeprefix("./src/").removesuffix(".py").replace("/", ".")), attr)()


def _invoke(name: str, record: dict[str, Any], **options: Any) -> dict[str, Any]:
    context = EvalContext(default_model=ModelSettings(spec="dry-run"), cache_path=None, options=options)
    return asyncio.run(_graph(name).ainvoke(record, context=context))


def _first(file: str) -> dict[str, Any]:
    path = FIXTURES / file
    text = path.read_text(encoding="utf-8")
    return json.loads(text)[0] if path.suffix == ".json" else json.loads(text.splitlines()[0])


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_every_input_field_has_a_description(name):
    schema = _graph(name).get_input_jsonschema()
    properties = schema["properties"]
    assert properties and schema.get("description"), name
    undescribed = [field for field, spec in properties.items() if not spec.get("description")]
    assert not undescribed, f"{name}: input fields without a description: {undescribed}"


def test_langgraph_json_serves_every_benchmark():
    assert set(KNOWN) <= set(GRAPHS)


def test_an_mdseval_record_is_posted_as_it_is_in_the_file():
    record = _first("mdseval_demo.json")
    state = _invoke("mdseval", record, evaluators=["pointwise"], aspects=["coherence"])
    scores = state["scores"]
    assert len(scores) == len(record["summary_list"])  # one coherence score per candidate summary
    assert {s["call"]["status"] for s in scores} == {"ok"}


def test_the_wrapped_mdseval_form_still_works():
    record = _first("mdseval_demo.json")
    state = _invoke("mdseval", {"record": record}, evaluators=["pointwise"], aspects=["coherence"])
    assert len(state["scores"]) == len(record["summary_list"])


def test_an_mdseval_record_missing_a_field_names_it():
    record = {k: v for k, v in _first("mdseval_demo.json").items() if k != "summary_list"}
    with pytest.raises(ValueError, match="summary_list"):
        _invoke("mdseval", record, evaluators=["pointwise"], aspects=["coherence"])


def test_the_documented_mmdu_input_resolves_images_against_image_root():
    record = _first("mmdu_demo.json")  # image paths relative to the fixtures folder, as in the file
    state = _invoke("mmdu", record, image_root=str(FIXTURES))
    turns = len(record["conversations"]) // 2
    assert len(state["replies"]) == turns and len(state["grades"]) == turns
    assert all(g["call"]["status"] == "ok" for g in state["grades"])


def test_an_mmdu_image_that_is_not_there_is_a_validation_error_naming_the_field(tmp_path):
    record = _first("mmdu_demo.json")
    record["image"][1] = {"source": "mmdu_images/nowhere.png"}
    shutil.copytree(FIXTURES / "mmdu_images", tmp_path / "mmdu_images")
    from dialeval.errors import DataError

    with pytest.raises(DataError) as err:
        _invoke("mmdu", record, image_root=str(tmp_path))
    assert isinstance(err.value, ValueError)  # shown by LangGraph's server with its message
    message = str(err.value)
    assert "graph input, field 'image.1'" in message and "nowhere.png" in message and "not found" in message


def test_an_mmrc_record_resolves_images_against_the_servers_folder(monkeypatch):
    monkeypatch.chdir(FIXTURES)  # `langgraph dev` runs where langgraph.json is; the record's paths start there
    record = _first("mmrc_demo.json")
    state = _invoke("mmrc", record, note_taking="off")
    assert len(state["answers"]) == len(record["questions"])


def test_an_mmrc_image_outside_the_folder_is_refused(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    record = _first("mmrc_demo.json")
    with pytest.raises(ValueError, match=r"field 'turns\.0\.images\.0'"):
        _invoke("mmrc", record, note_taking="off")


@pytest.mark.parametrize("name, file", [("answers", "answers_demo.jsonl"), ("dialogue", "dialogue_demo.jsonl"), ("kgds", "kgds_demo.json")])
def test_text_benchmarks_take_a_record_of_their_file(name, file):
    state = _invoke(name, _first(file))
    assert state, f"{name}: the graph returned nothing"
    calls = json.dumps(state)
    assert '"status": "ok"' in calls and '"status": "error"' not in calls


# the exception types LangGraph's server reports with their message (langgraph_api.serde);
# any other reaches an API client as "An internal error occurred"
SHOWN = (ValueError, TypeError, KeyError)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_a_record_missing_its_fields_fails_with_an_error_the_server_shows(name):
    with pytest.raises(Exception) as err:
        _invoke(name, {"id": "x"})
    assert isinstance(err.value, SHOWN), f"{name}: {type(err.value).__name__}: {err.value}"
