"""Recall and precision of the simulation audit on planted faults, per mode: code checks only,
``turn`` (code, then the model on every turn code did not flag) and ``conversation`` (code,
then one model call over the whole conversation).

Why: the default audit mode is the one that keeps recall at the fewest calls. The corpus
(benchmarks/data/planted_faults.yaml, written by planted_faults_corpus.py) holds 15 clean
conversations and 63 with one planted fault each (leaving the persona, a hidden fact said
unasked, an invented fact, an early stop, the bot's lines written), 37 blatant, 26 subtle.
A fault counts as caught when its turn is flagged (any rule). Precision is per rule the
findings name (a flagged turn is right when it is the planted fault's turn) and over all
flagged turns. The agents, prompts and schemas are the simulation's own.

    python benchmarks/audit_recall.py --model openai:gpt-4o-mini
    python benchmarks/audit_recall.py --model smollm2            # offline (a 135M model)
    python benchmarks/audit_recall.py --modes code               # no model at all
    python benchmarks/audit_recall.py --modes code --corpus OTHER.yaml
    python benchmarks/audit_recall.py --people ../shared/data/vdact/predictions/test-videochatgpt-100f.json
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from dialeval.config import ModelSettings, RunConfig
from dialeval.protocols.simulation.audit import audit_conversation
from dialeval.protocols.simulation.nodes import auditor, code_findings
from dialeval.protocols.simulation.scenario import Scenario

CORPUS = Path(__file__).with_name("data") / "planted_faults.yaml"


class Runtime:
    def __init__(self, context: Any) -> None:
        self.context = context


def records(item: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The graph's state for one corpus conversation: the scenario's fields and the turn records."""
    scenario = {"id": item["id"], **item["scenario"], "success": {"checks": [{"said": "(not checked here)"}]}}
    turns = [t if t["role"] == "user" else {"number": t["number"], "role": "assistant",
                                             "messages": [{"role": "assistant", "content": t["text"]}]} for t in item["turns"]]
    return scenario, turns


async def flags(item: dict[str, Any], mode: str, context: Any) -> tuple[dict[int, set[str]], int]:
    """The turns flagged in ``mode`` with the rules their findings name, and the model calls it took."""
    scenario_fields, turns = records(item)
    scenario = Scenario.model_validate(scenario_fields)
    users = [i for i, t in enumerate(turns) if t["role"] == "user"]
    flagged: dict[int, set[str]] = {}
    for i in users:
        found = code_findings(scenario, turns[: i + 1])
        if found:
            flagged[turns[i]["number"]] = {f.rule for f in found}
    calls = 0
    if mode == "turn":
        node = auditor()
        for i in users:
            if turns[i]["number"] in flagged:
                continue
            out = await node({**scenario_fields, "turns": turns[: i + 1]}, context)
            calls += 1
            rules = {f["rule"] for a in out.get("audits", []) for f in a["findings"]}
            if rules:
                flagged[turns[i]["number"]] = rules
    elif mode == "conversation" and not flagged:  # in the graph, a code flag ends the conversation first
        command = await audit_conversation({**scenario_fields, "turns": turns}, Runtime(context))
        calls += 1
        for f in (f for a in command.update["audits"] for f in a["findings"]):
            flagged.setdefault(f["turn"], set()).add(f["rule"])
    return flagged, calls


async def measure(mode: str, corpus: list[dict[str, Any]], context: Any) -> dict[str, Any]:
    """Recall per planted rule and form; precision per rule the findings name (a flagged turn
    is right when it is the planted fault's turn), and over all flagged turns."""
    started = time.perf_counter()
    results = await asyncio.gather(*(flags(item, mode, context) for item in corpus))
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    right: Counter[str] = Counter()
    named: Counter[str] = Counter()
    calls = clean_flagged = 0
    for item, (flagged, n) in zip(corpus, results):
        calls += n
        fault = item["fault"]
        clean_flagged += fault is None and bool(flagged)
        for turn, rules in flagged.items():
            hit = fault is not None and turn == fault["turn"]
            for rule in (*rules, "all"):
                named[rule] += 1
                right[rule] += hit
        if fault is not None:
            for key in (fault["rule"], fault["form"], "all"):
                total[key] += 1
                caught[key] += fault["turn"] in flagged
    return {"mode": mode, "recall": {k: (caught[k], total[k]) for k in total},
            "precision": {k: (right[k], named[k]) for k in named},
            "clean_flagged": (clean_flagged, sum(item["fault"] is None for item in corpus)),
            "calls": calls, "seconds": time.perf_counter() - started}


def ratio(pair: tuple[int, int]) -> str:
    return f"{pair[0]}/{pair[1]}" + (f" = {pair[0] / pair[1]:.0%}" if pair[1] else "")


def people(path: Path) -> None:
    """The scenario-free code checks (``one_turn``, ``persona``) on lines people wrote: the
    distinct questions of a VDAct predictions file. Every flag there is a false one."""
    import json

    from dialeval.agents.simulation_checks import TurnContext, one_turn, persona

    lines = sorted({row["question"] for row in json.loads(path.read_text(encoding="utf-8"))})
    ctx = TurnContext(scenario_text="Sam, a person asking about a video")
    flagged = [line for line in lines if one_turn(line, ctx) or persona(line, ctx)]
    print(f"people's lines: {len(flagged)} of {len(lines)} flagged by one_turn or persona" + "".join(f"\n  {f}" for f in flagged[:10]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--modes", default="code,turn,conversation")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="another corpus in the same format")
    parser.add_argument("--people", type=Path, help="a VDAct predictions file: check its questions instead (false flags)")
    args = parser.parse_args()
    if args.people:
        people(args.people)
        return 0
    corpus = yaml.safe_load(args.corpus.read_text(encoding="utf-8"))
    model = ModelSettings(spec=args.model, **({"base_url": args.base_url} if args.base_url else {}))
    for mode in args.modes.split(","):
        context = RunConfig(model=model, options={"audit": "turn" if mode == "code" else mode}, cache_path=None).context()
        row = asyncio.run(measure(mode, corpus, context))
        rec, prec = row["recall"], row["precision"]
        print(f"{mode}: recall {ratio(rec['all'])}, precision {ratio(prec.get('all', (0, 0)))}; clean conversations flagged "
              f"{ratio(row['clean_flagged'])}; model calls {row['calls']}; {row['seconds']:.0f} s")
        for key in sorted(k for k in rec if k not in ("all", "blatant", "subtle")) + ["blatant", "subtle"]:
            precision = f"precision {ratio(prec[key])}" if key in prec else "never flagged"
            print(f"  {key:14} recall {ratio(rec[key]):12}" + ("" if key in ("blatant", "subtle") else f"  {precision}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
