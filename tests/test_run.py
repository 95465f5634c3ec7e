"""One Run for every entry point (memlint/run.py, issue 26.4): the command line, standard input and
the API give the same findings, and each setting has one carrier (a subproject's `unsafe-fixes`
means the same to the report and to `--fix`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from integration_helpers import REPO, memlint

# An unsafe ML001 fix: the accumulated value is returned, so detaching it may change what callers get.
UNSAFE_ONLY = textwrap.dedent(
    """\
    import torch
    def validate(model, loader, criterion):
        total = 0
        for x, y in loader:
            total += criterion(model(x), y)
        return total
    """
)


def api(code: str, cwd: Path) -> object:
    """Run `code` with memlint.api in a fresh interpreter, as a program uses it; its printed JSON."""
    result = subprocess.run(
        [sys.executable, "-c", f"import json\nfrom memlint import api\n{code}"],
        cwd=cwd, capture_output=True, text=True, encoding="utf-8", timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _record(finding: dict) -> tuple:
    return (finding["filename"], finding["code"], finding["location"]["row"], finding["location"]["column"], finding["message"])


# ---------------------------------------------------------------------------- one carrier for unsafe-fixes


@pytest.fixture
def subproject(tmp_path: Path) -> Path:
    """A repository whose subproject turns unsafe fixes on; memlint runs from the repository root."""
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "memlint.toml").write_text("unsafe-fixes = true\n", encoding="utf-8")
    (tmp_path / "sub" / "v.py").write_text(UNSAFE_ONLY, encoding="utf-8")
    return tmp_path


def test_a_subprojects_unsafe_fixes_are_shown_as_they_are_applied(subproject: Path):
    shown = memlint("check", ".", cwd=subproject)
    assert shown.returncode == 1
    assert "[*] 1 fixable with the `--fix` option." in shown.stdout, shown.stdout
    assert "hidden fix" not in shown.stdout
    assert "sub/v.py:5:9: ML001 [*]" in shown.stdout
    fixed = memlint("check", "--fix", ".", cwd=subproject)
    assert fixed.returncode == 0, fixed.stdout
    assert "Fixed 1 finding." in fixed.stdout
    assert ".detach()" in (subproject / "sub" / "v.py").read_text(encoding="utf-8")


def test_no_unsafe_fixes_on_the_command_line_wins_over_the_subproject(subproject: Path):
    shown = memlint("check", "--no-unsafe-fixes", ".", cwd=subproject)
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in shown.stdout
    fixed = memlint("check", "--no-unsafe-fixes", "--fix", ".", cwd=subproject)
    assert fixed.returncode == 1
    assert (subproject / "sub" / "v.py").read_text(encoding="utf-8") == UNSAFE_ONLY


def test_standard_input_follows_the_subprojects_unsafe_fixes(subproject: Path):
    fixed = memlint("check", "--fix", "--stdin-filename", "sub/v.py", "-", cwd=subproject, input=UNSAFE_ONLY)
    assert fixed.returncode == 0, fixed.stderr
    assert ".detach()" in fixed.stdout
    outside = memlint("check", "--fix", "--stdin-filename", "v.py", "-", cwd=subproject, input=UNSAFE_ONLY)
    assert outside.returncode == 1 and outside.stdout == UNSAFE_ONLY  # the root's configuration: safe fixes only


def test_the_apis_fixes_follow_the_configuration_unless_told(subproject: Path):
    found = api(
        "print(json.dumps([api.fix_source(open('sub/v.py').read(), 'sub/v.py', select=['ML001']).fixed,"
        " api.fix_source(open('sub/v.py').read(), 'sub/v.py', select=['ML001'], unsafe=False).fixed]))",
        cwd=subproject,
    )
    assert found == [{"ML001": 1}, {}]


# ---------------------------------------------------------------------------- the API's paths are the CLI's


def test_api_lint_paths_reports_a_symlinked_file_once(tmp_path: Path):
    (tmp_path / "real.py").write_text(UNSAFE_ONLY, encoding="utf-8")
    (tmp_path / "link.py").symlink_to("real.py")
    found = api("print(json.dumps([d.to_json() for d in api.lint_paths(['.'], select=['ML001'])]))", cwd=tmp_path)
    assert [(f["filename"], f["location"]["row"]) for f in found] == [("real.py", 5)]
    cli = memlint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert [_record(f) for f in json.loads(cli.stdout)] == [_record(f) for f in found]


def test_api_lint_paths_refuses_a_path_that_does_not_exist(tmp_path: Path):
    outcome = api(
        "try:\n    api.lint_paths(['nope.py'])\nexcept FileNotFoundError as error:\n    print(json.dumps(error.filename))",
        cwd=tmp_path,
    )
    assert outcome == "nope.py"


# ---------------------------------------------------------------------------- every entry point, the same findings


def test_fixtures_give_the_same_findings_through_the_cli_stdin_and_the_api():
    """`memlint check fixtures`, `memlint check --stdin-filename F -` per file, `api.lint_paths` and
    `api.lint_source` per file: one Run each, the same findings."""
    cli = memlint("check", "--select", "ALL", "--no-cache", "--output-format", "json", "fixtures", cwd=REPO)
    assert cli.returncode == 1, cli.stderr
    by_cli = sorted(_record(f) for f in json.loads(cli.stdout))
    assert len({f[1] for f in by_cli}) >= 8  # many rules, not one

    by_api = sorted(_record(f) for f in api(
        "print(json.dumps([d.to_json() for d in api.lint_paths(['fixtures'], select=['ALL'])]))", cwd=REPO
    ))  # fmt: skip
    assert by_api == by_cli

    by_source = sorted(_record(f) for f in api(
        "import pathlib\n"
        "found = [d.to_json() for p in sorted(pathlib.Path('fixtures').glob('*.py'))"
        " for d in api.lint_source(p.read_text(encoding='utf-8'), p.as_posix(), select=['ALL'])]\n"
        "print(json.dumps(found))", cwd=REPO
    ))  # fmt: skip
    assert by_source == by_cli

    by_stdin = []
    for path in sorted((REPO / "fixtures").glob("*.py")):
        name = path.relative_to(REPO).as_posix()
        result = memlint("check", "--select", "ALL", "--output-format", "json", "--stdin-filename", name, "-",
                         cwd=REPO, input=path.read_text(encoding="utf-8"))  # fmt: skip
        assert result.returncode in (0, 1), result.stderr
        by_stdin.extend(_record(f) for f in json.loads(result.stdout))
    # Standard input lints each file as a project of its own: the fixtures do not lean on each other.
    assert sorted(by_stdin) == by_cli
