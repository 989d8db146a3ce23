"""What a VDAct run sends, records and scores, pinned: work on speed must leave all three as they were.

Each case runs VDAct's judges over the bundled demo dialogues against the OpenAI-compatible
stub, whose answers vary with the prompt (a ``So rating=`` ending, a JSON verdict, an
unreadable reply that earns a corrective retry), and reduces the run to three digests:
the request bodies the stub saw (a multiset: dialogues run concurrently), the rows of
``results.jsonl`` without their timings and ports, and ``metrics.json`` without its
provenance (dates, commit, endpoints). The digests were taken on the code before the
CPU-per-call work of issue 24; a change that alters a prompt, a record or a score changes
one of them, and then says which. The metrics digests were taken again once, when an
unknown cost became ``null`` in ``metrics.json`` (the stub is unpriced): that diff was
``cost_usd`` and ``cost_without_prompt_cache_usd`` 0.0 -> null and ``priced_cost_usd``
added, nothing else. The results and metrics digests were taken again in issue 51, when
call records gained ``deduplicated`` (single flight) and the headline figures their
intervals (``ci``, ``ci_scaled``): with those keys left out, every digest was the one
before, bodies unchanged. What issue 44 added for the gate (a row's ``unit_hash``; ``units_measured``, ``complete``,
``incomplete`` and ``unit_hashes`` in ``metrics.json``) is left out of the digests: new
fields, no prompt, record or score changed. The metrics digests of the two session-judge
cases were taken again when a figure whose units all scored the same got no interval
(``ci`` null, was a zero-width ``[x, x]``): nothing else in ``metrics.json`` changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo"

# case -> (options, digests of bodies, results, metrics)
PINNED: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "session judge, refined summaries": (
        {"judge": "session", "summary": "refined", "kg_dir": str(DEMO / "kg")},
        {"bodies": "b09517708fbfe652", "results": "3d00b16753d7fd21", "metrics": "2711bc8edfd1f9d1"},
    ),
    "session judge, no summary": (
        {"judge": "session", "summary": "none"},
        {"bodies": "351bc230ce34cc97", "results": "13da290c19f0851e", "metrics": "8f694e7d51f1dd50"},
    ),
    "turn judge, template summaries": (
        {"judge": "turn", "summary": "template", "kg_dir": str(DEMO / "kg")},
        {"bodies": "86434be146cc0722", "results": "d28ee349c7c52e48", "metrics": "e280f2fba2aaba79"},
    ),
}
SHARED_PINNED = {"bodies": "08df34b1ae1d1c07", "results": "42bb6f9b8b0adc99", "metrics": "e19068dce0f88a60"}  # its first 40 dialogues


def varied_judge(body: dict[str, Any]) -> str:
    """A judge whose answer depends on the whole prompt: any change to a prompt shows in the scores too."""
    last = body["messages"][-1]["content"]
    if isinstance(last, str) and "could not read your answer" in last:
        return '{"rationale": "Read again: it matches.", "rating": 3}'
    turn = re.search(r"Turn to grade \(turn (\d+)\)", prompt_of(body))
    kind = (len(prompt_of(body)) + int(turn.group(1) if turn else 0)) % 4
    return [
        "Close to the reference. So rating=2",
        '{"rationale": "Same action and object.", "rating": 3}',
        "I cannot tell from this.",  # no verdict: unparsed, then corrected
        "It contradicts the reference. So rating=1",
    ][kind]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _results(run_dir: Path) -> list[dict[str, Any]]:
    """results.jsonl rows in id order, without what differs between two identical runs."""
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("seconds", None)
        row.pop("unit_hash", None)  # issue 44's new field
        for call in row.get("usage", []):
            call.pop("latency_s", None)
            call.pop("endpoint", None)  # the stub's port
    return sorted(rows, key=lambda r: r["id"])


def _metrics(run_dir: Path) -> dict[str, Any]:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    metrics["run"].pop("provenance")  # dates, commit, the stub's port
    for added in ("complete", "incomplete", "unit_hashes", "units_measured"):  # issue 44's new fields
        metrics["run"].pop(added)
    return dict(metrics)


def recorded(data: Path, options: dict[str, Any], out: Path, limit: int | None = None) -> dict[str, str]:
    """Digests of what one run sent, recorded and scored."""
    with OpenAIStub(respond=varied_judge) as server:
        model = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=model, cache_path=None, output_dir=str(out), concurrency=8, options=options, limit=limit)
        result = run("vdact", data, config, progress=False)
    assert result.complete
    bodies = sorted(json.dumps(b, sort_keys=True) for b in server.requests)
    return {"bodies": _digest(bodies), "results": _digest(_results(Path(result.run_dir))),
            "metrics": _digest(_metrics(Path(result.run_dir)))}


def _with_an_unanswered_turn(tmp_path: Path) -> Path:
    """The demo dialogues with one turn the system left empty (scored without a call)."""
    records = json.loads((DEMO / "predictions" / "demo-bot.json").read_text())
    records[4]["gen_answer"] = ""
    path = tmp_path / "demo-bot.json"
    path.write_text(json.dumps(records))
    return path


@pytest.mark.figures  # the pinned metrics.json lists the run's figures
@pytest.mark.parametrize("case", sorted(PINNED))
def test_a_run_sends_records_and_scores_what_it_did_before(case, tmp_path):
    options, pinned = PINNED[case]
    got = recorded(_with_an_unanswered_turn(tmp_path), options, tmp_path / "runs")
    assert got == pinned


def test_the_varied_judge_exercises_every_kind_of_answer(tmp_path):
    recorded(_with_an_unanswered_turn(tmp_path), PINNED["session judge, no summary"][0], tmp_path / "runs")
    rows = [json.loads(line) for line in next((tmp_path / "runs").glob("*/results.jsonl")).read_text().splitlines()]
    calls = [call for r in rows for call in r["result"]["calls"]]
    statuses = {turn["status"] for r in rows for turn in r["result"]["turns"]}
    assert {r["status"] for r in rows} == {"ok"}
    assert {"ok", "no_answer"} <= statuses
    assert any(call["attempts"] == 2 for call in calls)  # an unreadable reply, then its correction
    assert {call["value"]["rating"] for call in calls if call["value"]} == {1, 2, 3}


@pytest.mark.figures  # the pinned metrics.json lists the run's figures
def test_the_released_file_sends_records_and_scores_what_it_did_before(shared_data, tmp_path):
    data = shared_data / "vdact" / "predictions" / "test-videollama2-8f.json"
    assert recorded(data, {"judge": "session"}, tmp_path / "runs", limit=40) == SHARED_PINNED
