"""Statement-local positions must equal libcst's whole-module PositionProvider."""

from __future__ import annotations

import random

import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from memlint.pipeline.positions import node_positions
from memlint.pipeline.tree import descendants, parse_module

SOURCES = {
    "lf": "# header\n\nimport torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return (x +\n                1)\n# footer\n",
    "crlf": "# c\r\n\r\nimport torch\r\nx = 1\r\n\r\ndef f():\r\n    return torch.zeros(3)\r\n# end\r\n",
    "cr": "x=1;y=2\rz=3\r",
    "bom-no-trailing-newline": "\ufeffimport torch\nx = (1,\n  2)",
    "decorated": "@torch.no_grad()\n# between\ndef f(a,\n      b):\n    '''doc\n    string'''\n    return a\n",
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_node_is_placed_as_the_whole_module_provider_places_it(name):
    text = SOURCES[name]
    module = parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = list(descendants(module))
    assert node_positions(module, text, nodes) == {node: expected[node] for node in nodes}


def test_a_few_nodes_of_a_large_file():
    text = "import torch\n" + "".join(f"def f{i}(x):\n    y = x * {i}\n    return torch.relu(y)\n\n" for i in range(300))
    module = parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    wanted = random.Random(0).sample(list(descendants(module)), 5)
    assert node_positions(module, text, wanted) == {node: expected[node] for node in wanted}


def test_the_module_itself_falls_back_to_the_whole_module_provider():
    module = parse_module("import torch\n")
    assert node_positions(module, "import torch\n", [module])[module].start.line == 1
