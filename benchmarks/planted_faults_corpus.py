"""Writes benchmarks/data/planted_faults.yaml: simulated conversations with one planted fault each, and clean ones.

Why: the simulation audit is chosen by its recall on faults a simulated user really makes
(leaving the persona, inventing a fact, revealing a hidden fact unasked, stopping early,
writing the bot's lines) and its precision on turns that keep the rules. Five scenarios in
our own words; for each, one clean conversation and one per fault kind, each fault in a
blatant form (code can see it) or a subtle one (only a reader can), alternating by
scenario. The file is generated so that every variant differs from its clean conversation
in the planted turn only.

    python benchmarks/planted_faults_corpus.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).with_name("data") / "planted_faults.yaml"

# (id, persona, goal, hidden facts, opening, bot asks, user answers, bot finishes)
SCENARIOS: list[dict[str, Any]] = [
    {"id": "blender", "persona": "Dana, a busy teacher who bought a blender online", "goal": "get a refund for the blender, which arrived broken",
     "facts": {"order_number": "A123"}, "opening": "Hi, my new blender arrived broken and I would like my money back.",
     "ask": "Sorry to hear that. What is your order number?", "answer": "It is A123.",
     "done": "Thanks. Refund RMA-1042 is issued for order A123; the money is back within five days."},
    {"id": "flight", "persona": "Omar, a consultant who travels every week", "goal": "move his Thursday flight to Friday morning",
     "facts": {"booking_code": "QX7PL"}, "opening": "Hello, I need to move my Thursday flight to Friday morning.",
     "ask": "I can help with that. What is your booking code?", "answer": "The code is QX7PL.",
     "done": "Done: your flight now leaves Friday at 08:10, same seat class, no fee."},
    {"id": "internet", "persona": "Mei, a student whose home internet keeps dropping", "goal": "get the home internet connection fixed",
     "facts": {"account_id": "55102"}, "opening": "My internet at home has been cutting out all week.",
     "ask": "That sounds frustrating. Can you give me your account ID?", "answer": "Sure, 55102.",
     "done": "I found a fault on your line and booked a technician for tomorrow between 9 and 12."},
    {"id": "gym", "persona": "Luis, a retiree who is moving to another town", "goal": "cancel his gym membership",
     "facts": {"member_number": "G-2291"}, "opening": "Hi, I am moving away and want to cancel my gym membership.",
     "ask": "Sorry to see you go. What is your member number?", "answer": "It's G-2291.",
     "done": "Your membership G-2291 is cancelled from the end of this month; no further payments."},
    {"id": "parcel", "persona": "Ada, a night-shift nurse expecting a parcel", "goal": "have her parcel delivered to her work address instead",
     "facts": {"tracking_number": "ZX99120"}, "opening": "Can I change where my parcel is delivered?",
     "ask": "Yes, usually. What is the tracking number?", "answer": "ZX99120.",
     "done": "Done: parcel ZX99120 now goes to your work address on Thursday."},
]

# each fault replaces one simulated turn; blatant forms for even scenarios, subtle ones for odd
FAULTS: dict[str, tuple[int, Any, Any]] = {
    # rule: (turn replaced, blatant, subtle) — a function of the scenario giving (text, stop)
    "persona": (3, lambda s: ("As an AI language model, I do not have an order, but I can help you.", None),
                lambda s: ("Of course! I'd be glad to assist you with that. Could you share a few more details so I can look into it for you?", None)),
    "hidden_fact": (1, lambda s: (f"{s['opening']} My {name(s)} is {value(s)}.", None),
                    lambda s: (f"{s['opening']} It's {value(s)}, by the way.", None)),
    "invented_fact": (3, lambda s: (f"{s['answer']} I also paid 40 dollars extra for premium support last year.", None),
                      lambda s: (f"{s['answer']} My brother had the same problem with you in March.", None)),
    "early_stop": (3, lambda s: ("Great, that solves it, thank you!", "goal_reached"),
                   lambda s: ("Okay, never mind then, I'll manage. Bye.", "gave_up")),
    "one_turn": (3, lambda s: (f"{s['answer']}\nBot: Thank you, it is all done.\nUser: Perfect, thanks.", None),
                 lambda s: (f"{s['answer']} (The agent says it is all done and I thank them.)", None)),
}


def name(scenario: dict[str, Any]) -> str:
    return next(iter(scenario["facts"])).replace("_", " ")


def value(scenario: dict[str, Any]) -> str:
    return next(iter(scenario["facts"].values()))


def clean_turns(s: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"number": 1, "role": "user", "text": s["opening"], "stop": None},
        {"number": 2, "role": "assistant", "text": s["ask"]},
        {"number": 3, "role": "user", "text": s["answer"], "stop": None},
        {"number": 4, "role": "assistant", "text": s["done"]},
        {"number": 5, "role": "user", "text": "Thank you, that's all.", "stop": "goal_reached"},
    ]


def corpus() -> list[dict[str, Any]]:
    out = []
    for index, s in enumerate(SCENARIOS):
        scenario = {"persona": s["persona"], "goal": s["goal"], "hidden_facts": s["facts"]}
        out.append({"id": f"{s['id']}-clean", "scenario": scenario, "turns": clean_turns(s), "fault": None})
        for rule, (number, blatant, subtle) in FAULTS.items():
            text, stop = (blatant if index % 2 == 0 else subtle)(s)
            turns = clean_turns(s)
            turns[number - 1] = {"number": number, "role": "user", "text": text, "stop": stop}
            if stop:  # the conversation ends at the planted stop
                turns = turns[:number]
            out.append({"id": f"{s['id']}-{rule}", "scenario": scenario, "turns": turns,
                        "fault": {"turn": number, "rule": rule, "form": "blatant" if index % 2 == 0 else "subtle"}})
    return out


class _Plain(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # each record whole, no anchors
        return True


def main() -> int:
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("# generated by benchmarks/planted_faults_corpus.py: do not edit by hand\n"
                   + yaml.dump(corpus(), Dumper=_Plain, sort_keys=False, allow_unicode=True, width=200), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
