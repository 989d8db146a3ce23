"""LangGraph Studio: `langgraph dev` serves every benchmark graph, with its input schema and
model choices as context.

On Python 3.11 LangGraph can only read a state's fields from ``typing_extensions.TypedDict``
(not ``typing.TypedDict``); a graph that gets this wrong is served with an empty input
schema and Studio shows no input form. Each graph is checked on its own, so a failure
names the graph.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # starts langgraph dev on a busy machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def studio_server():
    cli = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
    if cli is None:
        pytest.skip("langgraph-cli is not installed")
    port = _free_port()
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}
    proc = subprocess.Popen(
        [cli, "dev", "--no-browser", "--no-reload", "--allow-blocking", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    import urllib.request

    deadline = time.time() + 240  # a busy 2-core machine can take minutes; pytest-timeout bounds the test
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("langgraph dev did not start within 240 s")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def test_langgraph_json_lists_every_registered_benchmark():
    from dialeval.benchmarks import KNOWN

    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    present = {name for name, module in KNOWN.items() if (ROOT / (module.replace(".", "/") + ".py")).exists()}
    assert present <= set(graphs)
    for target in graphs.values():
        path, _, attr = target.partition(":")
        assert (ROOT / path).exists() and attr == "build_graph"


async def test_a_graph_runs_in_the_studio_server_with_dry_run_model(studio_server):
    from langgraph_sdk import get_client

    client = get_client(url=studio_server)
    assistants = await client.assistants.search(limit=50)
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert set(graphs) <= {a["graph_id"] for a in assistants}  # every graph imports and is served
    for graph_id in graphs:
        schemas = await client.assistants.get_schemas(next(a["assistant_id"] for a in assistants if a["graph_id"] == graph_id))
        assert "default_model" in json.dumps(schemas.get("context_schema") or schemas.get("config_schema"))
    result = await client.runs.wait(
        None,
        "answers",
        input={"question": "Capital of France?", "reference": "Paris", "answer": "Paris"},  # a record of the data file
        context={"default_model": {"spec": "dry-run"}, "cache_path": None},
    )
    grade = result["grade"]
    assert grade["agent"] == "answer_judge"
    assert grade["status"] == "ok", grade["reason"]
    assert grade["value"]["score"] == 1  # the dry-run placeholder: the smallest valid score


GRAPHS = sorted(json.loads((ROOT / "langgraph.json").read_text())["graphs"])


@pytest.mark.parametrize("graph_id", GRAPHS)
async def test_studio_shows_an_input_form_for_the_graph(studio_server, graph_id):
    from langgraph_sdk import get_client

    client = get_client(url=studio_server)
    assistants = await client.assistants.search(graph_id=graph_id, limit=5)
    assert assistants, f"langgraph dev does not serve the graph {graph_id!r}"
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    properties = (schemas.get("input_schema") or {}).get("properties") or {}
    assert properties, (
        f"graph {graph_id!r} is served with an empty input schema: its state must be a "
        "typing_extensions.TypedDict for Studio to show an input form on Python 3.11"
    )
    assert (schemas.get("output_schema") or {}).get("properties"), f"graph {graph_id!r} has an empty output schema"
