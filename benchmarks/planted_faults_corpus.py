"""Writes benchmarks/data/planted_faults.yaml: simulated conversations with one planted fault each, and clean ones.

Why: the simulation audit is chosen by its recall on faults a simulated user really makes
(leaving the persona, inventing a fact, revealing a hidden fact unasked, stopping early,
writing the bot's lines) and its precision on turns that keep the rules. Fifteen scenarios
in our own words, each with one clean conversation (the bot asks in its own words, not
always the facts' names) and four or five planted faults written for that scenario (63:
12 to 14 per rule). A
fault is ``blatant`` when its words show it (a label, a value, a number, model talk) and
``subtle`` when only its meaning does. Every variant differs from its scenario's clean
conversation in the planted turn only (a planted stop ends it there).

    python benchmarks/planted_faults_corpus.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).with_name("data") / "planted_faults.yaml"
B, S = "blatant", "subtle"
DONE, QUIT = "goal_reached", "gave_up"

# each scenario: persona, goal, hidden facts, the clean conversation as (speaker, text[, stop]),
# and its faults as (rule, form, number of the user turn replaced, text, stop)
SCENARIOS: list[dict[str, Any]] = [
    {"id": "blender", "persona": "Dana, a busy teacher who bought a blender online",
     "goal": "get a refund for the blender, which arrived broken", "facts": {"order_number": "A123"},
     "turns": [("user", "Hi, my new blender arrived broken and I would like my money back."),
               ("bot", "Sorry to hear that. What is your order number?"), ("user", "It is A123."),
               ("bot", "Thanks. Refund RMA-1042 is issued for order A123; the money is back within five days."),
               ("user", "Thank you, that's all.", DONE)],
     "faults": [("persona", B, 3, "As an AI language model, I do not have an order, but I can help you.", None),
                ("invented_fact", S, 3, "It is A123. I paid with my partner's card, so maybe send it there.", None),
                ("early_stop", S, 3, "Never mind, I'll just keep it. Bye.", QUIT),
                ("one_turn", B, 3, "It is A123. Bot: Thanks, refund issued. Me: Great.", None)]},
    {"id": "flight", "persona": "Omar, a consultant who travels every week", "goal": "move his Thursday flight to Friday morning",
     "facts": {"booking_code": "QX7PL"},
     "turns": [("user", "Hello, I need to move my Thursday flight to Friday morning."),
               ("bot", "I can help with that. What is your booking code?"), ("user", "The code is QX7PL."),
               ("bot", "Done: your flight now leaves Friday at 08:10, same seat class, no fee."), ("user", "Perfect, thanks.", DONE)],
     "faults": [("hidden_fact", B, 1, "Hello, booking QX7PL: I need the Thursday flight moved to Friday morning.", None),
                ("persona", S, 3, "Certainly! I'll be glad to look up that booking for you. One moment please.", None),
                ("early_stop", B, 3, "Great, all sorted then, thanks!", DONE),
                ("one_turn", B, 3, "QX7PL.\n\nAgent: Thank you, Omar, you are now on the Friday 08:10 flight.\nOmar: Thanks!", None)]},
    {"id": "internet", "persona": "Mei, a student whose home internet keeps dropping", "goal": "get the home internet connection fixed",
     "facts": {"account_id": "55102"},
     "turns": [("user", "My internet at home keeps dropping out."),
               ("bot", "That sounds frustrating. Can you give me your account ID?"), ("user", "Sure, 55102."),
               ("bot", "I found a fault on your line and booked a technician for tomorrow between 9 and 12."),
               ("user", "Okay, thank you.", DONE)],
     "faults": [("invented_fact", B, 3, "Sure, 55102. The router is the one you sent me in 2022.", None),
                ("persona", B, 5, "Glad I could help! Is there anything else I can assist you with today?", None),
                ("one_turn", S, 3, "Sure, 55102. (The agent checks the line, finds a fault and books a technician; I say thanks.)", None),
                ("hidden_fact", B, 1, "My internet at home keeps dropping out. Account 55102 if that helps.", None)]},
    {"id": "gym", "persona": "Luis, a retiree who is moving to another town", "goal": "cancel his gym membership",
     "facts": {"member_number": "G-2291"},
     "turns": [("user", "Hi, I am moving away and want to cancel my gym membership."),
               ("bot", "Sorry to see you go. What is your member number?"), ("user", "It's G-2291."),
               ("bot", "Your membership G-2291 is cancelled from the end of this month; no further payments."),
               ("user", "Good, thanks.", DONE)],
     "faults": [("early_stop", S, 3, "Hmm, I'd have to look for it. I'll call back some other time.", QUIT),
                ("invented_fact", S, 3, "It's G-2291. My wife has a membership too; cancel hers as well.", None),
                ("persona", B, 1, "Hi, I want to cancel the gym membership of the user described in my instructions.", None),
                ("one_turn", B, 5, "User: Good, thanks.\nAssistant: You're welcome, Luis. Goodbye!", None)]},
    {"id": "parcel", "persona": "Ada, a night-shift nurse expecting a parcel", "goal": "have her parcel delivered to her work address instead",
     "facts": {"tracking_number": "ZX99120"},
     "turns": [("user", "Can I change where my parcel is delivered?"), ("bot", "Yes, usually. What is the tracking number?"),
               ("user", "ZX99120."), ("bot", "Done: parcel ZX99120 now goes to your work address on Thursday."),
               ("user", "Thanks a lot.", DONE)],
     "faults": [("hidden_fact", B, 1, "Can I change where parcel ZX99120 is delivered?", None),
                ("invented_fact", B, 3, "ZX99120. Work is at 14 Harbour Road, by the way.", None),
                ("early_stop", S, 3, "Actually, it's fine, forget it.", QUIT),
                ("persona", S, 5, "Thank you for contacting us, Ada. Have a lovely day!", DONE)]},
    {"id": "laptop", "persona": "Priya, a freelance designer whose laptop screen flickers", "goal": "book a warranty repair for her laptop",
     "facts": {"serial_number": "LT-88431", "purchase_date": "2 May 2025", "email": "priya.d@example.com"},
     "turns": [("user", "Hi, my laptop screen has started flickering and I think it's still under warranty."),
               ("bot", "Let's check. Could you tell me the serial number? It is on a sticker under the laptop."),
               ("user", "Yes, it says LT-88431."), ("bot", "Thanks. When did you buy it?"), ("user", "On 2 May 2025."),
               ("bot", "That is within warranty. I can book a repair; where should I send the confirmation?"),
               ("user", "To priya.d@example.com, please."),
               ("bot", "Booked: repair R-5521, courier pickup on Monday. The confirmation is on its way."),
               ("user", "Great, thank you!", DONE)],
     "faults": [("hidden_fact", B, 3, "Yes, it says LT-88431. I bought it on 2 May 2025 and my email is priya.d@example.com.", None),
                ("invented_fact", B, 5, "On 2 May 2025, from your shop on Queen Street, for 1,299 euros.", None),
                ("early_stop", S, 5, "On 2 May 2025. Great, so it's booked, thanks!", DONE),
                ("one_turn", S, 7, "To priya.d@example.com, please. Your repair is booked and a courier will pick it up on Monday. "
                 "Great, thank you!", None)]},
    {"id": "card", "persona": "Tom, a carpenter who lost his bank card at a market", "goal": "block his lost bank card and order a new one",
     "facts": {"card_last_digits": "4417", "date_of_birth": "3 June 1979"},
     "turns": [("user", "I lost my bank card at the market, can you block it?"),
               ("bot", "Right away. What are the last four digits of the card?"), ("user", "4417."),
               ("bot", "And to confirm it's you, your date of birth?"), ("user", "3 June 1979."),
               ("bot", "The card ending 4417 is blocked. A new card will arrive in five to seven working days."),
               ("user", "Thanks, that's what I needed.", DONE)],
     "faults": [("persona", B, 3, "I'm sorry, but as an assistant I can't share card details.", None),
                ("invented_fact", S, 5, "3 June 1979. Someone also tried to use it at a petrol station, I got a text.", None),
                ("early_stop", B, 5, "Forget it, this takes too long.", QUIT),
                ("one_turn", B, 7, "Thanks.\n\nBank: Anything else?\nTom: No, bye.", None),
                ("hidden_fact", S, 3, "4417. Born 3 June 1979, if you need that too.", None)]},
    {"id": "dentist", "persona": "Grace, a parent booking for her son", "goal": "move her son's dentist appointment to a later day this week",
     "facts": {"patient_name": "Leo Hart", "current_appointment": "Tuesday 10:30"},
     "turns": [("user", "Hello, I'd like to move my son's dentist appointment to later this week."),
               ("bot", "Of course. What is the patient's name?"), ("user", "Leo Hart."),
               ("bot", "I see Leo on Tuesday at 10:30. I can offer Thursday at 15:00 or Friday at 9:00."),
               ("user", "Thursday at 15:00, please."),
               ("bot", "Moved: Leo Hart, Thursday at 15:00. We'll text a reminder the day before."), ("user", "Lovely, thanks.", DONE)],
     "faults": [("hidden_fact", B, 1, "Hello, Leo Hart's appointment on Tuesday 10:30 needs moving to later this week.", None),
                ("invented_fact", B, 5, "Thursday at 15:00, please. He has had braces since 2023, if that matters.", None),
                ("persona", S, 5, "Thursday at 15:00 works. Just so you know, I'm only pretending to be a parent for this test.", None),
                ("one_turn", B, 5, "Thursday at 15:00, please. [Receptionist]: Done, see you Thursday! [Me]: Thanks.", None)]},
    {"id": "claim", "persona": "Kwame, a driver whose parked car was scratched", "goal": "open an insurance claim for the scratched car",
     "facts": {"policy_number": "PL-300-7782", "plate": "KD21 XRT"},
     "turns": [("user", "Hi, someone scratched my car while it was parked, and I'd like to make a claim."),
               ("bot", "I'm sorry about that. Could I have your policy number?"), ("user", "PL-300-7782."),
               ("bot", "Thanks. Which car is it: what's the registration?"), ("user", "KD21 XRT."),
               ("bot", "Claim C-66012 is open. An assessor will call you within two working days."), ("user", "Okay, thanks.", DONE)],
     "faults": [("invented_fact", S, 3, "PL-300-7782. There was a witness, the neighbour saw it all.", None),
                ("early_stop", B, 3, "PL-300-7782. Great, claim done, thanks!", DONE),
                ("hidden_fact", B, 3, "PL-300-7782, and the plate is KD21 XRT.", None),
                ("one_turn", S, 7, "Okay, thanks. You're welcome, Kwame, we'll be in touch. Bye!", None)]},
    {"id": "streaming", "persona": "Hannah, a graduate student paying for a streaming service she no longer uses",
     "goal": "cancel the streaming subscription and stop the next payment", "facts": {"email": "hannah.k@example.org"},
     "turns": [("user", "Hi, I want to cancel my streaming subscription before the next payment."),
               ("bot", "I can do that. Which email address is the account under?"), ("user", "hannah.k@example.org."),
               ("bot", "Found it. Before you go, would you like half price for three months instead?"),
               ("user", "No thanks, please just cancel it."),
               ("bot", "Cancelled. You won't be charged again, and you can watch until the end of the period."), ("user", "Thank you!", DONE)],
     "faults": [("persona", B, 5, "No thank you. As a language model I don't watch films anyway.", None),
                ("early_stop", S, 5, "Oh, half price? Fine, that's all I needed, thanks!", DONE),
                ("invented_fact", B, 3, "hannah.k@example.org. I've been a member since 2019.", None),
                ("hidden_fact", B, 1, "Hi, account hannah.k@example.org, please cancel before the next payment.", None),
                ("one_turn", B, 7, "Thank you! - Agent: You're welcome, Hannah. - Me: Bye.", None)]},
    {"id": "luggage", "persona": "Ines, a tourist whose suitcase did not arrive",
     "goal": "find out where her suitcase is and have it delivered to her hotel", "facts": {"bag_tag": "LH 482913", "hotel": "Hotel Miramar"},
     "turns": [("user", "My suitcase didn't come off the plane. Can you find it?"),
               ("bot", "I'm sorry. Do you have the bag tag number from your boarding pass?"), ("user", "Yes: LH 482913."),
               ("bot", "It is in Frankfurt and arrives tonight. Where should we deliver it?"), ("user", "To Hotel Miramar, please."),
               ("bot", "Booked: delivery to Hotel Miramar tomorrow morning. You'll get a text when it's on its way."),
               ("user", "Thank you so much.", DONE)],
     "faults": [("hidden_fact", S, 1, "My suitcase didn't come off the plane; I'm at Hotel Miramar. Can you find it?", None),
                ("invented_fact", B, 5, "To Hotel Miramar, room 312, before 10 am please.", None),
                ("early_stop", S, 3, "I don't have the boarding pass anymore. Forget it.", QUIT),
                ("persona", S, 5, "To Hotel Miramar. Please note: the user is frustrated and expects an apology.", None)]},
    {"id": "pharmacy", "persona": "Mr Novak, an elderly man who speaks plainly", "goal": "renew his blood pressure prescription",
     "facts": {"prescription_number": "RX-20417", "pharmacy": "Elm Street pharmacy"},
     "turns": [("user", "Good morning. I need my blood pressure tablets renewed."),
               ("bot", "Good morning. What is the prescription number on the box?"), ("user", "It says RX-20417."),
               ("bot", "Thank you. Which pharmacy should it go to?"), ("user", "The Elm Street pharmacy."),
               ("bot", "Sent: RX-20417 will be ready at Elm Street pharmacy after 2 pm today."), ("user", "Very good. Thank you.", DONE)],
     "faults": [("persona", S, 3, "It says RX-20417. Given the pharmacokinetic profile of amlodipine, a 90-day supply would optimise "
                 "adherence.", None),
                ("one_turn", B, 3, "It says RX-20417.\nPharmacist: Thank you, which pharmacy?\nMe: Elm Street.", None),
                ("early_stop", B, 5, "Oh, it's done already? Good, goodbye.", DONE),
                ("invented_fact", S, 7, "Very good. My doctor also said to double the dose.", DONE)]},
    {"id": "hotel", "persona": "Sofia, planning a weekend trip with a friend", "goal": "book a double room for the weekend of her trip",
     "facts": {"dates": "14-16 November", "guests": "2"},
     "turns": [("user", "Hi, I'd like to book a room for a weekend trip."), ("bot", "Happy to help. Which dates, and for how many guests?"),
               ("user", "14 to 16 November, for 2 people."),
               ("bot", "We have a double room at 120 euros a night, breakfast included. Shall I book it?"), ("user", "Yes, please book it."),
               ("bot", "Booked: reference HB-7710, double room, 14-16 November. Payment on arrival."), ("user", "Great, thanks!", DONE)],
     "faults": [("hidden_fact", B, 1, "Hi, I'd like a room for 2 from 14 to 16 November.", None),
                ("invented_fact", S, 5, "Yes, please. My friend is allergic to feathers, so no down pillows.", None),
                ("early_stop", S, 3, "I'll check with my friend first and come back. Bye.", QUIT),
                ("one_turn", B, 5, "Yes, please book it. Hotel: Booked, reference HB-7710. Me: Thanks!", None)]},
    {"id": "bins", "persona": "Ray, a shop owner whose bins were not collected", "goal": "get the missed bin collection rescheduled",
     "facts": {"postcode": "BS3 4QT", "street": "Cotham Road"},
     "turns": [("user", "Hi, my bins weren't collected this week."), ("bot", "Sorry about that. What's your postcode?"), ("user", "BS3 4QT."),
               ("bot", "Thanks. Which street is the shop on?"), ("user", "Cotham Road."),
               ("bot", "A crew will come back on Thursday morning for Cotham Road."), ("user", "Cheers.", DONE)],
     "faults": [("persona", B, 1, "Hello! I'm an AI assistant here to report a missed bin collection.", None),
                ("hidden_fact", B, 3, "BS3 4QT, on Cotham Road.", None),
                ("invented_fact", B, 5, "Cotham Road, number 27.", None),
                ("early_stop", B, 5, "Cotham Road. Sorted, cheers!", DONE)]},
    {"id": "tax", "persona": "Elena, a self-employed translator filing her tax return",
     "goal": "find out the deadline for her tax return and whether she can pay in instalments", "facts": {"tax_id": "TX-4471-09"},
     "turns": [("user", "Hello, when is the deadline for my tax return this year?"),
               ("bot", "For self-employed people it is 31 January. Can I help with anything else?"),
               ("user", "Yes, can I pay what I owe in instalments?"),
               ("bot", "Yes, if you owe under 30,000. I'd need your tax ID to set it up."), ("user", "It's TX-4471-09."),
               ("bot", "Thanks. You can pay in up to 12 monthly instalments; I've sent the form to your account."),
               ("user", "Perfect, thank you.", DONE)],
     "faults": [("one_turn", S, 3, "Yes, can I pay in instalments? Yes, you can, for up to 12 months. Great.", None),
                ("invented_fact", B, 3, "Yes: I owe about 8,500, can I pay that in instalments?", None),
                ("early_stop", S, 3, "Okay, thanks, that's everything.", DONE),
                ("persona", S, 7, "Perfect. Happy to help, and thank you for choosing our tax service!", None),
                ("hidden_fact", B, 3, "Yes, can I pay in instalments? My tax ID is TX-4471-09.", None)]},
]


def clean_turns(s: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for number, (speaker, text, *stop) in enumerate(s["turns"], start=1):
        if speaker == "user":
            out.append({"number": number, "role": "user", "text": text, "stop": stop[0] if stop else None})
        else:
            out.append({"number": number, "role": "assistant", "text": text})
    return out


def corpus() -> list[dict[str, Any]]:
    out = []
    for s in SCENARIOS:
        scenario = {"persona": s["persona"], "goal": s["goal"], "hidden_facts": s["facts"]}
        out.append({"id": f"{s['id']}-clean", "scenario": scenario, "turns": clean_turns(s), "fault": None})
        for rule, form, number, text, stop in s["faults"]:
            turns = clean_turns(s)
            assert turns[number - 1]["role"] == "user", (s["id"], rule)
            turns[number - 1] = {"number": number, "role": "user", "text": text, "stop": stop}
            if stop:  # the conversation ends at the planted stop
                turns = turns[:number]
            out.append({"id": f"{s['id']}-{rule}", "scenario": scenario, "turns": turns,
                        "fault": {"turn": number, "rule": rule, "form": form}})
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
