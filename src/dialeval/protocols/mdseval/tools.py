"""Model-free MDSEval tools behind ``dialeval metrics mdseval-<tool> --data FILE``.

- ``agreement``: inter-annotator agreement and annotator statistics, one row per aspect;
- ``meki``: MEKI per dialogue, text variant (image statements vs dialogue statements,
  bundled MiniLM embeddings) or CLIP through open_clip with user-supplied weights;
- ``select``: the k most diverse generation setups of a candidate pool (JSONL rows
  ``{"dialogue_id", "setup", "summary"}``, e.g. ``candidates.jsonl`` of a run with ``setups``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

from dialeval.data.io import DataError, read_records
from dialeval.protocols.mdseval.data import ASPECTS, SHORT, MdsDialogue, load_mdseval
from dialeval.protocols.mdseval.human import VoteRule, aspect_statistics, faithfulness_statistics, majority_label, summary_faithfulness
from dialeval.protocols.mdseval.meki import LAMBDA, meki, select_diverse, unit
from dialeval.report.tables import cell, markdown_table, num, pct, row
from dialeval.report.tables import rule as rule_line  # `rule` here is a vote rule

EKI_HEAD = (cell("EKI(I|T;S)"), cell("EKI(T|I;S)"), "MEKI")  # the paper's `|` escaped: it split the columns
EKI_KEYS = ("eki_image", "eki_text", "meki")


class MekiUnavailable(RuntimeError):
    """The CLIP variant cannot run here (open_clip missing, or no weights or images)."""


RULE_TEXT = {"tiebreak": "majority, a fourth re-annotation vote breaking three-way splits", "majority": "more than half of the votes"}


def agreement_table(items: Sequence[MdsDialogue], rule: VoteRule = "tiebreak") -> str:
    """Inter-annotator agreement (adjacent for scores, exact for faithfulness) and statistics;
    ``rule`` reads the sentence labels (see :func:`majority_label`)."""
    lines = [
        f"Inter-annotator agreement on {len(items)} dialogues, {sum(len(i.summary_list) for i in items)} summaries.",
        "Scores: adjacent agreement = share of annotator pairs (within a summary) differing by at most 1.",
        "Faithfulness: exact agreement = share of annotator pairs (within a sentence) giving the same label.",
        "",
        row(["aspect", "units", "ratings", "annotators per unit (2 / 3 / other)", "mean", "std", "adjacent agreement (%)",
             "exact agreement (%)", "pairs"]),
        rule_line("lrrlrrrrr"),
    ]
    for aspect in ASPECTS:
        lists = [h.scores(aspect) for item in items for h in item.human_annotations if h.scores(aspect)]
        s = aspect_statistics(lists)
        hist = s["annotators_histogram"]
        other = sum(v for k, v in hist.items() if k not in (2, 3))
        lines.append(row([
            f"{SHORT[aspect]} ({aspect})", s["summaries"], s["ratings"],
            f"{num(s['annotators_per_summary'])} ({hist.get(2, 0)} / {hist.get(3, 0)} / {other})", num(s["mean"]), num(s["std"]),
            pct(s["adjacent_agreement"], sign=""), pct(s["exact_agreement"], sign=""), s["pairs"],
        ]))
    votes = [v for item in items for h in item.human_annotations for v in h.faithfulness_sentence.values()]
    f = faithfulness_statistics(votes, rule)
    hist = f["annotators_histogram"]
    other = sum(v for k, v in hist.items() if k not in (2, 3))
    lines.append(row([
        "FAI (faithfulness, sentences)", f["sentences"], f["ratings"],
        f"{num(f['annotators_per_summary'])} ({hist.get(2, 0)} / {hist.get(3, 0)} / {other})", "-", "-", "-",
        pct(f["exact_agreement"], sign=""), f["pairs"],
    ]))
    summary_labels = Counter(
        summary_faithfulness([majority_label(h.faithfulness_sentence.get(str(i + 1), []), rule) for i in range(len(s.summary_sentence_lvl))])
        for item in items
        for s, h in zip(item.summary_list, item.human_annotations)
    )
    consistency = Counter(v for item in items for h in item.human_annotations for v in h.consistency)
    lines += [
        "",
        f"Faithfulness votes: {f['distribution']}. Sentences where every annotator agrees: {pct(f['unanimous'])}.",
        f"Sentence labels ({RULE_TEXT[rule]}): {f['majority_distribution']}; without a label: {f['no_majority']} sentences (left out of scoring)"
        + (f"; decided by the re-annotation vote: {f['tie_broken']}." if rule == "tiebreak" else "."),
        "Summary-level labels (Appendix F; None = undetermined because a sentence has no label): "
        + ", ".join(f"{k}: {v}" for k, v in sorted(summary_labels.items(), key=lambda kv: str(kv[0]))),
    ]
    if consistency:
        lines.append(f"Image-dialogue consistency flags given by annotators (1 consistent, 0 not): {dict(sorted(consistency.items()))}.")
    return "\n".join(lines)


def text_embedder() -> Callable[[list[str]], list[list[float]]]:
    from dialeval.memory.embeddings import embed

    return embed


def clip_embedders(model_name: str, weights: str) -> tuple[Callable[[list[str]], list[list[float]]], Callable[[list[str]], list[list[float]]]]:
    """(text, image-file) embedding functions of an open_clip model with local weights."""
    try:
        import open_clip  # type: ignore[import-not-found]
        import torch
        from PIL import Image
    except ImportError as err:
        raise MekiUnavailable(f"open_clip is not installed ({err}); install open_clip_torch to use the CLIP variant") from None
    if not Path(weights).is_file():
        raise MekiUnavailable(f"CLIP weights not found: {weights}")
    model, _, preprocess = open_clip.create_model_and_transforms(model_name, pretrained=weights)
    model.eval()
    tokenizer = open_clip.get_tokenizer(model_name)

    def texts(values: list[str]) -> list[list[float]]:
        with torch.no_grad():
            f = model.encode_text(tokenizer(values))
        return (f / f.norm(dim=-1, keepdim=True)).tolist()

    def images(paths: list[str]) -> list[list[float]]:
        with torch.no_grad():
            f = model.encode_image(torch.stack([preprocess(Image.open(p)) for p in paths]))
        return (f / f.norm(dim=-1, keepdim=True)).tolist()

    return texts, images


def meki_rows(
    items: Sequence[MdsDialogue], image_vectors: Sequence[Sequence[float]], text_vectors: Sequence[Sequence[float]],
    summary_vectors: Sequence[Sequence[float]], lam: float = LAMBDA, signed: bool = False,
) -> list[dict[str, Any]]:
    return [
        {"dialogue_id": item.dialogue_id, **meki(unit(i), unit(t), unit(s), lam, signed=signed)}
        for item, i, t, s in zip(items, image_vectors, text_vectors, summary_vectors)
    ]


def meki_report(items: Sequence[MdsDialogue], options: dict[str, Any]) -> str:
    variant = options.get("variant", "text")
    lam = float(options.get("lambda", LAMBDA))
    signed = bool(options.get("signed", False))
    summaries = [item.pseudo_summary for item in items]
    if variant == "clip":
        try:
            texts, images = clip_embedders(str(options.get("clip_model", "ViT-H-14-378-quickgelu")), str(options.get("clip_weights", "")))
        except MekiUnavailable as err:
            return f"MEKI (CLIP variant): unavailable - {err}."
        missing = [item.dialogue_id for item in items if not item.has_images]
        if missing:
            return f"MEKI (CLIP variant): unavailable - no image files for {len(missing)} dialogues (give --option image_dir=...)."
        from dialeval.protocols.mdseval.common import dialogue_text

        import numpy as np

        # several images: the mean of their (unit) embeddings stands for the image side
        image_vectors = [np.mean(images([im.local_path for im in item.images if im.local_path]), axis=0) for item in items]
        text_vectors = texts([dialogue_text(item) for item in items])
        source = "CLIP image vs dialogue text"
    else:
        embed = text_embedder()
        image_vectors = embed(["\n".join(s for im in item.images for s in im.image_statements) for item in items])
        text_vectors = embed(["\n".join(item.dialogue_statements) for item in items])
        source = "text variant: image statements vs dialogue statements (all-MiniLM-L6-v2)"
        texts = embed
    rows = meki_rows(items, image_vectors, text_vectors, texts(summaries), lam, signed)
    from statistics import fmean

    lines = [
        f"MEKI ({source}; lambda = {lam}{', signed as in the released code' if signed else ''}) over {len(rows)} dialogues:",
        "",
        *markdown_table([None, *EKI_HEAD], [["mean", *(f"{fmean(r[k] for r in rows):.4f}" for k in EKI_KEYS)]], "lrrr"),
        "",
        row(["dialogue", *EKI_HEAD]),
        rule_line("lrrr"),
    ]
    top = int(options.get("top", 10))
    for r in sorted(rows, key=lambda r: -r["meki"])[:top]:
        lines.append(row([cell(r["dialogue_id"]), *(f"{r[k]:.4f}" for k in EKI_KEYS)]))
    return "\n".join(lines)


def pool_embeddings(path: Path, embed: Callable[[list[str]], list[list[float]]]) -> dict[str, list[list[float]]]:
    """Summary embeddings per setup, for the dialogues every setup has a summary of."""
    by_setup: dict[str, dict[str, str]] = defaultdict(dict)
    for index, record in enumerate(read_records(path)):
        if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in ("dialogue_id", "setup", "summary")):
            raise DataError(path, "each row needs string fields dialogue_id, setup and summary", record=index)
        by_setup[record["setup"]][record["dialogue_id"]] = record["summary"]
    common = sorted(set.intersection(*(set(d) for d in by_setup.values()))) if by_setup else []
    if not common:
        raise DataError(path, "no dialogue has a summary from every setup")
    return {setup: embed([d[i] for i in common]) for setup, d in by_setup.items()}


def select_report(path: Path, options: dict[str, Any]) -> str:
    k = int(options.get("k", 5))
    embeddings = pool_embeddings(path, text_embedder())
    chosen, distance, tried = select_diverse(embeddings, k)
    n = len(next(iter(embeddings.values())))
    lines = [
        f"Diverse setups: the {k} of {len(embeddings)} setups with the largest total pairwise distance"
        f" (Euclidean, all-MiniLM-L6-v2 embeddings, summed over {n} dialogues; {tried} combinations tried):",
        "",
    ]
    lines += [f"{i}. {cell(name)}" for i, name in enumerate(chosen, start=1)]
    lines += ["", f"Total distance D = {distance:.3f}."]
    return "\n".join(lines)


def run_tool(paths: list[Path], options: dict[str, Any]) -> str:
    tool = options.pop("tool", None)
    if tool == "agreement":
        rule = options.get("faithfulness_votes", "tiebreak")
        if rule not in RULE_TEXT:
            raise DataError(paths[0] if paths else "-", f"faithfulness_votes must be one of {sorted(RULE_TEXT)}, not {rule!r}")
        return "\n\n".join(agreement_table(load_mdseval(p), rule) for p in paths)
    if tool == "meki":
        return meki_report(load_mdseval(paths[0], images=options.get("image_dir")), options)
    if tool == "select":
        return select_report(paths[0], options)
    raise DataError(paths[0] if paths else "-", f"unknown mdseval tool {tool!r}; use mdseval-agreement, mdseval-meki or mdseval-select")
