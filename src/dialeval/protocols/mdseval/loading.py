"""MDSEval items: the dialogues read for a run, the graph's input, the human side of each and the record kept of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.benchmarks import RunFacts
from dialeval.config import parse_options
from dialeval.protocols.mdseval.data import ASPECTS, MdsDialogue, load_mdseval
from dialeval.protocols.mdseval.human import human_mean, majority_label, summary_faithfulness


def _options(options: dict[str, Any]):
    from dialeval.protocols.mdseval.common import MdsevalOptions

    return parse_options(MdsevalOptions, options, "mdseval")


def load(path: Path, options: dict[str, Any]) -> list[MdsDialogue]:
    opts = _options(options)
    items = load_mdseval(path, dialogues=opts.dialogues, images=opts.image_dir)
    for item in items:
        assert item.__pydantic_extra__ is not None  # MdsDialogue keeps extra fields
        item.__pydantic_extra__["file_dialogues"] = len(items)  # for the whole-file cost estimate
        item.votes_rule = opts.faithfulness_votes
    return items


def to_input(item: MdsDialogue, options: dict[str, Any]) -> dict[str, Any]:
    return {"record": item.model_dump(by_alias=True, exclude_none=True)}


def human_side(item: MdsDialogue) -> dict[str, Any]:
    """The paper's aggregation: means per aspect, a label per sentence (the item's vote
    rule, see :func:`majority_label`), Appendix F per summary."""
    means = {a: [human_mean(h.scores(a)) for h in item.human_annotations] for a in ASPECTS}
    ratings = {a: [h.scores(a) for h in item.human_annotations] for a in ASPECTS}
    sentences = [
        [majority_label(h.faithfulness_sentence.get(str(i + 1), []), item.votes_rule) for i in range(len(s.summary_sentence_lvl))]
        for s, h in zip(item.summary_list, item.human_annotations)
    ]
    return {
        "means": means,
        "ratings": ratings,
        "sentence_labels": sentences,
        "summary_labels": [summary_faithfulness(labels) for labels in sentences],
    }


def to_record(item: MdsDialogue, state: dict[str, Any]) -> dict[str, Any]:
    from dialeval.models.usage import current_ledger

    ledger = current_ledger.get()
    rows = {k: state.get(k) or [] for k in ("scores", "preferences", "faithfulness", "captions", "candidates")}
    calls = [r["call"] for k in rows for r in rows[k] if r.get("call")]
    inputs = sorted({r["input"] for k in ("scores", "preferences", "faithfulness") for r in rows[k] if r.get("input")})
    return {
        "id": item.id,
        "summaries": len(item.summary_list),
        "judge_input": inputs,
        "human": human_side(item) if item.human_annotations else None,
        **{k: [{x: v for x, v in r.items() if x != "call"} | {"status": (r.get("call") or {}).get("status", "skipped")} for r in rows[k]] for k in rows},
        "usage": ledger.totals() if ledger is not None else {},
        "file_dialogues": (item.model_extra or {}).get("file_dialogues", 1),
        "calls": calls,
    }


def describe(run: RunFacts) -> str:
    """The judges set against the human ratings (and the summarizer, when it wrote summaries)."""
    evaluators = run.options.get("evaluators") or ["pointwise", "pairwise", "faithfulness"]
    line = (f"the judges ({', '.join(f'{e}: `{run.model(e)}`' for e in evaluators)}), "
            f"set against the human ratings of the summaries in `{run.data}`")
    if run.options.get("setups"):
        line += f"; new summaries written by `{run.model('summarizer')}` are judged too"
    return line
