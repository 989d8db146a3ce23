"""Deterministic text rules behind MMRC's objective metrics (pure, no model calls).

- :func:`split_items` / :func:`match_items`: the items of a list-like IE answer and the
  reference items they name (EP).
- :func:`refusal_by_rule`: plain refusals ("it was not mentioned"), never hedged guesses (RP).
- :func:`image_numbers`: the image numbers an IM answer names ("the third one",
  "images 7 and 8") (IMP).

The model-based helpers call these first and ask a model only when a rule cannot decide.
"""

from __future__ import annotations

import re
import unicodedata

_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20,
}  # fmt: skip
_CARDINALS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_STOP = {"the", "a", "an", "of", "in", "on", "at", "to", "and", "with", "some", "my", "his", "her", "their"}
_SPLIT = re.compile(r"\s*(?:[,;\n]|\band\b|\s-\s|•)\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_LEAD_IN = re.compile(r"^[^:\n]{0,80}:\s*")

REFUSAL_PATTERNS = [
    r"\bnot (?:been )?(?:mentioned|stated|specified|discussed|said|shown|included|provided|given)\b",
    r"\b(?:never|didn'?t|did not|doesn'?t|does not|haven'?t|have not|hasn'?t|has not) (?:mention|say|said|tell|told|state|specif|share|show)\w*",
    r"\bno (?:information|mention|record|details?|indication)\b",
    r"\b(?:can(?:not|'t)|unable to|not able to) (?:answer|tell|say|know|determine|confirm)\b",
    r"\bi (?:do not|don'?t) know\b",
    r"\b(?:there is|there's|there was) no (?:way to know|information)\b",
]
_REFUSAL = re.compile("|".join(REFUSAL_PATTERNS), re.IGNORECASE)
# a refusal phrase next to one of these is a hedged guess ("not mentioned, but probably
# the blue one"): not a plain refusal, so no rule settles it
GUESS_PATTERNS = [
    r"\b(?:probably|likely|maybe|perhaps|presumably|possibly|guess|assume|suppose)\b",
    r"\b(?:might|may|could|would) (?:be|have)\b",
    r"\bmy (?:best )?(?:guess|bet)\b",
]
_GUESS = re.compile("|".join(GUESS_PATTERNS), re.IGNORECASE)
_SHORT_CHOICE = re.compile(r"^\s*(?:[A-H]|true|false|yes|no)\s*[.):]?\s*$", re.IGNORECASE)


def normalize(text: str) -> str:
    """Lower case, accents and punctuation removed, single spaces."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-z0-9 ]+", " ", text.lower())
    return " ".join(text.split())


def content_words(text: str) -> set[str]:
    return {w for w in normalize(text).split() if w not in _STOP}


def split_items(answer: str) -> list[str]:
    """The pieces of a list-like answer (commas, semicolons, 'and', lines, bullets).

    A lead-in such as "The user mentioned:" is dropped; empty pieces and exact repeats vanish.
    """
    text = answer.strip().rstrip(".")
    text = _LEAD_IN.sub("", text, count=1) if ":" in text.split("\n", 1)[0] else text
    pieces: list[str] = []
    for raw in _SPLIT.split(text):
        piece = _BULLET.sub("", raw).strip(" .")
        if piece and normalize(piece) and normalize(piece) not in {normalize(p) for p in pieces}:
            pieces.append(piece)
    return pieces


def exact_matches(pieces: list[str], labels: list[str]) -> list[int] | None:
    """1-based label number of every piece when each piece equals a label exactly, else ``None``."""
    table = {normalize(label): i for i, label in enumerate(labels, start=1)}
    found = [table.get(normalize(piece)) for piece in pieces]
    return None if not pieces or any(f is None for f in found) else [f for f in found if f is not None]


def match_items(pieces: list[str], labels: list[str]) -> list[int | None]:
    """For each piece, the label whose content words it contains (or that contains it)."""
    label_words = [content_words(label) for label in labels]
    out: list[int | None] = []
    for piece in pieces:
        words = content_words(piece)
        match = None
        for number, lw in enumerate(label_words, start=1):
            if lw and words and (lw <= words or words <= lw):
                match = number
                break
        out.append(match)
    return out


def refusal_by_rule(answer: str) -> bool | None:
    """``True`` for a plain refusal, ``False`` for a bare choice ("B", "True"), else ``None``
    (a hedged guess among them: a refusal phrase with a guess is no plain refusal)."""
    if _REFUSAL.search(answer):
        return None if _GUESS.search(answer) else True
    if _SHORT_CHOICE.match(answer):
        return False
    return None


def image_numbers(answer: str) -> list[int]:
    """Image numbers named in an answer: digits after 'image'/'picture'/'photo', ordinals,
    and '7th'-style numbers, in order of first mention."""
    text = answer.lower()
    found: list[int] = []

    def add(n: int) -> None:
        if n not in found:
            found.append(n)

    pattern = re.compile(
        r"\b(?:images?|pictures?|photos?|photographs?|pics?)\s*(?:no\.?|number|#)?\s*"
        r"((?:\d+|" + "|".join(_CARDINALS) + r")(?:\s*(?:,|and|&|/)\s*(?:\d+|" + "|".join(_CARDINALS) + r"))*)"
    )
    spans = []
    for m in pattern.finditer(text):
        spans.append((m.start(), m.group(1)))
    # an ordinal counts only when an image word follows closely ("the 3rd one", "7th and 8th images")
    near_image = r"(?=(?:\s+[\w-]+){0,3}?\s+(?:images?|pictures?|photos?|pics?|ones?)\b)"
    for m in re.finditer(r"\b(\d+)(?:st|nd|rd|th)\b" + near_image, text):
        spans.append((m.start(), m.group(1)))
    for m in re.finditer(r"\b(" + "|".join(_ORDINALS) + r")\b" + near_image, text):
        spans.append((m.start(), m.group(1)))
    for _, group in sorted(spans):
        for token in re.findall(r"\d+|[a-z]+", group):
            if token.isdigit():
                add(int(token))
            elif token in _ORDINALS:
                add(_ORDINALS[token])
            elif token in _CARDINALS:
                add(_CARDINALS[token])
    return found
