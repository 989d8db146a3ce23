"""The five built-in probes, registered like any other (their figures: :mod:`.probes`)."""

from __future__ import annotations

from typing import Any

from dialeval.config import ModelSettings
from dialeval.trust import dialogue, perturb, probes
from dialeval.trust.candidates import family_of
from dialeval.trust.probe_registry import Measuring, Planning, register_probe
from dialeval.trust.runs import PlannedRun, every_unit, without_versus


def _position_runs(p: Planning) -> list[PlannedRun]:
    if not isinstance(p.candidate.model, ModelSettings):  # a composite's pairwise judge is its first member
        return []
    return [p.run("position", p.labelled, {**p.base, "versus": p.settings.options.get("versus") or str(p.padded)})]


@register_probe("position", probes.DESCRIPTIONS["position"], limit=probes.LIMITS["position"], title="position (flip rate)", runs=_position_runs)
def position(m: Measuring) -> dict[str, Any]:
    if "position" not in m.outcomes:
        return probes.not_measured("position", "an ensemble's or cascade's pairwise verdicts are its first member's")
    return probes.position([u for r in m.outcomes["position"].records for u in r.get("pairwise_units", [])], m.resamples)


@register_probe("verbosity", probes.DESCRIPTIONS["verbosity"], limit=probes.LIMITS["verbosity"], title="verbosity (score rise)",
                runs=lambda p: [p.run("padded", p.padded, p.base)])
def verbosity(m: Measuring) -> dict[str, Any]:
    return probes.verbosity(m.scores, m.scores_of("padded"), m.scales, m.resamples)


def unit_families(conversations: list[dict[str, Any]]) -> dict[str, str]:
    """unit -> family of the model that wrote its reply, where the data says: the
    conversation's ``metadata.model`` (every reply) or ``metadata.models`` (turn -> model)."""
    out: dict[str, str] = {}
    for record in conversations:
        meta = record.get("metadata") or {}
        turns = [i for i, m in enumerate(record["messages"], 1) if m["role"] == "assistant"]
        per_turn: dict[str, Any] = meta["models"] if isinstance(meta.get("models"), dict) else {}
        for turn in turns:
            model = per_turn.get(str(turn)) or meta.get("model")
            if isinstance(model, str) and model:
                out[f"{record['id']}/{turn}"] = family_of(model)
        if isinstance(meta.get("model"), str) and meta["model"]:
            out[str(record["id"])] = family_of(meta["model"])
    return out


@register_probe("self_preference", probes.DESCRIPTIONS["self_preference"], limit=probes.LIMITS["self_preference"], title="self-preference (gap)")
def self_preference(m: Measuring) -> dict[str, Any]:
    return probes.self_preference(m.scores, m.consensus, unit_families(m.inputs.conversations), m.candidate.family,
                                  m.scales, m.resamples)


def _needle_runs(p: Planning) -> list[PlannedRun]:
    if not p.needle_records:
        return []
    rubric = p.data / "needle_rubric.yaml"
    if not rubric.is_file() or rubric.read_text(encoding="utf-8") != perturb.NEEDLE_RUBRIC:
        rubric.write_text(perturb.NEEDLE_RUBRIC, encoding="utf-8")
    needle_data = dialogue.write_conversations(p.data / "needle.jsonl", p.needle_records)
    options = {**every_unit(without_versus(p.settings.options)), "rubric": str(rubric), "criteria": [perturb.NEEDLE_CRITERION],
               "facts": "off"}
    return [p.run("needle", needle_data, options)]


@register_probe("needle", probes.DESCRIPTIONS["needle"], limit=probes.LIMITS["needle"], title="needle (caught)", higher_is_bad=probes.HIGHER_IS_BAD["needle"], runs=_needle_runs)
def needle(m: Measuring) -> dict[str, Any]:
    if "needle" not in m.outcomes:
        return probes.not_measured("needle", f"no labelled conversation has {m.settings.needle_min_replies} assistant replies")
    return probes.needle({r["id"]: r.get("turn_units", []) for r in m.outcomes["needle"].records}, m.needles, m.resamples)


@register_probe("consistency", probes.DESCRIPTIONS["consistency"], limit=probes.LIMITS["consistency"], title="consistency (changed)",
                runs=lambda p: [p.run(f"repeat{k}", p.labelled, p.base, cached=False) for k in range(1, p.settings.repeats)])
def consistency(m: Measuring) -> dict[str, Any]:
    repeats = [m.scores_of(name) for name in m.outcomes if name.startswith("repeat")]
    return probes.consistency(m.scores, repeats, m.resamples)
