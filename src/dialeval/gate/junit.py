"""JUnit XML of a gate: one test case per rule, so CI pages list each rule's outcome."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from dialeval.gate.evaluate import GateResult


def junit_xml(result: GateResult) -> str:
    """The ``<testsuites>`` document of ``result`` (a failed rule is a ``<failure>``, an undecided
    one ``<skipped>`` with its reason)."""
    failures = sum(1 for o in result.outcomes if o.failed)
    skipped = sum(1 for o in result.outcomes if o.status == "undecided")
    suites = ET.Element("testsuites", tests=str(len(result.outcomes)), failures=str(failures))
    suite = ET.SubElement(suites, "testsuite", name="dialeval gate", tests=str(len(result.outcomes)), failures=str(failures),
                          errors="0", skipped=str(skipped))
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="run", value=result.run)
    if result.baseline:
        ET.SubElement(props, "property", name="baseline", value=result.baseline)
    for reason in result.allowed_incomplete:
        ET.SubElement(props, "property", name="allow-incomplete", value=reason)
    for outcome in result.outcomes:
        case = ET.SubElement(suite, "testcase", classname="dialeval.gate", name=outcome.rule)
        if outcome.passed:
            ET.SubElement(case, "system-out").text = outcome.message
        elif outcome.status == "undecided":
            ET.SubElement(case, "skipped", message=outcome.message)
        else:
            ET.SubElement(case, "failure", message=outcome.message, type="GateFailure").text = outcome.message
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(result), encoding="utf-8")
    return path
