"""docs/memlint.schema.json, the JSON Schema of [tool.memlint]: it is what memlint.commands.schema
generates from the configuration's own key table, and it accepts what memlint accepts and rejects
what memlint rejects (checked against the real jsonschema validator and the real command line)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import tomllib
from conftest import EVAL_LOOP, memlint_subprocess, write

from memlint.commands.schema import json_schema
from memlint.config import SCHEMA

REPO = Path(__file__).resolve().parent.parent
SCHEMA_FILE = REPO / "docs" / "memlint.schema.json"


def test_the_committed_schema_is_the_generated_one():
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == json_schema(), "run `make docs`"
    assert set(json_schema()["properties"]) == set(SCHEMA)


def test_the_readme_configuration_is_valid():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[tool\.memlint\]\n.*?)```", readme, re.S).group(1)
    config = tomllib.loads(block)["tool"]["memlint"]
    jsonschema.Draft7Validator(json_schema()).validate(config)


@pytest.mark.parametrize(
    "toml",
    ['unsafe-fixes = "yes"', "selct = []", "memory-headroom = 1.5", "min-retained-chain = 1", 'gpu-memory = ["24GiB"]'],
)
def test_what_the_schema_rejects_memlint_rejects(tmp_path, toml):
    config = tomllib.loads(toml)
    assert list(jsonschema.Draft7Validator(json_schema()).iter_errors(config))
    write(tmp_path / "memlint.toml", toml + "\n")
    write(tmp_path / "train.py", EVAL_LOOP)
    result = memlint_subprocess("check", "--no-cache", "train.py", cwd=tmp_path)
    assert result.returncode == 2 and "memlint.toml" in result.stderr
