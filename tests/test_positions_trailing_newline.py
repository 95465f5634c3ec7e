"""Positions of files with and without a trailing newline, after leading comments or blank lines:
each must equal libcst's whole-module PositionProvider (a file starting with a comment and lacking
its final newline was reported one line too high)."""

from __future__ import annotations

import itertools
import json

import pytest
from integration_helpers import memlint
from libcst.metadata import MetadataWrapper, PositionProvider

from memlint.pipeline.positions import node_positions
from memlint.pipeline.tree import descendants, parse_module

HEADERS = ["", "# c\n", "\n\n", "# a\n\n# b\n", "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"]
BODIES = [
    "import torch",
    "import torch\nx = torch.zeros(3)",
    "import torch\n\ndef f(x):\n    return (x +\n            1)",
    "import torch\nif x:\n    y = 1\nelse:\n    y = 2",
]
FOOTERS = ["", "\n# end", "\n\n# end\n# more"]
CASES = [
    (header, body, footer, newline, trailing)
    for header, body, footer in itertools.product(HEADERS, BODIES, FOOTERS)
    for newline in ("\n", "\r\n", "\r")
    for trailing in (True, False)
]


def _text(header: str, body: str, footer: str, newline: str, trailing: bool) -> str:
    text = header + body + footer + ("\n" if trailing else "")
    return text.replace("\n", newline)


@pytest.mark.parametrize("case", CASES, ids=lambda case: repr(_text(*case))[:60])
def test_positions_equal_the_whole_module_provider(case):
    text = _text(*case)
    module = parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    # Nodes of the statements only: a header or footer comment would take the whole-module path.
    nodes = [node for statement in module.body for node in (statement, *descendants(statement))]
    assert node_positions(module, text, nodes) == {node: expected[node] for node in nodes}


@pytest.mark.parametrize("trailing", [True, False])
def test_reported_line_of_a_file_that_starts_with_a_comment(tmp_path, trailing: bool):
    source = "# a comment\nimport torch\n\ntotal = 0\nfor x, y in loader:\n    total += model(x).sum()"
    (tmp_path / "t.py").write_text(source + ("\n" if trailing else ""), encoding="utf-8")
    result = memlint("check", "--output-format", "json", "t.py", cwd=tmp_path)
    (finding,) = json.loads(result.stdout)
    assert (finding["location"]["row"], finding["location"]["column"]) == (6, 5)
