"""The askers of "what binds" that missed a kind of binding before they asked bindings.bound_by: each
test names the kind one of them missed (every one of them stays silent, or knows less, once a name
is bound otherwise, so a missed binding was a value trusted that the code replaces)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis import (
    blind_hooks, chosen_classes, constants, delegation, frameworks, initialisers, model_wrappers, module_changes, module_lists,
    norm_layers, sequences, submodules, wrapper_classes,
)
from memlint.analysis.context import Context
from memlint.pipeline.traversal import Traversal


def _parsed(code: str) -> tuple[cst.Module, Context]:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)  # (the imports resolved, as where a rule asks)
    return module, ctx


def _function(code: str) -> cst.FunctionDef:
    return _parsed(code)[0].body[-1]  # type: ignore[return-value]


def test_delegation_counts_every_kind_of_binding_erring_towards_bound() -> None:
    for body in ("import G", "G[k] += 1", "with f() as (a, G):\n        pass", "del G", "match v:\n        case [G]:\n            pass"):
        helper = _function(f"def helper(z):\n    {body}\n    return G(z)\n")
        assert delegation.binds(helper, "G"), body


def test_frameworks_counts_del_and_match_captures() -> None:
    scope = _function("def f(v):\n    engine = 1\n    del engine\n    match v:\n        case [engine]:\n            pass\n")
    assert len(frameworks._bindings(scope)["engine"]) == 3


def test_submodules_counts_a_dotted_import() -> None:
    module, ctx = _parsed("def f():\n    import blocks.sub\n    return blocks\n")
    assert "blocks" in submodules._Facts(module.body[0], ctx).bindings


def test_element_list_is_none_where_an_import_rebinds_the_element() -> None:
    function = _function("def forward(self, x):\n    for layer in self.layers:\n        x = layer(x)\n    import layer\n    return x\n")
    assert module_lists.element_list(function, "layer") is None


def test_norm_parameter_rebound_by_a_loop_over_pairs_is_unknown() -> None:
    module, ctx = _parsed("import torch.nn as nn\ndef f(norm_layer=nn.BatchNorm2d):\n    for _, norm_layer in pairs:\n        pass\n")
    assert norm_layers._parameter_values(ctx, module.body[1], "norm_layer", 0) is None  # type: ignore[arg-type]


def test_chosen_classes_none_where_a_nested_def_rebinds_the_name() -> None:
    module, ctx = _parsed("import torch.nn as nn\ndef f(c):\n    Act = nn.ReLU if c else nn.ReLU6\n    def Act():\n        pass\n    return Act()\n")
    assert chosen_classes._chosen(ctx, module.body[1], "Act") is None  # type: ignore[arg-type]


def test_model_wrapper_rebound_by_an_import_is_no_wrapper() -> None:
    module, ctx = _parsed("def f(model):\n    svi = SVI(model)\n    from x import svi\n    return svi\n")
    assert not model_wrappers._built_around(module.body[0], "svi", "model", ctx)


def test_a_walrus_in_a_compound_statement_rebinds_a_constant() -> None:
    module, _ = _parsed("HIDDEN = 512\nif (HIDDEN := 3):\n    pass\n")
    assert "HIDDEN" not in constants.single_assignments(module.body)


def test_a_class_of_a_chosen_initialiser_name_is_kept() -> None:
    module, _ = _parsed("norm_f = weight_norm if a else spectral_norm\nclass norm_f:\n    pass\n")
    assert any(type(n) is cst.ClassDef for n in initialisers._collect_definitions(module)["norm_f"])


def test_a_constructor_argument_rebound_by_with_is_stored_as_nothing() -> None:
    init = _function("def __init__(self, module):\n    self.m = module\n    with f() as module:\n        pass\n")
    assert wrapper_classes._stored_as(init, "module") is None


def test_setattr_of_a_name_also_bound_by_with_may_set_a_module() -> None:
    module, _ = _parsed("class L:\n    def f(self, m):\n        weight = 1.0\n        with g() as weight:\n            pass\n        setattr(m, 'w', weight)\n")
    assert not module_changes._setattrs_of_computed_values(module)


def test_a_dict_rebound_by_with_is_not_given_to_a_sequential_only() -> None:
    module, ctx = _parsed(
        "import torch.nn as nn\nfrom collections import OrderedDict\ndef f():\n    d = OrderedDict()\n    d['a'] = nn.ReLU()\n"
        "    with g() as d:\n        pass\n    return nn.Sequential(d)\n"
    )
    assert sequences.dict_given_to_sequential_only(module.body[2], "d", ctx) is None


def test_a_hook_name_bound_by_except_is_bound_otherwise() -> None:
    module, _ = _parsed("def hook(module, x):\n    pass\ntry:\n    pass\nexcept E as hook:\n    pass\n")
    assert blind_hooks._Index(module).bindings["hook"] == [None]


def test_host_flow_forgets_a_name_a_walrus_or_an_import_binds() -> None:
    from memlint.analysis import host_flow

    module, _ = _parsed("while (n := f()):\n    import m\n    [c for c in r]\n")
    assert host_flow._bound_names(module.body[0]) == {"n", "m"}
