"""Values proven to be tensors (analysis/tensor_values.py), a comprehension or lambda that runs an
activation again on a name bound outside it (analysis/fresh_values.py), and an activation module
two attributes share (analysis/class_layers.py): the review of the activation forms (issue 27)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.class_layers import _sharing_attributes
from memlint.analysis.context import Context
from memlint.analysis.fresh_values import FreshValues, _runs_repeatedly
from memlint.analysis.inventory import inventory
from memlint.analysis.tensor_values import proven_tensor
from memlint.pipeline.traversal import Traversal

_CODE = textwrap.dedent(
    """
    import torch
    import torch.nn.functional as F
    from micrograd.engine import Value
    def f(x, items):
        a = torch.randn(3)
        b = a * 2 + 1
        b = b.view(3, 1)
        c = Value(1.0)
        d = c * c
        e = x.sum(1)
        for g in items:
            pass
        h = F.gelu(x) if x is not None else x
    """
)


def _parsed(code: str) -> tuple[cst.Module, Context]:
    module = cst.parse_module(code)
    ctx = Context(module, None, code)
    Traversal(ctx, []).walk(module)
    return module, ctx


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def test_a_tensor_is_proven_by_torch_arithmetic_with_one_and_names_bound_only_to_them() -> None:
    module, ctx = _parsed(_CODE)
    values = FreshValues(ctx, module.body[3])  # type: ignore[arg-type]
    assert proven_tensor(_expr("torch.relu(x)"), values)  # a torch function's result
    assert proven_tensor(_expr("a"), values) and proven_tensor(_expr("(a * a)"), values)
    assert proven_tensor(_expr("b"), values)  # `b = a * 2 + 1`, then `b = b.view(3, 1)`: a tensor each time
    assert proven_tensor(_expr("(x + a)"), values)  # one proven operand is enough
    assert not proven_tensor(_expr("(c * c)"), values)  # a micrograd Value: its `relu()` has no `relu_()`
    assert not proven_tensor(_expr("d"), values)
    assert not proven_tensor(_expr("x.sum(1)"), values) and not proven_tensor(_expr("e"), values)  # a parameter's method
    assert not proven_tensor(_expr("(x + 1)"), values)  # a parameter may be anything
    assert not proven_tensor(_expr("g"), values)  # a loop target
    assert not proven_tensor(_expr("h"), values)  # a conditional expression: not followed
    assert not proven_tensor(_expr("self.gate"), values)


def test_an_activation_in_a_comprehension_or_lambda_runs_again_for_each_element_or_call() -> None:
    statement = cst.parse_statement("out = [head(F.relu(h)) for head in heads]")
    inner = statement.body[0].value.elt.args[0].value  # type: ignore[attr-defined]
    assert _runs_repeatedly(statement, inner)
    lam = cst.parse_statement("act = lambda: F.relu(h)")
    assert _runs_repeatedly(lam, lam.body[0].value.body)  # type: ignore[attr-defined]
    once = cst.parse_statement("out = head(F.relu(h))")
    assert not _runs_repeatedly(once, once.body[0].value.args[0].value)  # type: ignore[attr-defined]


def test_an_activation_module_bound_to_two_attributes_is_shared() -> None:
    code = textwrap.dedent(
        """
        from torch import nn
        class Net(nn.Module):
            def __init__(self, c, act=True):
                super().__init__()
                self.a = self.b = nn.ReLU() if act else nn.Identity()
                self.c = self.d = nn.ReLU()
                shared = nn.ReLU()
                self.e = shared
                self.f = shared
                self.g = nn.ReLU()
        """
    )
    _, ctx = _parsed(code)
    assert _sharing_attributes(inventory(ctx)["Net"]) == {"a", "b", "c", "d", "e", "f"}
