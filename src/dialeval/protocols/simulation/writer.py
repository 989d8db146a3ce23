"""`dialeval scenarios --from policy.md`: a scenario suite written from a document, to review.

Why: writing scenarios by hand is what keeps teams from simulating at all (DeepEval
generates them from documents). The model writes them in batches, each batch told the
difficulty to write (easy, medium, hard in turn, so the suite crosses personas, goals and
difficulty) and the goals already written; every scenario is checked by the suite's own
model (a bad one is dropped with its reason), near-duplicates are dropped, and the
suite is written with a sidecar that records the model, the document's hash, every
prompt sent and every raw answer. Nothing here runs a bot: the suite is for a person to
review before it is used.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from dialeval.agents.judge import Judge
from dialeval.config import RunConfig
from dialeval.errors import ConfigError, DataError
from dialeval.protocols.simulation.scenario import Scenario

DIFFICULTIES = ("easy", "medium", "hard")
BATCH = 5  # scenarios asked for in one call
DOCUMENT_CHARS = 60_000  # the document as the prompt carries it (a longer one is cut, and the sidecar says so)
SIMILAR = 0.8  # persona+goal texts this close (difflib ratio) are one scenario written twice


class WrittenCheck(BaseModel):
    kind: Literal["said", "pattern", "tool", "not_tool"]
    value: str = Field(min_length=1)


class WrittenCriterion(BaseModel):
    name: str = Field(min_length=1, max_length=60)
    description: str = Field(min_length=1)


class WrittenScenario(BaseModel):
    persona: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    hidden_facts: dict[str, str] = Field(default_factory=dict)
    opening: str | None = None
    difficulty: Literal["easy", "medium", "hard"]
    checks: list[WrittenCheck] = Field(default_factory=list)
    criteria: list[WrittenCriterion] = Field(default_factory=list)


class WrittenSuite(BaseModel):
    """The scenarios of one batch."""

    scenarios: list[WrittenScenario] = Field(min_length=1)


WRITER = Judge("simulation.scenario_writer", "scenario_writer", "simulation", "simulation/scenario_writer", WrittenSuite)


def writer_spec(config: RunConfig) -> str:
    """The model that writes (the ``scenario_writer`` role's, else the default)."""
    return config.context().model_for("scenario_writer").spec


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "scenario"


def as_scenario(written: WrittenScenario, taken: set[str]) -> Scenario:
    """A written scenario in the suite's own form (checked by its model), with an id not yet taken."""
    base = slug(written.goal)
    ident = next(f"{base}-{n}" if n else base for n in range(len(taken) + 2) if (f"{base}-{n}" if n else base) not in taken)
    criteria = [{"name": re.sub(r"[^A-Za-z0-9_]+", "_", c.name).strip("_") or "criterion", "description": c.description}
                for c in written.criteria]
    return Scenario.model_validate({
        "id": ident, "persona": written.persona, "goal": written.goal, "hidden_facts": written.hidden_facts,
        **({"opening": written.opening} if written.opening else {}),
        "success": {"criteria": criteria, "checks": [{c.kind: c.value} for c in written.checks]},
        "metadata": {"difficulty": written.difficulty, "generated": True},
    })


def duplicate_of(scenario: Scenario, kept: list[Scenario]) -> str | None:
    """The id of a kept scenario this one repeats (persona and goal nearly the same text), or None."""
    text = f"{scenario.persona} | {scenario.goal}".lower()
    for other in kept:
        if difflib.SequenceMatcher(None, text, f"{other.persona} | {other.goal}".lower()).ratio() >= SIMILAR:
            return other.id
    return None


async def write_scenarios(document: str, n: int, config: RunConfig) -> tuple[list[Scenario], dict[str, Any]]:
    """Up to ``n`` scenarios from ``document``, and the record of how they were written."""
    context = config.context()
    ctx = WRITER.context(context)
    kept: list[Scenario] = []
    record: dict[str, Any] = {"calls": [], "dropped": []}
    batch = 0
    while len(kept) < n and batch < 2 * (-(-n // BATCH)) + 1:  # a model that keeps repeating itself stops in time
        difficulty = DIFFICULTIES[batch % len(DIFFICULTIES)]
        count = min(BATCH, n - len(kept))
        already = "\n".join(f"- {s.goal} ({s.persona})" for s in kept) or "(none yet)"
        messages = ctx.template.render(document=document[:DOCUMENT_CHARS], already=already, difficulty=difficulty, count=count)
        answer = await WRITER.ask(ctx, messages)
        record["calls"].append({"batch": batch + 1, "difficulty": difficulty, "prompt": [{"role": m.type, "content": m.content} for m in messages],
                                "status": answer.call.status, "raw": answer.call.raw, "reason": answer.call.reason})
        batch += 1
        if answer.call.status == "error":
            raise ConfigError(f"scenario writer: the call to {writer_spec(config)} failed: {answer.call.reason}")
        for written in answer.value.scenarios if answer.value else []:
            try:
                scenario = as_scenario(written, {s.id for s in kept})
            except ValidationError as err:
                record["dropped"].append({"goal": written.goal, "why": f"not a valid scenario: {err.errors()[0]['msg']}"})
                continue
            twin = duplicate_of(scenario, kept)
            if twin:
                record["dropped"].append({"goal": written.goal, "why": f"repeats {twin}"})
            elif len(kept) < n:
                kept.append(scenario)
    return kept, record


def write_suite(source: Path, out: Path, n: int, config: RunConfig) -> dict[str, Any]:
    """Write ``out`` (YAML) and ``out`` + ``.generation.json``; the summary printed."""
    import yaml

    if not source.is_file():
        raise DataError(source, "file not found")
    document = source.read_text(encoding="utf-8")
    if not document.strip():
        raise DataError(source, "the document is empty")
    scenarios, record = asyncio.run(write_scenarios(document, n, config))
    header = (f"# {len(scenarios)} scenarios written by {writer_spec(config)} from {source.name}: review them before use\n"
              f"# (how they were written, every prompt and raw answer: {out.name}.generation.json)\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + yaml.safe_dump([s.model_dump(exclude_defaults=True, by_alias=True) for s in scenarios],
                                           sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    sidecar = {"source": str(source), "source_sha256": hashlib.sha256(document.encode()).hexdigest(),
               "document_cut": len(document) > DOCUMENT_CHARS, "model": writer_spec(config), "asked": n, "written": len(scenarios),
               **record}
    Path(f"{out}.generation.json").write_text(json.dumps(sidecar, ensure_ascii=False, indent=1), encoding="utf-8")
    return {"written": len(scenarios), "dropped": len(record["dropped"]), "calls": len(record["calls"]), "out": str(out)}
