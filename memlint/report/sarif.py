"""`sarif`: SARIF 2.1.0, as GitHub code scanning and other SARIF viewers read it.

Every rule (and the reserved codes) is listed in `tool.driver.rules` with its full documentation and
help URI, so a viewer can explain a finding without memlint installed. Artifact URIs are relative to
the working directory (`%SRCROOT%`); columns count Unicode code points, as memlint's do. Notebook
findings keep their cell-relative positions and carry the cell in the message and in `properties`.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path, PurePosixPath
from typing import Sequence

from memlint import __version__
from memlint.diagnostics import Diagnostic, Edit, Severity
from memlint.report import ReportOptions
from memlint.report.common import TOOL_NAME, located_message, rule_catalogue
from memlint.report.fingerprints import content_fingerprint

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_location(filename: str) -> dict:
    path = PurePosixPath(filename)
    if path.is_absolute():
        return {"uri": Path(filename).as_uri()}
    return {"uri": urllib.parse.quote(path.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def _region(start, end) -> dict:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _replacement(edit: Edit) -> dict:
    return {"deletedRegion": _region(edit.location, edit.end_location), "insertedContent": {"text": edit.content}}


def _result(d: Diagnostic, rule_index: dict[str, int]) -> dict:
    result = {
        "ruleId": d.code,
        "level": LEVELS[d.severity],
        "message": {"text": located_message(d)},
        "locations": [
            {"physicalLocation": {"artifactLocation": artifact_location(d.filename), "region": _region(d.location, d.end_location)}}
        ],
        "partialFingerprints": {"memlintContent/v1": content_fingerprint(d)},
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    places = [place for place in d.related if place.cell == d.cell]  # a cell's rows are its own: same cell only
    if places:
        result["relatedLocations"] = [
            {
                "id": number,
                "message": {"text": place.message},
                "physicalLocation": {"artifactLocation": artifact_location(d.filename), "region": _region(place.location, place.end_location)},
            }
            for number, place in enumerate(places)
        ]
    if d.fix is not None:
        description = d.fix.message if d.fix.is_safe else f"{d.fix.message} (unsafe fix)"
        result["fixes"] = [
            {
                "description": {"text": description},
                "artifactChanges": [
                    {"artifactLocation": artifact_location(d.filename), "replacements": [_replacement(e) for e in d.fix.edits]}
                ],
            }
        ]
    if d.cell is not None:
        result["properties"] = {"cell": d.cell}
    return result


def _rules() -> list[dict]:
    return [
        {
            "id": info.code,
            "name": info.name,
            "shortDescription": {"text": info.summary},
            "fullDescription": {"text": info.description},
            "help": {"text": info.documentation, "markdown": info.documentation},
            **({"helpUri": info.url} if info.url else {}),  # only where rule pages are hosted (MEMLINT_DOCS_URL)
            "defaultConfiguration": {"level": LEVELS[info.severity]},
        }
        for info in rule_catalogue()
    ]


def sarif_log(diagnostics: Sequence[Diagnostic]) -> dict:
    rules = _rules()
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, rule_index) for d in diagnostics],
            }
        ],
    }


class SarifReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return json.dumps(sarif_log(diagnostics), indent=2, ensure_ascii=False) + "\n"


def reporter(name: str) -> SarifReporter:
    return SarifReporter()
