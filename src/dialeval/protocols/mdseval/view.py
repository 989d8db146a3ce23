"""An MDSEval record as the viewer shows it: the dialogue (or its statements) with its images,
then each candidate summary with the judges' scores and faithfulness labels."""

from __future__ import annotations

from typing import Any

from dialeval.report.view_rows import ConversationView, Section, TurnRow, Verdict


def _image_source(image: Any) -> str | None:
    return image.local_path or image.image_path or image.image_url


def _dialogue_rows(item: Any) -> list[TurnRow]:
    images = [_image_source(i) for i in getattr(item, "images", None) or []]
    turns = getattr(item, "dialogue", None)
    if turns:
        return [TurnRow(number=n, role="user" if n % 2 else "assistant", text=t.utterance,
                        label=f"{t.speaker if t.speaker is not None else 'speaker'} · turn {n}",
                        images=[s for s in [images[t.shared_images] if t.shared_images is not None and 0 <= t.shared_images < len(images) else None] if s])
                for n, t in enumerate(turns, start=1)]
    statements = "\n".join(f"- {s}" for s in getattr(item, "dialogue_statements", None) or [])
    if not statements and not images:
        return []
    return [TurnRow(number=1, role="user", text=statements or "(no dialogue text in the data)", label="dialogue statements",
                    images=[s for s in images if s])]


def _summary_verdicts(record: dict[str, Any], index: int) -> list[Verdict]:
    cards = [Verdict(criterion=f"{s.get('evaluator')} {s.get('aspect')}", level="summary", status=str(s.get("status") or "error"),
                     verdict=s.get("score"), rationale=None, reason=None, raw=None)
             for s in record.get("scores") or [] if s.get("summary") == index]
    cards += [Verdict(criterion="faithfulness (summary)", level="summary", status=str(f.get("status") or "error"),
                      verdict=f.get("label"), rationale=None, reason=None, raw=None)
              for f in record.get("faithfulness") or [] if f.get("summary") == index and f.get("level") == "summary"]
    return cards


def conversation_view(record: dict[str, Any], item: Any = None) -> ConversationView | None:
    """Dialogue and summaries come from the data item; scores from the record."""
    if not isinstance(record.get("scores"), list):
        return None
    summaries = getattr(item, "summary_list", None) or []
    count = max(len(summaries), int(record.get("summaries") or 0))
    rows = [TurnRow(number=i + 1, role="assistant",
                    text=summaries[i].summary if i < len(summaries) else "(summary text not in the data file found)",
                    label=f"summary {i}" + (f" · {summaries[i].model_anonymous}" if i < len(summaries) and summaries[i].model_anonymous else ""),
                    verdicts=_summary_verdicts(record, i))
            for i in range(count)]
    whole = [Verdict(criterion=f"pairwise {p.get('aspect')}: {p.get('first')} vs {p.get('second')}" + (" (swapped)" if p.get("swapped") else ""),
                     level="pair", status=str(p.get("status") or "error"), verdict=p.get("pick"), rationale=None, reason=None, raw=None)
             for p in record.get("preferences") or []]
    return ConversationView(system="", turns=_dialogue_rows(item), whole=whole, sections=[Section("Candidate summaries", rows)])
