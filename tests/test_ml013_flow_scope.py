"""ML013's statement flows (host_flow.statement_flows) start at the body of the function being
visited: a statement's question never computes the flows of the class body or of an outer
function, whose facts (`number_like`, `_read_only_as_number`) would be asked of the wrong function
and then kept for the whole block."""

from __future__ import annotations

import libcst as cst

from memlint.pipeline.registry import all_rules
from memlint.rule import Valid
from memlint.testing import lint_example

NESTED = """
import math
import torch
import torch.nn as nn
class Window(nn.Module):
    scale = 2
    def forward(self, x):
        k = x.mean()
        def ramp(N):
            half = N // 2
            n = torch.linspace(0, N, steps=N)
            return (0.5 - 0.5 * torch.cos(2 * math.pi * n / half)).cuda()
        return ramp(8) * k
"""


def test_flows_are_computed_only_inside_the_asking_function(monkeypatch):
    rule = next(r for r in all_rules() if r.code == "ML013")
    computed: list[tuple[str, cst.IndentedBlock]] = []
    block_flows = rule._block_flows

    def probe(self, level):
        computed.append((self.ctx.function_node.name.value, self._blocks[level]))
        return block_flows(self, level)

    monkeypatch.setattr(rule, "_block_flows", probe)
    lint_example(rule, Valid(NESTED))
    module = cst.parse_module(NESTED)
    ramp = module.body[3].body.body[1].body.body[1]
    # the window's move asks the flow of `ramp`'s names: only `ramp`'s body is computed (before the
    # fix, the recursion went on to `forward`'s body and the class body, with `ramp`'s facts)
    assert computed and {name for name, _ in computed} == {"ramp"}
    assert {module.code_for_node(block) for _, block in computed} == {module.code_for_node(ramp.body)}
