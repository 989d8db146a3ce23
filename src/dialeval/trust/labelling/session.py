"""One annotator's labelling session: the conversations to label, what is done, saving, agreement.

Labels are written as ``dialeval trust --labels`` reads them: one JSON line per label with
``id``, ``turn`` (turn-level criteria), ``criterion``, ``score`` and ``annotator``; a unit
the annotator marks not applicable is ``"N/A (<reason>)"``. Saving a conversation appends
its lines; saving it again replaces that annotator's earlier lines for it (the file is
rewritten whole, atomically), so a correction never leaves two labels of one unit.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.errors import ConfigError
from dialeval.trust import dialogue


@dataclass
class Session:
    """``dialeval label``'s state: data, rubric, who labels, where labels go."""

    data: Path
    rubric_ref: str
    annotator: str
    out: Path
    sample: int | None = None
    seed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not self.annotator.strip():
            raise ConfigError("dialeval label: --annotator must name someone")
        self.rubric = dialogue.load_rubric(self.rubric_ref)
        convs = dialogue.load_conversations(self.data)
        if self.sample is not None and self.sample < len(convs):
            keep = set(random.Random(self.seed).sample(range(len(convs)), self.sample))
            convs = [c for i, c in enumerate(convs) if i in keep]
        self.conversations = {c.id: c for c in convs}
        self.criteria = [c for c in self.rubric.criteria if c.match is None]
        if not self.criteria:
            raise ConfigError(f"dialeval label: the rubric {self.rubric_ref} has no criterion a person can label")

    # what the page shows

    def criteria_view(self) -> list[dict[str, Any]]:
        out = []
        for c in self.criteria:
            scale = c.scale
            values: list[Any] = list(range(scale.low, scale.high + 1)) if scale.numeric else list(scale.labels)
            out.append({"name": c.name, "level": c.level, "description": c.description.strip(), "values": values})
        return out

    def conversation_view(self, conv: Any) -> dict[str, Any]:
        return {"id": conv.id, "turns": [{"number": t.number, "role": t.role, "text": t.text} for t in conv.turns],
                "summary": conv.summary}

    def rows(self) -> list[dict[str, Any]]:
        """Every line of the labels file (all annotators), in order."""
        if not self.out.is_file():
            return []
        return [json.loads(line) for line in self.out.read_text(encoding="utf-8").splitlines() if line.strip()]

    def mine(self) -> dict[str, dict[str, Any]]:
        """conversation -> {"<turn>/<criterion>" or "/<criterion>": score} of this annotator."""
        out: dict[str, dict[str, Any]] = {}
        for row in self.rows():
            if str(row.get("annotator")) == self.annotator and str(row.get("id")) in self.conversations:
                key = f"{row.get('turn') or ''}/{row['criterion']}"
                out.setdefault(str(row["id"]), {})[key] = row["score"]
        return out

    def expected(self, conv: Any) -> list[tuple[int | None, str]]:
        """The units of ``conv`` a complete labelling has: each assistant turn on each turn-level
        criterion, the conversation on the others (a summary criterion only with a summary)."""
        out: list[tuple[int | None, str]] = []
        for c in self.criteria:
            if c.level == "turn":
                out += [(t.number, c.name) for t in conv.assistant_turns()]
            elif c.level != "summary" or conv.summary:
                out.append((None, c.name))
        return out

    def state(self) -> dict[str, Any]:
        mine = self.mine()
        done = [cid for cid, conv in self.conversations.items()
                if all(f"{t or ''}/{c}" in mine.get(cid, {}) for t, c in self.expected(conv))]
        return {"annotator": self.annotator, "criteria": self.criteria_view(), "labels_file": str(self.out),
                "conversations": [self.conversation_view(c) for c in self.conversations.values()],
                "labels": mine, "done": done, "agreement": self.agreement()}

    # saving

    def check(self, conv_id: str, labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The posted labels of one conversation as file rows; a label off the rubric stops with why."""
        conv = self.conversations.get(conv_id)
        if conv is None:
            raise ValueError(f"no conversation {conv_id!r} in this session")
        wanted = set(self.expected(conv))
        by_name = {c.name: c for c in self.criteria}
        rows = []
        for label in labels:
            turn, name, score = label.get("turn"), label.get("criterion"), label.get("score")
            if (turn, name) not in wanted:
                raise ValueError(f"{conv_id}: turn {turn} and criterion {name!r} are not a unit to label here")
            if isinstance(score, str) and score.upper().startswith("N/A"):
                reason = str(label.get("reason") or "").strip().replace(")", "]").replace("(", "[")
                if not reason:
                    raise ValueError(f"{conv_id}: N/A on {name} needs a reason")
                score = f"N/A ({reason})"
            elif by_name[str(name)].scale.read(score) is None:
                raise ValueError(f"{conv_id}: {score!r} is not on {name}'s scale ({by_name[str(name)].scale.describe()})")
            row: dict[str, Any] = {"id": conv_id, **({"turn": turn} if turn is not None else {}), "criterion": name,
                                   "score": score, "annotator": self.annotator}
            rows.append(row)
        return rows

    def save(self, conv_id: str, labels: list[dict[str, Any]]) -> int:
        """Write one conversation's labels (replacing this annotator's earlier ones for it)."""
        rows = self.check(conv_id, labels)
        with self._lock:
            old = self.rows()
            kept = [r for r in old if not (str(r.get("id")) == conv_id and str(r.get("annotator")) == self.annotator)]
            if len(kept) == len(old):  # nothing to replace: append, as a person would expect of a log
                with self.out.open("a", encoding="utf-8") as f:
                    f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
                return len(rows)
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept + rows)
            fd, tmp = tempfile.mkstemp(dir=self.out.parent, prefix=".labels-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.out)
        return len(rows)

    # the human ceiling so far

    def agreement(self) -> dict[str, Any] | None:
        """Per criterion, among the annotators of this file: units labelled by two or more,
        exact agreement of their pairs and Krippendorff's alpha (ordinal); ``None`` until
        two annotators share a unit."""
        if not self.out.is_file() or not self.rows():
            return None
        from dialeval.trust.agreement import ceiling

        import warnings

        try:
            with warnings.catch_warnings():  # the page shows agreement; N/A and skipped labels are the card's to warn about
                warnings.simplefilter("ignore")
                labels = dialogue.read_labels(self.out, self.rubric, list(self.conversations.values()))
        except Exception:  # noqa: BLE001 - a labels file without a unit of this sample has no agreement yet
            return None
        per: dict[str, dict[str, dict[str, float]]] = {}
        for (unit, criterion), scores in labels.by_unit.items():
            if len(scores) >= 2:
                per.setdefault(criterion, {})[unit] = scores
        if not per:
            return None
        out = {}
        for criterion, units in per.items():
            figures = ceiling(units, resamples=199)[0]
            out[criterion] = {"units": figures["units"], "annotators": figures["annotators"],
                              "exact_agreement": figures["exact_agreement"]["value"],
                              "alpha": figures["alpha_among_annotators"]}
        return out
