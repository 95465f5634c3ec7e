"""`junit`: JUnit XML, one test suite per file and one failed test case per finding, for CI systems
that show test reports (GitLab, Jenkins, Azure)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Sequence

from memlint.diagnostics import Diagnostic
from memlint.report import ReportOptions
from memlint.report.common import TOOL_NAME


def _where(d: Diagnostic) -> str:
    cell = f"cell {d.cell}, " if d.cell is not None else ""
    return f"{cell}line {d.location.row}, col {d.location.column}"


def junit_xml(diagnostics: Sequence[Diagnostic]) -> str:
    root = ET.Element("testsuites", name=TOOL_NAME, tests=str(len(diagnostics)), failures=str(len(diagnostics)), errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name=TOOL_NAME, tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname=TOOL_NAME)
    by_file: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    for filename, found in by_file.items():
        suite = ET.SubElement(
            root, "testsuite", name=filename, tests=str(len(found)), failures=str(len(found)), errors="0"
        )
        for d in found:
            case = ET.SubElement(
                suite, "testcase", name=f"{TOOL_NAME}.{d.code}", classname=filename, file=filename, line=str(d.location.row)
            )
            failure = ET.SubElement(case, "failure", message=d.message, type=d.code)
            failure.text = f"{_where(d)}, {d.message}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class JunitReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return junit_xml(diagnostics)


def reporter(name: str) -> JunitReporter:
    return JunitReporter()
