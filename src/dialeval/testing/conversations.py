"""Synthetic MMRC conversations and MMDU dialogues of the benchmarks' typical lengths.

Cost and prompt-caching estimates depend on how long the conversations are, and the
bundled fixtures are far shorter than the real benchmarks. These generators write
meaningless but well-formed items with the papers' statistics (MMDU, Table 1: 15 turns
on average, 2-27, 3.8 images, questions of about 31 tokens and answers of about 368;
MMRC, Table 2: 15.2 turns, 4-22, 4.65 images, six questions per conversation, replies
capped at 256 tokens), made at run time from a seed, so no benchmark data is copied.
Images are URLs that are never fetched: text-only backends (dry runs) see their captions.
"""

from __future__ import annotations

import random
from typing import Any

# A small vocabulary of our own; word salad of the right length tokenizes like prose.
WORDS = (
    "the a of and to in that picture shows on with for this is it as by at from left right "
    "red blue green small large old new bright dark window table garden street river bridge "
    "person child dog cat car bicycle tree flower house kitchen market station mountain lake "
    "building light shadow colour shape corner background front middle edge side top bottom "
    "holding walking standing sitting looking pointing carrying opening reading painting "
    "because while after before when then also however although therefore which where "
    "first second third both each several many few most every other same different"
).split()
ABILITIES = ("IE", "CR", "IU", "IM", "MR", "AR")


def words(rng: random.Random, count: int) -> str:
    """``count`` words as sentences of 8-20 words."""
    sentences: list[str] = []
    left = count
    while left > 0:
        n = min(rng.randint(8, 20), left)
        left -= n
        sentence = " ".join(rng.choice(WORDS) for _ in range(n))
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
    return " ".join(sentences)


def _image(rng: random.Random, tag: str, number: int) -> dict[str, str]:
    return {"source": f"https://images.invalid/{tag}/{number}.jpg", "caption": words(rng, rng.randint(8, 14)).rstrip(".")}


def mmdu_dialogues(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` MMDU dialogues (the data file's format: ``id``, ``image``, ``conversations``)."""
    rng = random.Random(seed)
    out = []
    for d in range(count):
        turns = max(2, min(27, round(rng.gauss(15, 5))))
        n_images = max(2, min(20, round(rng.gauss(3.8, 1.5))))
        images = [_image(rng, f"mmdu{d}", i + 1) for i in range(n_images)]
        messages = []
        for t in range(turns):
            tags = "".join(f"<image-{i + 1}>\n" for i in range(n_images)) if t == 0 else ""
            if t and rng.random() < 0.3:
                tags = f"<image-{rng.randint(1, n_images)}>\n"
            question = tags + words(rng, max(8, round(rng.gauss(28, 8))))
            answer = words(rng, max(60, round(rng.gauss(340, 110))))
            messages += [{"from": "user", "value": question}, {"from": "assistant", "value": answer}]
        out.append({"id": f"synthetic-{d + 1}", "image": images, "conversations": messages})
    return out


def mmrc_conversations(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` MMRC conversations (``id``, ``turns`` with replies, six questions at the end)."""
    rng = random.Random(seed)
    out = []
    for c in range(count):
        n_turns = max(4, min(22, round(rng.gauss(15.2, 4))))
        image_turns = set(rng.sample(range(n_turns), k=min(n_turns, max(1, round(rng.gauss(4.65, 1.5))))))
        turns = []
        for t in range(n_turns):
            turn: dict[str, Any] = {"user": words(rng, max(6, round(rng.gauss(35, 15)))),
                                    "assistant": words(rng, max(20, round(rng.gauss(140, 50))))}
            if t in image_turns:
                turn["images"] = [_image(rng, f"mmrc{c}", t + 1)]
            turns.append(turn)
        n_images = len(image_turns)
        questions = []
        for ability in ABILITIES:
            q: dict[str, Any] = {"ability": ability, "question": words(rng, rng.randint(10, 22)), "answer": words(rng, rng.randint(6, 25))}
            if ability == "IE":
                q["items"] = [rng.choice(WORDS) for _ in range(3)]
            if ability == "IM":
                q["images"] = [rng.randint(1, n_images)]
            if ability == "AR":
                q["refuse"] = rng.random() < 0.5
            questions.append(q)
        out.append({"id": f"synthetic-{c + 1}", "domain": "synthetic", "turns": turns, "questions": questions})
    return out
