"""Gate rules: thresholds on a run's figures and regressions against a baseline.

Why: a CI script wants one small YAML file it can read at a glance::

    rules:
      - "quality.mean >= 3"            # a threshold on any figure of the run
      - "failures.share <= 0.02"
      - regression: quality            # against --baseline, on the units both judged
        margin: 0.2                    # fail only if the drop is surely larger than this

A rule that cannot be read stops before anything is evaluated, naming file and rule.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dialeval.errors import ConfigError

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq,
}
THRESHOLD = re.compile(r"^\s*(?P<figure>[^<>=]+?)\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)\s*$")


class GateError(ConfigError):
    """Gate input that cannot be used (rules file, unknown figure, missing baseline): exit 2."""


@dataclass(frozen=True)
class Threshold:
    """``figure op value``, e.g. ``quality.mean >= 3``."""

    figure: str
    op: str
    value: float

    @property
    def name(self) -> str:
        return f"{self.figure} {self.op} {self.value:g}"

    def holds(self, actual: float) -> bool:
        return OPERATORS[self.op](actual, self.value)


@dataclass(frozen=True)
class Regression:
    """No drop of ``dimension`` larger than ``margin`` against the baseline, paired per unit."""

    dimension: str
    margin: float = 0.0

    @property
    def name(self) -> str:
        return f"no regression of {self.dimension} beyond {self.margin:g}"


Rule = Threshold | Regression


def parse_rule(text: str, where: str = "rule") -> Threshold:
    """One threshold written as a string (``"relevance.mean >= 4"``)."""
    match = THRESHOLD.match(text)
    if not match:
        raise GateError(f"{where}: {text!r} is not '<figure> <op> <number>' with op one of {', '.join(OPERATORS)}")
    return Threshold(match["figure"], match["op"], float(match["value"]))


def rule_from(entry: Any, where: str) -> Rule:
    """A rule from one entry of the ``rules:`` list (a string or a ``regression:`` mapping)."""
    if isinstance(entry, str):
        return parse_rule(entry, where)
    if isinstance(entry, dict) and "regression" in entry:
        unknown = sorted(set(entry) - {"regression", "margin"})
        if unknown:
            raise GateError(f"{where}: unknown key(s) {', '.join(unknown)} (a regression rule takes 'regression' and 'margin')")
        dimension, margin = entry["regression"], entry.get("margin", 0.0)
        if not isinstance(dimension, str) or not dimension:
            raise GateError(f"{where}: 'regression' must name a criterion, e.g. regression: quality")
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or margin < 0:
            raise GateError(f"{where}: 'margin' must be a number >= 0, found {margin!r}")
        return Regression(dimension, float(margin))
    raise GateError(f"{where}: expected a string such as \"quality.mean >= 3\" or a mapping with 'regression:', found {entry!r}")


def load_rules(path: str | Path) -> list[Rule]:
    """The rules of a gates YAML file (a ``rules:`` list)."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise GateError(f"{path}: cannot read the rules file ({err.strerror or err})") from None
    except yaml.YAMLError as err:
        raise GateError(f"{path}: not valid YAML ({err})") from None
    rules = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(rules, list) or not rules:
        raise GateError(f"{path}: expected a non-empty 'rules:' list")
    parsed, problems = [], []
    for i, entry in enumerate(rules, 1):  # every bad rule named at once
        try:
            parsed.append(rule_from(entry, f"{path}, rule {i}"))
        except GateError as err:
            problems.append(str(err))
    if problems:
        raise GateError("\n".join(problems))
    return parsed
