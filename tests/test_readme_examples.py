"""The README's examples are what the commands print (issue 26.5): every ```console block that shows
output (lines after a `$ memlint ...` prompt) is run, in order, in a fresh directory holding the
file its `<!-- example: PATH is FIXTURE -->` comment names, and its output compared line for line."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

EXAMPLE_COMMENT = re.compile(r"<!-- example: (\S+) is (\S+)")


def examples(text: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(path, fixture, [(command, expected output)]) of each console block that shows output."""
    found = []
    for match in re.finditer(r"(?:^([^\n]*)\n)?```console\n(.*?)```", text, flags=re.M | re.S):
        comment, body = match.group(1) or "", match.group(2)
        if not re.search(r"^\$ ", body, flags=re.M):
            continue  # a list of commands, not an example with its output
        setup = EXAMPLE_COMMENT.match(comment)
        assert setup, f"a console example with output must say what it runs on: {body[:60]!r}"
        steps = []
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            steps.append((command, output))
        found.append((setup.group(1), setup.group(2), steps))
    return found


def test_examples_are_found():
    (example,) = examples((REPO / "README.md").read_text(encoding="utf-8"))  # the README's one example
    assert [command for command, _ in example[2]] == ["memlint check src/", "memlint --fix src/"]
    assert examples("```console\nmemlint check .   # a command list\n```\n") == []


@pytest.mark.parametrize(
    "path, fixture, steps", examples((REPO / "README.md").read_text(encoding="utf-8")), ids=lambda value: str(value)[:30]
)
def test_readme_example_is_the_real_output(tmp_path: Path, path: str, fixture: str, steps: list[tuple[str, str]]):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / fixture, tmp_path / path)
    environment = {**os.environ, "NO_COLOR": "1"}
    for command, expected in steps:
        words = shlex.split(command)
        assert words[0] == "memlint", command
        result = subprocess.run(
            [sys.executable, "-m", "memlint", *words[1:]], cwd=tmp_path, capture_output=True, text=True,
            encoding="utf-8", env=environment, timeout=120,
        )  # fmt: skip
        assert result.stdout + result.stderr == expected, f"`{command}` printed:\n{result.stdout}{result.stderr}"
