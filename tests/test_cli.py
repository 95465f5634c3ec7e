"""The command line as users type it: findings, exit codes, formats, fixes, selection, config."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import EVAL_LOOP, invoke, memlint_subprocess, write


def test_findings_exit_one_and_point_at_the_line(project):
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "train.py")
    assert result.exit_code == 1
    assert "train.py:6:5: ML001 [*] `total` accumulates `loss`" in result.output
    assert "^^^^^^^^^^^^^ ML001" in result.output
    assert "Found 1 finding." in result.output


def test_clean_code_exits_zero(project):
    write(project / "ok.py", "import torch\nprint(torch.ones(2))\n")
    result = invoke("ok.py")
    assert result.exit_code == 0
    assert "All checks passed!" in result.output


def test_fix_as_typed_without_subcommand(project):
    path = write(project / "src" / "train.py", EVAL_LOOP)
    result = memlint_subprocess("--fix", "src/", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "total += loss.detach()" in path.read_text()
    assert "Fixed 1 finding." in result.stdout
    again = memlint_subprocess("--fix", "src/", cwd=project)
    assert again.returncode == 0
    assert "All checks passed!" in again.stdout


def test_diff_writes_nothing(project):
    path = write(project / "train.py", EVAL_LOOP)
    before = path.read_bytes()
    result = invoke("check", "--diff", "train.py")
    assert result.exit_code == 1
    assert "-    total += loss\n+    total += loss.detach()\n" in result.output
    assert path.read_bytes() == before


def test_unsafe_fix_needs_the_flag(project):
    source = """
    import torch
    def validate(model, loader, criterion):
        total = 0
        for x, y in loader:
            total += criterion(model(x), y)
        return total
    """
    path = write(project / "v.py", source)
    result = invoke("check", "--select", "ML001", "--fix", "v.py")
    assert result.exit_code == 1
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)" in result.output
    assert ".detach()" not in path.read_text()
    result = invoke("check", "--select", "ML001", "--fix", "--unsafe-fixes", "v.py")
    assert result.exit_code == 0
    assert "total += criterion(model(x), y).detach()" in path.read_text()


def test_exit_non_zero_on_fix_and_show_fixes(project):
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "--fix", "--exit-non-zero-on-fix", "--show-fixes", "train.py")
    assert result.exit_code == 1
    assert "Fixes applied:\n- train.py:\n    1 × ML001 (accumulated-graph)" in result.output
    assert result.output.count("1 finding") == 1  # the count once: "Fixed 1 finding." in the summary
    assert result.output.endswith("Fixed 1 finding.\n")


def test_exit_zero(project):
    write(project / "train.py", EVAL_LOOP)
    assert invoke("check", "--exit-zero", "train.py").exit_code == 0


def test_json_contract(project):
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "--output-format", "json", "train.py")
    findings = json.loads(result.output)
    assert findings == [
        {
            "code": "ML001",
            "name": "accumulated-graph",
            "message": findings[0]["message"],
            "severity": "warning",
            "filename": "train.py",
            "location": {"row": 6, "column": 5},
            "end_location": {"row": 6, "column": 18},
            "fix": {
                "applicability": "safe",
                "message": "Accumulate `loss.detach()` (it stays on the device: no sync per step)",
                "edits": [
                    {"content": ".detach()", "location": {"row": 6, "column": 18}, "end_location": {"row": 6, "column": 18}}
                ],
            },
            "url": None,  # no help link unless MEMLINT_DOCS_URL says where the rule pages are hosted
            "cell": None,
            "related": [  # the loop, and where the accumulator is read after it
                {"message": "the loop: each iteration's graph stays reachable from the accumulator",
                 "location": {"row": 4, "column": 13}, "end_location": {"row": 4, "column": 19}, "cell": None},
                {"message": "`total` is read here, after the loop",
                 "location": {"row": 7, "column": 7}, "end_location": {"row": 7, "column": 12}, "cell": None},
            ],
        }
    ]


def test_json_lines_and_concise(project):
    write(project / "a.py", EVAL_LOOP)
    write(project / "b.py", EVAL_LOOP)
    lines = invoke("check", "--output-format", "json-lines", ".").output.splitlines()
    assert [json.loads(line)["filename"] for line in lines] == ["a.py", "b.py"]
    concise = invoke("check", "--output-format", "concise", ".").output.splitlines()
    assert concise[0].startswith("a.py:6:5: ML001 [*] ")
    assert concise[1].startswith("b.py:6:5: ML001 [*] ")


def test_statistics(project):
    write(project / "a.py", EVAL_LOOP)
    write(project / "b.py", EVAL_LOOP)
    result = invoke("check", "--statistics", ".")
    assert result.output.splitlines()[0] == "2\tML001\t[*] accumulated-graph"


def test_select_and_ignore(project):
    write(project / "train.py", EVAL_LOOP)
    assert invoke("check", "--ignore", "ML001", "train.py").exit_code == 0
    assert invoke("check", "--ignore", "ML", "train.py").exit_code == 0
    assert invoke("check", "--select", "ML00", "train.py").exit_code == 1
    result = invoke("check", "--select", "ML999", "train.py")
    assert result.exit_code == 2
    assert "unknown rule selector 'ML999'" in result.output


def test_syntax_error_is_a_finding_and_the_run_goes_on(project):
    write(project / "broken.py", "import torch\ndef f(:\n    pass\n")
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "--output-format", "concise", ".")
    assert result.exit_code == 1
    assert "broken.py:2:7: ML000 SyntaxError: invalid syntax" in result.output
    assert "train.py:6:5: ML001" in result.output


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('import torch\nname = "\\x4"\n', "bad.py:2:"),  # CPython's parser refuses the escape
        ("import torch\nreturn 1\n", "bad.py:2:1: ML000 SyntaxError: 'return' outside function"),
        ("import torch\nclass Net:\n    yield 1\n", "bad.py:3:5: ML000 SyntaxError: 'yield' outside function"),
        ("import torch\nnonlocal model\n", "bad.py:2:1: ML000 SyntaxError: nonlocal declaration not allowed at module level"),
        ("import torch\nwhile True:\n    def f():\n        break\n", "bad.py:4:9: ML000 SyntaxError: 'break' outside loop"),
    ],
)
def test_what_python_refuses_after_parsing_is_a_syntax_error(project, source, expected):
    """libcst reads these, CPython does not: the file cannot run (not "All checks passed!")."""
    write(project / "bad.py", source)
    write(project / "train.py", EVAL_LOOP)
    result = memlint_subprocess("check", "--no-cache", "--output-format", "concise", ".", cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert expected in result.stdout
    assert "train.py:6:5: ML001" in result.stdout  # the run goes on
    if "\\x4" in source:
        assert "ML000 SyntaxError: (unicode error)" in result.stdout
    assert "ML900" not in result.stdout  # no rule reads the text CPython refuses


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nfor x in range(2):\n    if x:\n        break\n    continue\n",  # in a loop
        "import torch\ndef f():\n    def g():\n        nonlocal y\n    y = 1\n    return g\n",  # in a function
        "import torch\nf = lambda: (yield)\n",  # a lambda is a function
        'import torch\nname = "\\N{BULLET}"\n',  # a known character name
        'import torch\nname = "\\N{NO SUCH CHARACTER}"\n',  # unknown here, but names depend on the Unicode version
    ],
)
def test_what_python_accepts_passes(project, source):
    write(project / "ok.py", source)
    result = memlint_subprocess("check", "--no-cache", "ok.py", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed!" in result.stdout


def test_suppressions(project):
    source = EVAL_LOOP.replace("total += loss", "total += loss  # noqa: ML001")
    write(project / "a.py", source)
    write(project / "b.py", EVAL_LOOP.replace("total += loss", "total += loss  # memlint: ignore[ML001]"))
    write(project / "c.py", "# memlint: ignore-file\n" + EVAL_LOOP)
    write(project / "d.py", EVAL_LOOP.replace("total += loss", "total += loss  # noqa: ML002"))
    # lists as flake8 and Ruff read them: space- or comma-separated, other tools' codes beside ours
    write(project / "e.py", EVAL_LOOP.replace("total += loss", "total += loss  # noqa: E501 ML001"))
    write(project / "f.py", EVAL_LOOP.replace("total += loss", "total += loss  # noqa: E501, ML001"))
    write(project / "g.py", EVAL_LOOP.replace("total += loss", "total += loss  # noqa: E501 because it is long"))
    result = invoke("check", "--output-format", "concise", ".")
    assert [line.split(":")[0] for line in result.output.splitlines() if "ML001" in line] == ["d.py", "g.py"]


def test_config_select_and_per_file_ignores(project):
    (project / "pyproject.toml").write_text(
        '[tool.memlint]\nper-file-ignores = { "scripts/*" = ["ML001"] }\nextend-exclude = ["generated"]\n'
    )
    write(project / "scripts" / "a.py", EVAL_LOOP)
    write(project / "generated" / "b.py", EVAL_LOOP)
    write(project / "src" / "c.py", EVAL_LOOP)
    result = invoke("check", "--output-format", "concise", ".")
    assert [line.split(":")[0] for line in result.output.splitlines() if "ML001" in line] == ["src/c.py"]
    # A file named explicitly is linted even when excluded (unless --force-exclude).
    assert invoke("check", "generated/b.py").exit_code == 1
    assert invoke("check", "--force-exclude", "generated/b.py").exit_code == 0


def test_memlint_toml_wins_and_unknown_key_is_named(project):
    (project / "memlint.toml").write_text('selct = ["ML001"]\n')
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "train.py")
    assert result.exit_code == 2
    assert "memlint.toml: unknown key 'selct' (did you mean 'select'?)" in result.output


def test_config_errors_name_file_and_key(project):
    (project / "pyproject.toml").write_text('[tool.memlint]\nunsafe-fixes = "yes"\n')
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "train.py")
    assert result.exit_code == 2
    assert "pyproject.toml [tool.memlint]: invalid value for 'unsafe-fixes': expected true or false" in result.output
    (project / "pyproject.toml").write_text("[tool.memlint\n")
    result = invoke("check", "train.py")
    assert result.exit_code == 2 and "invalid TOML" in result.output
    (project / "pyproject.toml").write_text('[tool.memlint]\nselect = ["NOPE1"]\n')
    result = invoke("check", "train.py")
    assert result.exit_code == 2 and "unknown rule selector 'NOPE1'" in result.output


def test_explicit_config_option(project):
    config = project / "custom.toml"
    config.write_text('ignore = ["ML001"]\n')
    write(project / "train.py", EVAL_LOOP)
    assert invoke("check", "--config", str(config), "train.py").exit_code == 0


def test_missing_path_is_an_error_and_the_run_goes_on(project):
    write(project / "train.py", EVAL_LOOP)
    result = memlint_subprocess("check", "nope.py", "train.py", cwd=project)
    assert result.returncode == 2  # an error, as a usage error: CI must not go green on a typo
    assert "memlint: error: nope.py: no such file or directory" in result.stderr
    assert "train.py:6:5: ML001" in result.stdout  # the other paths are still checked


@pytest.mark.parametrize(
    "extra",
    [[], ["--exit-zero"], ["--diff"], ["--fix"], ["--statistics"], ["--show-files"], ["--add-noqa"],
     ["--baseline", "bl.json", "--write-baseline"]],
)  # fmt: skip
def test_only_a_missing_path_exits_2_and_never_passes(project, extra):
    write(project / "ok.py", "import torch\nprint(torch.ones(2))\n")
    result = memlint_subprocess("check", *extra, "does-not-exist.py", "ok.py", cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "memlint: error: does-not-exist.py: no such file or directory" in result.stderr
    assert "All checks passed!" not in result.stdout + result.stderr


def test_a_typo_of_a_command_is_an_unknown_command(project):
    write(project / "x.py", EVAL_LOOP)
    result = memlint_subprocess("confim", "x.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr == "memlint: error: unknown command 'confim' (did you mean 'confirm'?)\n"
    assert result.stdout == ""
    assert memlint_subprocess("chek", cwd=project).stderr.startswith("memlint: error: unknown command 'chek' (did you mean 'check'?)")


def test_a_word_far_from_every_command_is_a_missing_path(project):
    result = memlint_subprocess("typo_dir", cwd=project)
    assert result.returncode == 2
    assert "memlint: error: typo_dir: no such file or directory" in result.stderr


def test_an_existing_file_named_like_a_command_is_checked(project):
    write(project / "confim", EVAL_LOOP)  # a file, though its name is close to `confirm`
    write(project / "chek.py", EVAL_LOOP)
    result = memlint_subprocess("confim", "chek.py", cwd=project)
    assert result.returncode == 1, result.stderr
    assert "confim:6:5: ML001" in result.stdout and "chek.py:6:5: ML001" in result.stdout


def test_default_excludes(project):
    for directory in (".venv/lib", "build", "node_modules/x", "site-packages"):
        write(project / directory / "m.py", EVAL_LOOP)
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "--output-format", "concise")
    assert [line.split(":")[0] for line in result.output.splitlines() if "ML001" in line] == ["train.py"]


def test_fix_keeps_encoding_bom_newlines_and_mode(project):
    crlf = project / "crlf.py"
    crlf.write_bytes(("\ufeff" + EVAL_LOOP.lstrip("\n")).replace("\n", "\r\n").encode("utf-8"))
    os.chmod(crlf, 0o751)
    latin = project / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + EVAL_LOOP.lstrip("\n")).encode("latin-1"))
    result = invoke("check", "--fix", ".")
    assert result.exit_code == 0, result.output
    data = crlf.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"total += loss.detach()\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(crlf.stat().st_mode) == 0o751
    assert "# café".encode("latin-1") in latin.read_bytes()
    assert b"total += loss.detach()" in latin.read_bytes()


def test_rule_and_rules_commands(project):
    result = invoke("rule", "ML001")
    assert result.exit_code == 0
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety", "## Measured effect"):
        assert section in result.output
    assert invoke("rule", "accumulated-graph").output == result.output
    assert invoke("rule", "ML999").exit_code == 2
    listing = invoke("rules").output
    assert listing.startswith("ML001  accumulated-graph")
    rules = json.loads(invoke("rules", "--output-format", "json").output)
    assert rules[0]["code"] == "ML001" and rules[0]["severity"] == "warning"


def test_version(project):
    from memlint import __version__

    result = memlint_subprocess("--version", cwd=project)
    assert result.returncode == 0 and __version__ in result.stdout


def test_check_never_imports_torch(project):
    write(project / "train.py", EVAL_LOOP)
    code = (
        "import sys\n"
        "from memlint.cli import main\n"
        "try:\n"
        "    main(['check', '--fix', '--unsafe-fixes', 'train.py'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
        "print('TORCH-MODULES', bad)\n"
    )
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
    assert "TORCH-MODULES []" in result.stdout, result.stdout + result.stderr
