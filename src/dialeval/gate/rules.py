"""Gate rules: thresholds on a run's figures and regressions against a baseline.

Why: a CI script wants one small YAML file it can read at a glance::

    rules:
      - "quality.mean >= 3"            # a threshold on any figure of the run
      - "failures.share <= 0.02"
      - regression: quality            # against --baseline, on the units both judged
        margin: 0.2                    # fail only if the drop is surely larger than this
        when_undecided: fail           # optional: an undecided comparison fails (default: skipped)

A rules file is checked like data before anything is evaluated: finite numbers only,
duplicate keys refused, unknown fields named with the closest known one, and a file that
is not YAML text (binary, nested thousands deep) refused in one line, naming file and rule.
"""

from __future__ import annotations

import difflib
import math
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


MAX_BYTES = 1_000_000  # a rules file is a few lines; anything larger is not one
MAX_DEPTH = 20  # nesting a rules file can need (a list of mappings): deeper is not a rules file
SHOWN = 80  # characters of a value quoted in a message
MAX_PROBLEMS = 10  # problems listed at once; the rest counted
UNDECIDED = ("pass", "fail")  # what an undecided regression counts as: pass (skipped, said) or fail
TOP_KEYS = ("rules", "when_undecided")
REGRESSION_KEYS = ("regression", "margin", "when_undecided")


class GateError(ConfigError):
    """Gate input that cannot be used (rules file, unknown figure, missing baseline): exit 2."""


def shown(value: Any) -> str:
    """``repr(value)``, cut to :data:`SHOWN` characters: a message quotes, never dumps."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def joined(problems: list[str]) -> str:
    """At most :data:`MAX_PROBLEMS` lines, then how many more."""
    more = len(problems) - MAX_PROBLEMS
    return "\n".join(problems[:MAX_PROBLEMS] + ([f"... and {more} more"] if more > 0 else []))


def closest(name: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"


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
    when_undecided: str = "pass"  # "fail": a comparison the units cannot decide fails the rule

    @property
    def name(self) -> str:
        return f"no regression of {self.dimension} beyond {self.margin:g}"


Rule = Threshold | Regression


def finite(value: Any, where: str, what: str, *, low: float | None = None) -> float:
    """A finite number (not a boolean, NaN or infinity), at least ``low``; else :class:`GateError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (low is not None and value < low):
        bound = f" >= {low:g}" if low is not None else ""
        raise GateError(f"{where}: {what!r} must be a finite number{bound}, found {shown(value)}")
    return float(value)


def parse_rule(text: str, where: str = "rule") -> Threshold:
    """One threshold written as a string (``"relevance.mean >= 4"``)."""
    match = THRESHOLD.match(text) if len(text) <= 500 else None
    if not match:
        raise GateError(f"{where}: {shown(text)} is not '<figure> <op> <number>' with op one of {', '.join(OPERATORS)}")
    return Threshold(match["figure"], match["op"], finite(float(match["value"]), where, "value"))


def undecided_choice(value: Any, where: str) -> str:
    if value not in UNDECIDED:
        raise GateError(f"{where}: 'when_undecided' takes {' or '.join(UNDECIDED)}, found {shown(value)}")
    return str(value)


def rule_from(entry: Any, where: str, when_undecided: str = "pass") -> Rule:
    """A rule from one entry of the ``rules:`` list (a string or a ``regression:`` mapping)."""
    if isinstance(entry, str):
        return parse_rule(entry, where)
    if isinstance(entry, dict) and "regression" in entry:
        unknown = [str(k) for k in entry if k not in REGRESSION_KEYS]
        if unknown:
            raise GateError(f"{where}: unknown key {shown(unknown[0])}{closest(unknown[0], REGRESSION_KEYS)}; "
                            f"a regression rule takes {', '.join(REGRESSION_KEYS)}")
        dimension = entry["regression"]
        if not isinstance(dimension, str) or not dimension or len(dimension) > 200:
            raise GateError(f"{where}: 'regression' must name a criterion, e.g. regression: quality (found {shown(dimension)})")
        margin = finite(entry.get("margin", 0.0), where, "margin", low=0.0)
        return Regression(dimension, margin, undecided_choice(entry.get("when_undecided", when_undecided), where))
    raise GateError(f"{where}: expected a string such as \"quality.mean >= 3\" or a mapping with 'regression:', found {shown(entry)}")


def _no_duplicates(loader: Any, node: Any, deep: bool = False) -> Any:
    """Build a mapping, refusing a key written twice (PyYAML keeps the last one silently)."""
    import yaml

    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {shown(key)}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


def _too_deep(text: str, limit: int) -> bool:
    """Whether the YAML nests deeper than ``limit``, from the scanner's tokens (iterative):
    composing a 5,000-deep document would exhaust Python's recursion first."""
    import yaml

    opening = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken, yaml.BlockSequenceStartToken,
               yaml.BlockMappingStartToken)
    closing = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)
    depth = 0
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        if isinstance(token, opening):
            depth += 1
            if depth > limit:
                return True
        elif isinstance(token, closing):
            depth -= 1
    return False


def read_yaml(path: Path) -> Any:
    """The YAML document of a rules file, or :class:`GateError` in one line: unreadable, not
    UTF-8 text, too large, nested too deep, duplicate keys, not YAML."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise GateError(f"{path}: cannot read the rules file ({err.strerror or err})") from None
    if len(raw) > MAX_BYTES:
        raise GateError(f"{path}: {len(raw)} bytes is not a rules file (at most {MAX_BYTES})")
    try:
        text = raw.decode("utf-8")
        if "\x00" in text:
            raise UnicodeDecodeError("utf-8", raw, 0, 1, "NUL byte")
    except UnicodeDecodeError:
        raise GateError(f"{path}: not a text file (binary or not UTF-8): a rules file is YAML text") from None
    try:
        if _too_deep(text, MAX_DEPTH):
            raise GateError(f"{path}: nested more than {MAX_DEPTH} levels deep: not a rules file")
        return yaml.load(text, Loader=Loader)  # noqa: S506 (a SafeLoader that also refuses duplicate keys)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise GateError(f"{path}: not a valid rules file{where}: {str(problem)[:200]}") from None


def load_rules(path: str | Path) -> list[Rule]:
    """The rules of a gates YAML file (a ``rules:`` list, optionally ``when_undecided:``)."""
    path = Path(path)
    data = read_yaml(path)
    if isinstance(data, dict):
        unknown = [str(k) for k in data if k not in TOP_KEYS]
        if unknown:
            raise GateError(f"{path}: unknown key {shown(unknown[0])}{closest(unknown[0], TOP_KEYS)}")
    rules = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(rules, list) or not rules:
        raise GateError(f"{path}: expected a non-empty 'rules:' list")
    default = undecided_choice(data.get("when_undecided", "pass"), str(path))
    parsed, problems = [], []
    for i, entry in enumerate(rules, 1):  # every bad rule named at once
        try:
            parsed.append(rule_from(entry, f"{path}, rule {i}", default))
        except GateError as err:
            problems.append(str(err))
    if problems:
        raise GateError(joined(problems))
    return parsed
