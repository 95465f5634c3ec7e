"""Statement-local positions must equal libcst's whole-module PositionProvider."""

from __future__ import annotations

import random

import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from memlint.pipeline.positions import node_positions
from memlint.pipeline.source import statement_rows
from memlint.pipeline.tree import descendants, parse_module

SOURCES = {
    "lf": "# header\n\nimport torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return (x +\n                1)\n# footer\n",
    "crlf": "# c\r\n\r\nimport torch\r\nx = 1\r\n\r\ndef f():\r\n    return torch.zeros(3)\r\n# end\r\n",
    "cr": "x=1;y=2\rz=3\r",
    "bom-no-trailing-newline": "\ufeffimport torch\nx = (1,\n  2)",
    "decorated": "@torch.no_grad()\n# between\ndef f(a,\n      b):\n    '''doc\n    string'''\n    return a\n",
}


# More statement shapes for the rows CPython's AST gives (statement_rows): semicolons, decorators
# with comments between, leading comments and blank lines, compound statements, a header.
SOURCES.update({
    "semicolons": "# h\nimport torch; import os\n\n\n# lead\nx = 1; y = 2;\nz = (3 +\n  4); w = 5\n",
    "decorators": "\n\n@a\n@b(1,\n   2)\n\n# c\n@c\nclass K:\n    pass\n# d\n\nasync def g():\n    await h()\n",
    "compound": "if x:\n    pass\n# dedented comment\nelse:\n    y = 1\n\n\nfor i in r:\n    for j in i:\n        pass\n    # inner\n# outer\nwhile 0: pass\ntry:\n    1\nfinally:\n    2\n",
    "strings": 'x = """a\nb\nc"""\ny = 1\ndef f():\n    """doc\n\n    more"""\n',
})


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("with_rows", [False, True], ids=["printed", "ast-rows"])
def test_every_node_is_placed_as_the_whole_module_provider_places_it(name, with_rows):
    import ast

    text = SOURCES[name]
    module = parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = list(descendants(module))
    rows = statement_rows(ast.parse(text.lstrip("\ufeff"))) if with_rows else None
    assert node_positions(module, text, nodes, rows) == {node: expected[node] for node in nodes}


def test_rows_that_do_not_describe_the_statements_are_not_used():
    text = "x = 1\ny = 2\n"
    module = parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = list(descendants(module))
    for wrong in ([1], [1, 1], [2, 1], [0, 2]):
        assert node_positions(module, text, nodes, wrong) == {node: expected[node] for node in nodes}


def test_a_few_nodes_of_a_large_file():
    text = "import torch\n" + "".join(f"def f{i}(x):\n    y = x * {i}\n    return torch.relu(y)\n\n" for i in range(300))
    module = parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    wanted = random.Random(0).sample(list(descendants(module)), 5)
    assert node_positions(module, text, wanted) == {node: expected[node] for node in wanted}


def test_the_module_itself_falls_back_to_the_whole_module_provider():
    module = parse_module("import torch\n")
    assert node_positions(module, "import torch\n", [module])[module].start.line == 1


@pytest.mark.parametrize("text", [
    "x = 1\n\n\n ", "x = 1\n\n \n", "x = 1\n\n\t", "def f():\n    pass\n\n\n ", "x = 1\n\n  # c",
    "x = 1\n# c\r", "x = 1\r", "x = 1\r\n\r", "def f():\n    pass\n\r# c\r", "# h\n\nx = 1\ny = 2\n\n\n ", "a\nb\n\n\n\n\n ", "a\nb\nc\n\n\n\n\n\n  # c\n",
])  # fmt: skip
@pytest.mark.parametrize("with_rows", [False, True], ids=["printed", "ast-rows"])
def test_statements_are_placed_right_when_libcst_prints_the_end_of_the_file_differently(text, with_rows):
    """libcst may drop blank lines after the last statement (before an indented blank or comment
    line) or a final lone \\r: positions inside the statements must not move (the fuzzing of
    generated programs found a finding placed one line down)."""
    import ast

    module = parse_module(text)
    assert module.code != text  # the case at hand
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)  # on the printed code
    inside = [node for statement in module.body for node in descendants(statement)]
    rows = statement_rows(ast.parse(text)) if with_rows else None
    assert node_positions(module, text, inside, rows) == {node: expected[node] for node in inside}
