"""The MMRC report's tables (both conditions side by side, with their changes and failures) and its glossary."""

from __future__ import annotations

from typing import Any

from dialeval.report.paired import system_test_lines
from dialeval.report.tables import ci, num, pct, row, rule
from dialeval.protocols.mmrc.data import ABILITIES, ABILITY_NAMES
from dialeval.protocols.mmrc.aggregation import CONDITION_LABEL


def _signed(value: float | None, as_pct: bool = False) -> str:
    if value is None:
        return ""
    return f"{num(100 * value, 1, signed=True)} pts" if as_pct else num(value, signed=True)


FAILURE_HEAD = row([
    "figure", "value", "95% CI", "change", "n", "cut off (judged as is)", "empty (scored 0)", "judge or helper failed (left out)",
    "errored (left out)", "also",
])


def _row(name: str, value: str, change: str, figure: dict[str, Any], failed_key: str | None, also: str = "", digits: int = 2,
         scale: float = 1.0) -> str:
    failed = figure.get(failed_key, 0) if failed_key else "-"
    interval = ci(figure.get("ci"), digits, scale=scale)
    return row([name, value, interval, change, figure["n"], figure["cut_off"], figure["empty"], failed, figure["errored"], also])


def tables(m: dict[str, Any]) -> str:
    conds = m.get("conditions", {})
    d = m.get("deltas", {})
    lines = [
        "Judge scores are 0-5 means per ability; EP and IMP are precisions (0-1); RP is refusals given"
        " / refusals expected. Beside each figure: n (what it rests on) and the failures of each kind:"
        " the model under test's own (cut-off answers judged as they stand, empty answers scored 0) count"
        " in it; unreadable judge or helper verdicts and errored calls are left out. On the NOTE-TAKING"
        " table, change is against the responder alone. 95% CI: bootstrap interval over questions (n/a under two).",
    ]
    for cond, s in conds.items():
        delta = d if cond == "on" else {}
        lines += ["", f"**{CONDITION_LABEL[cond]}** (notes {cond})", "", FAILURE_HEAD, rule("lrrrrrrrrl")]
        for a in ABILITIES:
            lines.append(_row(f"{a} (0-5)", num(s["abilities"][a]["mean"]), _signed(delta.get(a)), s["abilities"][a], "judge_failed"))
        n_overall = sum(s["abilities"][a]["n"] for a in ABILITIES)
        lines.append(row(["overall (0-5)", num(s["overall"]), ci(s.get("overall_ci")), _signed(delta.get("overall")), n_overall, None, None,
                          None, None, "mean of the ability means"]))
        ep, imp, rp = s["EP"], s["IMP"], s["RP"]
        lines.append(_row("EP", num(ep["value"], 3), _signed(delta.get("EP")), ep, "helper_failed", f"named no item: {ep['named_none']} (scored 0)",
                          digits=3))
        lines.append(_row("IMP", num(imp["value"], 3), _signed(delta.get("IMP")), imp, None, digits=3))
        lines.append(
            _row("RP", pct(rp["value"]), _signed(delta.get("RP"), as_pct=True), rp, "helper_failed",
                 f"{rp['refused']} of {rp['n']} refused; refusals where an answer was due: {rp['false_refusals']} of {rp['answerable']}",
                 digits=1, scale=100)
        )  # fmt: skip
        answers = s["answers"]
        counts = ", ".join(f"{k} {v}" for k, v in sorted(answers.items()) if k != "total")
        cut = f"; notes cut to fit the context window: {s['notes_cut']}" if cond == "on" else ""
        lines += ["", f"Answers: {answers['total']} ({counts}){cut}."]
    nt = m.get("note_taking", {})
    if nt.get("updates"):
        lines += ["", f"Note-taker: {nt['updates']} updates, {nt['ok']} usable, {nt['unusable']} unusable (note kept unchanged)."]
    lines += system_test_lines(m.get("condition_tests") or [], unit="question", scores="judge scores", compared="NOTE-TAKING off (A) and on (B)")
    if conds:
        lines += ["", "Radar chart of the six abilities: `plots/radar.png`, under Figures."]
    return "\n".join(lines)


GLOSSARY = {**ABILITY_NAMES, "EP": "extraction precision", "IMP": "image management precision", "RP": "refuse precision"}
