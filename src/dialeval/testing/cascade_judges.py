"""Scripted judges whose errors are known, for the tests and the benchmark of cascades.

Every reply carries a hidden tag ``[q=<quality> d=<easy|hard> u=<unit>]``; the humans
label the quality. Served by :class:`dialeval.testing.openai_server.OpenAIStub` under
these model names:

- ``cheap``: the quality on easy units, at every reading; on hard units a wrong verdict
  that changes with the reading (the request's ``seed``): sure where right, unsure where wrong;
- ``strong``: the quality everywhere (the card prices it at twenty times ``cheap``);
- ``lenient``: one point above the quality (capped at 5) everywhere: a third juror.

Asked for logprobs, each judge gives its verdict's token a probability (:func:`token_logprobs`):
``cheap`` 0.95 where right and 0.45 where wrong, the others 0.99.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dialeval.testing.openai_server import prompt_of
from dialeval.trust.perturb import NEEDLES

RUBRIC = """criteria:
  - name: helpfulness
    level: turn
    description: Does the reply help the user with what they asked?
    scale: [1, 5]
"""
PRICES = {"cheap": [0.25, 0.5], "strong": [5.0, 10.0], "lenient": [0.25, 0.5]}  # USD per million tokens


def quality(unit: int) -> int:
    return [5, 2, 4, 1, 3, 4, 2, 5, 3, 1, 4, 2][unit % 12]


def hard(unit: int, every: int) -> bool:
    return unit % every == every - 1


def conversations(n: int, every: int = 4, replies: int = 3) -> list[dict[str, Any]]:
    """``n`` conversations of ``replies`` replies; every ``every``-th unit is hard."""
    out = []
    for c in range(n):
        messages: list[dict[str, str]] = []
        for k in range(replies):
            u = replies * c + k
            tag = f"[q={quality(u)} d={'hard' if hard(u, every) else 'easy'} u={u}]"
            messages += [{"role": "user", "content": f"Question {k + 1} about topic {c}?"},
                         {"role": "assistant", "content": f"{tag} Here is my answer." + " More detail." * (u % 3)}]
        out.append({"id": f"c{c}", "messages": messages})
    return out


def labels(n: int, replies: int = 3) -> list[dict[str, Any]]:
    """Two annotators who both give the quality (a few units one point apart)."""
    rows = []
    for u in range(n * replies):
        q = quality(u)
        second = q if u % 7 else max(1, q - 1)
        rows.append({"id": f"c{u // replies}", "turn": 2 * (u % replies) + 2, "criterion": "helpfulness", "score": [q, second]})
    return rows


def _tag(text: str) -> tuple[int, bool, int]:
    q, d, u = re.search(r"\[q=(\d) d=(\w+) u=(\d+)\]", text).groups()  # type: ignore[union-attr]
    return int(q), d == "hard", int(u)


def verdict(judge: str, text: str, seed: int | None) -> int:
    """The judge's verdict on the reply tagged in ``text`` (reading ``seed``: 1 when unset)."""
    q, is_hard, _ = _tag(text)
    if judge == "strong":
        return q
    if judge == "lenient":
        return min(5, q + 1)
    if not is_hard:
        return q
    wrong = [v for v in (1, 2, 3, 4, 5) if abs(v - q) >= 2]
    return wrong[((seed or 1) - 1) % len(wrong)]


def respond(body: dict[str, Any]) -> str:
    """The scripted answer to one request: a verdict, a pairwise pick or a needle check."""
    judge, text = body["model"], prompt_of(body)
    if "<candidate_1>" in text:  # pairwise: the better quality wins, as the judge sees it
        a, b = (verdict(judge, text.rsplit(f"<candidate_{i}>", 1)[1].split(f"</candidate_{i}>", 1)[0], body.get("seed"))
                for i in (1, 2))
        return json.dumps({"rationale": "by quality", "winner": "1" if a > b else "2" if b > a else "tie"})
    judged = re.findall(r'<reply turn="\d+">(.*?)</reply>', text, re.S)[-1]
    if "name: remembers_user" in text:
        before = text.split("<reply turn=", 1)[0]
        caught = any(late in judged and early in before for early, late in NEEDLES)
        return json.dumps({"rationale": "checked", "verdict": "no" if caught else "yes"})
    return json.dumps({"rationale": "scripted", "verdict": verdict(judge, judged, body.get("seed"))})


def token_logprobs(body: dict[str, Any], answer: str) -> list[tuple[str, float]]:
    """The answer as tokens (the verdict's value one token) with log-probabilities: certain
    everywhere but the verdict, whose probability says how sure the judge is."""
    import math

    found = re.search(r'"verdict":\s*"?([^",}]+)', answer)
    if found is None:
        return [(answer, 0.0)]
    start, end = found.span(1)
    judged = re.findall(r'<reply turn="\d+">(.*?)</reply>', prompt_of(body), re.S)
    sure = 0.99
    if body["model"] == "cheap" and judged and "[q=" in judged[-1]:
        sure = 0.45 if _tag(judged[-1])[1] else 0.95
    return [(answer[:start], 0.0), (answer[start:end], math.log(sure)), (answer[end:], 0.0)]
