"""Scores back where the logs came from: a dialogue run's verdicts as the records each
source system ingests, keyed by the ids its importer kept (``metadata.source``).

- LangSmith: feedback records (``langsmith.schemas.FeedbackCreate``) on the run that
  produced the judged turn; a conversation's verdict goes on its last trace's root run.
- Langfuse: score records (the public API's ``POST /api/public/scores`` body, the SDK's
  ``CreateScoreRequest``) on the generation (observation) that produced the turn, with its
  trace; a conversation's verdict goes on the session (or the last trace when there is none).
- Every format: one row per unit (conversation, turn, criterion) for CSV or parquet; a
  simulation trial adds its outcome and its model-free checks as units.

Only read verdicts (a score) are exported as scores; the others are counted, never sent
as a default value. Pure functions over result records.
"""

from __future__ import annotations

import uuid
from typing import Any, Iterator

NAMESPACE = uuid.UUID("6f1c1f36-3a5e-4f43-9a55-2d0c3b1e9d40")  # feedback ids derive from it: a re-export replaces, not doubles


SCORED_OUTCOMES = {"success": 1.0, "failure": 0.0, "bot_failure": 0.0}  # a simulation trial's outcome as a score


def _outcomes(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A simulation trial's outcome and its model-free checks, as conversation-level units
    (``simulator_failure`` / ``judge_failure`` are no verdict on the bot: no score)."""
    if "outcome" not in record:
        return []
    outcome = record.get("outcome")
    out = [{"criterion": "outcome", "level": "conversation", "status": "ok" if outcome in SCORED_OUTCOMES else str(outcome),
            "verdict": outcome, "score": SCORED_OUTCOMES.get(str(outcome)), "rationale": record.get("stop_reason")}]
    for check in record.get("checks") or []:
        passed = check.get("passed")
        out.append({"criterion": f"check: {check.get('check')}", "level": "conversation", "status": "ok",
                    "verdict": "passed" if passed else "failed", "score": 1.0 if passed else 0.0, "rationale": None})
    return out


def units(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """One row per judged unit of a dialogue or simulation run (a trial's outcome and checks
    too), with the source ids of its conversation and turn."""
    for record in records:
        source = (record.get("metadata") or {}).get("source") or {}
        turn_ids = source.get("turn_ids") or {}
        conversation_ids = source.get("conversation_ids") or []
        traces = source.get("call_traces") or source.get("observation_traces") or {}
        for unit in [*record.get("turn_units", []), *record.get("conversation_units", []), *_outcomes(record)]:
            turn = unit.get("turn")
            yield {
                "conversation": record["id"],
                "turn": turn,
                "criterion": unit["criterion"],
                "level": "turn" if turn is not None else unit.get("level", "conversation"),
                "status": unit["status"],
                "verdict": unit.get("verdict"),
                "score": unit.get("score"),
                "rationale": unit.get("rationale"),
                "source_format": source.get("format"),
                "source_turn_id": turn_ids.get(str(turn)) if turn is not None else None,
                "source_conversation_id": conversation_ids[-1] if conversation_ids else None,
                "source_session_id": source.get("session_id"),
                "source_trace_id": traces.get(turn_ids.get(str(turn))) if turn is not None else (conversation_ids[-1] if conversation_ids else None),
            }


def _target(row: dict[str, Any]) -> str | None:
    return row["source_turn_id"] if row["turn"] is not None else row["source_conversation_id"]


def langsmith_feedback(records: list[dict[str, Any]], run_name: str) -> tuple[list[dict[str, Any]], int]:
    """LangSmith feedback records and how many units had no score or no run id to key them."""
    from langsmith.schemas import FeedbackCreate, FeedbackSourceBase

    out, skipped = [], 0
    for row in units(records):
        target = _target(row)
        if row["score"] is None or target is None or row["source_format"] != "langsmith":
            skipped += 1
            continue
        run_id = uuid.UUID(target)
        trace = row["source_trace_id"]
        feedback = FeedbackCreate(
            id=uuid.uuid5(NAMESPACE, f"{run_name}/{run_id}/{row['criterion']}"),
            # a label verdict goes as its word alone: its rank (yes=2, no=1) would be averaged as a number there
            run_id=run_id, trace_id=uuid.UUID(trace) if trace else None, key=row["criterion"],
            score=None if isinstance(row["verdict"], str) else float(row["score"]),
            value=row["verdict"] if isinstance(row["verdict"], str) else None, comment=row["rationale"],
            feedback_source=FeedbackSourceBase(type="api", metadata={"dialeval_run": run_name, "conversation": row["conversation"], "turn": row["turn"]}),
        )
        dumped = feedback.model_dump(mode="json", exclude_none=True)
        dumped.setdefault("trace_id", None)  # a field FeedbackCreate requires (None when the trace is unknown)
        out.append(dumped)
    return out, skipped


def langfuse_scores(records: list[dict[str, Any]], run_name: str) -> tuple[list[dict[str, Any]], int]:
    """Langfuse score records (create-score API bodies) and how many units could not be keyed or had no score."""
    out, skipped = [], 0
    for row in units(records):
        if row["score"] is None or row["source_format"] != "langfuse":
            skipped += 1
            continue
        label = isinstance(row["verdict"], str)
        body: dict[str, Any] = {
            "name": row["criterion"],
            "value": row["verdict"] if label else float(row["score"]),
            "dataType": "CATEGORICAL" if label else "NUMERIC",
            "comment": row["rationale"],
            "metadata": {"dialeval_run": run_name, "conversation": row["conversation"], "turn": row["turn"]},
        }
        if row["turn"] is not None and row["source_turn_id"] and row["source_trace_id"]:
            body |= {"traceId": row["source_trace_id"], "observationId": row["source_turn_id"]}
        elif row["turn"] is None and row["source_session_id"]:
            body["sessionId"] = row["source_session_id"]
        elif row["turn"] is None and row["source_conversation_id"]:
            body["traceId"] = row["source_conversation_id"]
        else:
            skipped += 1
            continue
        key = body.get("observationId") or body.get("sessionId") or body.get("traceId")
        body["id"] = str(uuid.uuid5(NAMESPACE, f"{run_name}/{key}/{row['criterion']}"))
        out.append(body)
    return out, skipped


def table(records: list[dict[str, Any]]) -> Any:
    """Every unit as a pandas DataFrame (for CSV or parquet)."""
    import pandas as pd

    frame = pd.DataFrame(list(units(records)), dtype=object)  # a verdict stays as read (4, not 4.0; a label)
    if len(frame):
        frame["turn"] = frame["turn"].astype("Int64")  # whole numbers, blank for conversation-level units
        frame["score"] = frame["score"].astype("float64")
    return frame
