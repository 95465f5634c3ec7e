"""The example plugin package of docs/plugins.md, installed as a user installs it: its rule is found
through the `memlint.rules` entry point, runs with `--extend-select`, and passes its own examples."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "examples" / "memlint-plugin-example"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("example") / "package"
    shutil.copytree(EXAMPLE, source)  # building writes build/ and *.egg-info beside the sources: not into the checkout
    # --no-deps: torch-memlint is this checkout, already importable; --no-build-isolation: offline
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--target", str(target), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def memlint(env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_installed_plugin_rule_is_listed_and_runs(installed, tmp_path):
    listed = [line for line in memlint(installed, tmp_path, "rules").stdout.splitlines() if line.startswith("ACME001")]
    assert len(listed) == 1 and "load-without-map-location" in listed[0] and listed[0].endswith("(off by default)")
    (tmp_path / "load.py").write_text('import torch\nstate = torch.load("model.pt")\nok = torch.load("m.pt", map_location="cpu")\n')
    result = memlint(installed, tmp_path, "check", "--no-cache", "--extend-select", "ACME001", "--output-format", "concise", "load.py")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0].startswith("load.py:2:9: ACME001 `torch.load` without `map_location`")
    assert "load.py:3" not in result.stdout


def test_the_plugin_passes_its_own_examples(installed, tmp_path):
    program = (
        "from acme_memlint_rules import LoadWithoutMapLocation as R\n"
        "from memlint.testing import lint_example\n"
        "assert all(lint_example(R, e) == [] for e in R.VALID)\n"
        "assert all(len(lint_example(R, e)) == 1 for e in R.INVALID)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=installed, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


LOAD = 'import torch\nstate = torch.load("model.pt")\n'


def codes(result: subprocess.CompletedProcess) -> list[str]:
    return [line.split()[1] for line in result.stdout.splitlines() if line.startswith("load.py:")]


@pytest.mark.parametrize(
    ("config", "args", "expected"),
    [
        ("", [], []),  # installed is not selected: a plain check does not run it
        ('select = ["ALL"]\n', [], []),  # ALL is memlint's default set, never a plugin's rules
        ("", ["--select", "ALL"], []),
        ("", ["--extend-select", "ACME"], ["ACME001"]),  # a prefix selects a plugin's rules
        ("", ["--extend-select", "ACME001"], ["ACME001"]),
        ('extend-select = ["ACME"]\n', [], ["ACME001"]),
        ('select = ["ACME001"]\n', [], ["ACME001"]),
        ('extend-select = ["ACME"]\n', ["--ignore", "ACME"], []),
        ('extend-select = ["ACME"]\nignore = ["ALL"]\n', [], []),
    ],
)
def test_plugin_rules_are_off_until_selected(installed, tmp_path, config, args, expected):
    (tmp_path / "memlint.toml").write_text(config)
    (tmp_path / "load.py").write_text(LOAD)
    result = memlint(installed, tmp_path, "check", "--no-cache", "--output-format", "concise", *args, "load.py")
    assert result.returncode == (1 if expected else 0), result.stdout + result.stderr
    assert codes(result) == expected


def test_the_api_says_a_plugin_rule_is_off_by_default(installed, tmp_path):
    program = "from memlint.api import rules\nprint({r.code: r.default_enabled for r in rules()})\n"
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=installed, capture_output=True, text=True, timeout=120)
    listed = eval(done.stdout)  # noqa: S307 - our own program's dict of str -> bool
    assert listed["ACME001"] is False and listed["ML001"] is True, done.stderr
