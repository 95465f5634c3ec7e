"""module_changes' narrower facts (issue 27, ML003's misses on the fifteenth part): a `setattr`
name with a literal prefix binds only names so starting; another object's attribute rebound only
to new layers whose output nothing keeps leaves a class's layer output fresh."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.module_changes import ANY, NUMBER_FOLLOWS, ModuleChanges, _bound_once, _literal_prefix, _number_follows, bound_by_prefix


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


@pytest.mark.parametrize(
    "code, prefix",
    [('"bn" + suffix', "bn"), ('f"bn{i}"', "bn"), ('"bn%d" % i', "bn"), ('"bn{}".format(i)', "bn"),
     ("name", ""), ('"%s_bn" % i', ""), ('prefix + "bn"', ""), ('("bn" + a) + b', ""),
     # source text that reads otherwise: an escape, a doubled brace
     ('f"\\x63onv{i}"', ""), ('f"a{{b}}{i}"', ""), ('"a}}b{}".format(i)', "")],
)  # fmt: skip
def test_a_literal_prefix_of_a_name_built_at_run_time(code, prefix):
    assert _literal_prefix(_expr(code), {}) == prefix


@pytest.mark.parametrize(
    "code, number",
    [('"fc%d" % i', True), ('"fc%02d" % i', True), ('"fc%i" % (i,)', True), ('"fc{}".format(k + 1)', True),
     ('"fc{0}".format(k - 1)', True), ('f"fc{k + 1}"', True),
     ('"fc%s" % i', False), ('"fc% d" % i', False), ('"fc{}".format(k)', False), ('"fc{}".format(k * 2)', False),
     ('f"fc{k}"', False), ('f"fc{k + 1!s}"', False), ('"fc{:>3}".format(k + 1)', False), ('"fc" + str(k)', False)],
)  # fmt: skip
def test_a_number_follows_the_prefix_only_where_the_value_formatted_is_one(code, number):
    assert _number_follows(_expr(code), {}) is number


def test_a_name_a_number_follows_the_prefix_of_binds_only_names_going_on_as_numbers():
    numbered = "fc" + NUMBER_FOLLOWS
    assert bound_by_prefix("fc1", numbered) and bound_by_prefix("fc-1", numbered) and bound_by_prefix("fcinf", numbered)
    assert not bound_by_prefix("fcs", numbered) and not bound_by_prefix("fc_layers", numbered)
    assert bound_by_prefix("fcs", "fc") and bound_by_prefix("fc_layers", "fc")
    assert not _changes({}, {}, {"conv" + NUMBER_FOLLOWS}).bound_once("conv1", "Net")
    assert _changes({}, {}, {"conv1_"}).bound_once("conv1", "Net")  # ("conv1_": not a prefix of it)


def test_a_name_bound_once_to_a_prefixed_string_has_its_prefix():
    module = cst.parse_module("def f(m, s):\n    key = 'bn' + s\n    setattr(m, key, None)\n")
    assert _literal_prefix(cst.Name("key"), _bound_once(module)) == "bn"
    twice = cst.parse_module("key = 'bn' + s\nkey = other\n")
    assert _literal_prefix(cst.Name("key"), _bound_once(twice)) == ""


def _changes(bindings: dict, fresh: dict, prefixes=frozenset()) -> ModuleChanges:
    return ModuleChanges(bindings, {"Net": {"conv1": 1}}, {}, frozenset(), False, frozenset(), False, fresh, frozenset(prefixes))


def test_rebound_elsewhere_only_to_fresh_layers():
    assert _changes({"conv1": 2, ANY: 1}, {"conv1": 2, ANY: 1}).rebound_only_to_fresh_layers("conv1", "Net")
    assert not _changes({"conv1": 2}, {"conv1": 1}).rebound_only_to_fresh_layers("conv1", "Net")
    assert not _changes({ANY: 1}, {}).rebound_only_to_fresh_layers("conv1", "Net")
    # a prefix that may name the attribute: any value may land on it
    assert not _changes({}, {}, {"conv"}).rebound_only_to_fresh_layers("conv1", "Net")
    assert not _changes({}, {}, {"conv"}).bound_once("conv1", "Net")
    assert _changes({}, {}, {"bn"}).bound_once("conv1", "Net")


def _collected(code: str) -> ModuleChanges:
    from memlint.analysis.context import Context
    from memlint.analysis.module_changes import module_changes

    return module_changes(Context(cst.parse_module(code)))


def test_a_slice_or_a_layer_run_alone_lets_parts_run_apart():
    assert _collected("def f(mlp):\n    return mlp[1:]\n").parts_may_run_apart("mlp")
    assert _collected("def f(self, x):\n    return self.body[2](x)\n").parts_may_run_apart("body")
    # an element's attribute, an element handed on, a stored element, a key: nothing runs apart
    quiet = _collected("def f(mlp, log, d, x):\n    n = mlp[-1].out_features\n    log(mlp[0])\n    mlp[0] = x\n    return d['a'](x)\n")
    assert not quiet.parts_may_run_apart("mlp") and not quiet.parts_may_run_apart("d")


def test_the_names_a_statement_binds():
    from memlint.analysis.bindings import bound_names

    loop = cst.parse_module(
        "for i in r:\n    if i:\n        net = a\n    while (m := f()):\n        pass\n    with g() as (h, k):\n        pass\n"
        "    try:\n        import os.path as osp, sys\n    except E as err:\n        del q\n"
        "    def inner(p):\n        hidden = 1\n    [c for c in r]\n    match v:\n        case [x, *rest]:\n            pass\n"
    ).body[0]
    assert bound_names(loop) == {"i", "net", "m", "h", "k", "osp", "sys", "err", "q", "inner", "x", "rest"}
    assert {"p", "hidden", "c"} <= bound_names(loop, nested=True)


def _parts(code: str, name: str):
    from memlint.analysis.context import Context

    module = cst.parse_module(code)
    from memlint.analysis.module_changes import module_changes

    return module_changes(Context(module, None, code)).parts_run(name)


def test_the_parts_a_container_runs_apart_at_literal_positions():
    # issue 27, ML003's miss on the sixteenth part: robustness's VGG runs its classifier as `[:4]` and `[-2:]`
    assert _parts("h = net.head[:4](x)\ny = net.head[-2:](h)\nz = net.head[2](h)\nw = net.head[-1](z)\n", "head") == {(0, 4), (-2, None), (2, 3), (-1, None)}
    assert _parts("y = net.head(x)\n", "head") == frozenset()
    for unknown in ("net.head[::2](x)", "net.head[a:](x)", "part = net.head[1:]", "for l in net.head[1:]:\n    x = l(x)", "net.head[i](x)"):
        assert _parts(f"y = net.head[:2](x)\n{unknown}\n", "head") is None, unknown


def _anywhere(code: str) -> bool:
    from memlint.analysis.context import Context
    from memlint.analysis.module_changes import elements_may_change_anywhere

    return elements_may_change_anywhere(Context(cst.parse_module(code), None, code))


def test_element_changes_through_a_name_that_may_be_any_module():
    # review of issue 27's ML003 change: `m` of `model.modules()`, a function handed to `apply`
    assert _anywhere("for m in model.modules():\n    m[0] = nn.Identity()\n")
    assert _anywhere("def drop(m):\n    m[0] = nn.Identity()\nmodel.apply(drop)\n")
    assert _anywhere("def drop(m):\n    del m[0]\n")
    assert _anywhere("def grow(m):\n    m.insert(0, nn.Identity())\n")
    # a local bound only to a display is no module (a new tensor neither: the examples of ML003, motion-diffusion-model)
    assert not _anywhere("def f(x):\n    seen = []\n    seen.insert(0, g(x))\n    return seen\n")
    assert not _anywhere("self.body[0] = nn.Identity()\n")
    # a parameter, or a name bound to something else too, may be a module
    assert _anywhere("def f(out, x):\n    out[0] = g(x)\n")
    assert _anywhere("def f(x):\n    out = []\n    out = x\n    out[0] = g(x)\n")


def test_a_literal_getattr_names_the_container_whose_part_runs():
    assert _parts('h = net.head[:2](x)\ny = getattr(net, "head")[1:](h)\n', "head") == {(0, 2), (1, None)}


@pytest.mark.parametrize(
    "receiver, path",
    [('self._modules["bn1"]', ["bn1"]), ('model.body._modules["bn1"]', ["bn1", "body"]),
     ("self._modules[key]", None), ("self.layer4[-1].conv2", ["conv2", "layer4"])],
)  # fmt: skip
def test_a_module_reached_through_modules_by_its_key(receiver, path):
    from memlint.analysis.module_changes import _attribute_path

    assert _attribute_path(_expr(receiver)) == path


def test_parts_and_element_changes_through_self_belong_to_the_class_and_its_relatives():
    # issue 27, ML003's misses on the nineteenth part: KAIR's SpyNet indexes its ModuleList
    # `self.basic_module[level]`; BasicModule's Sequential of that name is only called whole
    code = (
        "class Basic(nn.Module):\n    def forward(self, x):\n        return self.body(x)\n"
        "class Pyramid(nn.Module):\n    def forward(self, x):\n        self.head[0] = None\n        return self.body[0](x) + self.body[1:3](x)\n"
        "class Probe(Pyramid):\n    pass\n"
    )
    changes = _collected(code)
    assert not changes.parts_may_run_apart("body", "Basic") and changes.parts_may_run_apart("body", "Pyramid")
    assert changes.parts_may_run_apart("body", "Probe") and changes.parts_may_run_apart("body")
    assert changes.parts_run("body", "Basic") == frozenset() and changes.parts_run("body", "Probe") == {(0, 1), (1, 3)}
    assert not changes.elements_changed("head", "Basic") and changes.elements_changed("head", "Probe") and changes.elements_changed("head")


def test_parts_read_on_other_receivers_may_be_any_class():
    # another object's, a function's `self`, a nested class's own `self`, a static method's first parameter
    for reader in (
        "def probe(net, x):\n    return net.body[1:](x)\n",
        "def probe(self, x):\n    return self.body[1:](x)\n",
        "class Outer:\n    def make(self):\n        class Inner:\n            def run(self, x):\n                return self.body[1:](x)\n",
        "class Other:\n    @staticmethod\n    def run(self, x):\n        return self.body[1:](x)\n",
    ):
        changes = _collected("class Basic(nn.Module):\n    def forward(self, x):\n        return self.body(x)\n" + reader)
        assert changes.parts_may_run_apart("body", "Basic"), reader


def test_a_nested_function_sees_its_method_self():
    changes = _collected("class Other:\n    def run(self, x):\n        def inner():\n            return self.body[1:](x)\n        return inner()\n")
    assert not changes.parts_may_run_apart("body", "Basic") and changes.parts_may_run_apart("body", "Other")


def test_a_name_bound_on_a_child_torch_built_binds_no_attribute_of_the_file():
    # issue 27, ML003's miss in nasnet's NASNetAMobile (nineteenth part): `self.conv_1x1.add_module("relu", ...)`
    from memlint.analysis.context import Context
    from memlint.analysis.module_changes import module_changes

    def changes(code: str):
        module = cst.parse_module("import torch.nn as nn\n" + code)
        ctx = Context(module, None, code)
        for statement in module.body[:1]:  # the import, as the traversal reads it
            ctx.on_visit(statement)
            ctx.on_visit(statement.body[0])
            ctx.on_leave(statement.body[0])
            ctx.on_leave(statement)
        return module_changes(ctx)

    cell = "class Cell(nn.Module):\n    def __init__(self):\n        self.pre = {}\n        self.pre.add_module('relu', nn.ReLU())\n"
    net = "class Net(nn.Module):\n    def __init__(self):\n        self.relu = nn.ReLU()\n"
    assert changes(cell.format("nn.Sequential()") + net).bound_once("relu", "Net")
    for built in ("make()", "Net()", "nn.utils.spectral_norm(m)"):
        assert not changes(cell.format(built) + net).bound_once("relu", "Net"), built
    # the child bound twice, or its name bound on another object too
    twice = cell.format("nn.Sequential()") + "        self.pre = nn.Sequential()\n" + net
    assert not changes(twice).bound_once("relu", "Net")
    assert not changes(cell.format("nn.Sequential()") + net + "def f(m):\n    m.pre = None\n").bound_once("relu", "Net")


def test_an_element_given_back_itself_moved_is_no_change():
    # issue 27, ML003's miss in KAIR's RVRT (nineteenth part): `feats[name][-1] = feats[name][-1].cpu()`
    assert not _collected("def f(feats, name):\n    feats[name][-1] = feats[name][-1].cpu()\n").changed_elements
    assert not _collected("def f(self):\n    self.body[0] = self.body[0].to('cuda')\n").changed_elements
    for changing in ("feats[i][-1] = feats[j][-1].cpu()", "feats[f()] = feats[f()].cpu()", "feats[0] = feats[0].detach()", "feats[0] = other[0].cpu()"):
        assert _collected(f"def f(feats, other, i, j):\n    {changing}\n").changed_elements, changing


def test_a_name_some_class_binds_to_another_objects_container_counts_for_every_class():
    # e003a review: `self.body = net.body` in one class makes its reads of `self.body[...]` anyone's
    basic = "class Basic(nn.Module):\n    def __init__(self):\n        self.body = Body()\n"
    for binding in ("net.body", "net", "getattr(net, 'body')", "net.body.cuda()", "net.make_body()"):
        other = f"class Loss(nn.Module):\n    def __init__(self, net):\n        self.body = {binding}\n    def forward(self, x):\n        return self.body[1:](x)\n"
        changes = _collected(basic + other)
        assert "body" in changes.shared_names and changes.parts_may_run_apart("body", "Basic"), binding
        assert changes.parts_run("body", "Basic") == {(1, None)}, binding
    built = "class Loss(nn.Module):\n    def __init__(self):\n        self.body = make_body()\n    def forward(self, x):\n        return self.body[1:](x)\n"
    assert not _collected(basic + built).parts_may_run_apart("body", "Basic")
    # another object's attribute so named bound anywhere
    assert _collected(basic + built + "def f(m, b):\n    m.body = b\n").parts_may_run_apart("body", "Basic")


def test_co_bases_of_a_subclass_are_related():
    code = (
        "class Probe:\n    def tail(self, x):\n        return self.body[1:](x)\n"
        "class Basic(nn.Module):\n    def forward(self, x):\n        return self.body(x)\n"
        "class Other(nn.Module):\n    def forward(self, x):\n        return self.body(x)\n"
        "class Net(Basic, Probe):\n    pass\n"
    )
    changes = _collected(code)
    assert changes.parts_may_run_apart("body", "Basic") and not changes.parts_may_run_apart("body", "Other")


@pytest.mark.parametrize(
    "relating",
    ["Base = Basic\nclass Probe(Base):\n", "class Probe(make()):\n", "class Probe(nn.Module):\n",
     "class Probe(Mixins[0]):\n"],
)  # fmt: skip
def test_bases_not_named_plainly_make_relations_unknown(relating):
    code = "class Basic(nn.Module):\n    def forward(self, x):\n        return self.body(x)\n" + relating + "    def forward(self, x):\n        return self.body[1:](x)\n"
    if relating.startswith("class Probe(nn.Module)"):
        code += "Mixed = type('Mixed', (Probe, Basic), {})\n"
    changes = _collected(code)
    assert changes.relations_unknown and changes.parts_may_run_apart("body", "Basic")


def test_a_file_naming_modules_or_setattr_rebinds_unseen():
    for naming in ('self._modules["bn"] = m', 'self.__dict__["bn"] = m', 'self.__setattr__("bn", m)', 'vars(self)["bn"] = m'):
        assert _collected(f"class A(nn.Module):\n    def f(self, m):\n        {naming}\n").rebinds_unseen, naming
    assert not _collected("class A(nn.Module):\n    def f(self, m):\n        self.bn = m\n").rebinds_unseen


_NAMED_BY_METHOD = """
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        for i in range(n):
            layer_name = self._layer_name(i)
            self.add_module(layer_name, nn.Conv2d(c, c, 1))
    def _layer_name(self, i):
        {body}
"""


@pytest.mark.parametrize(
    "body, prefixes",
    [
        ('name = "conv_fcn{}".format(i + 1)\n        return name', {"conv_fcn" + NUMBER_FOLLOWS}),
        ('return "conv_fcn%d" % i', {"conv_fcn" + NUMBER_FOLLOWS}),
        ('return "conv_" + str(i)', {"conv_"}),
        # the method does more, or returns what is not known
        ('print(i)\n        return "conv_fcn%d" % i', set()),
        ("return self.names[i]", set()),
    ],
)
def test_a_name_a_method_of_the_class_builds(body, prefixes):
    changes = _collected(_NAMED_BY_METHOD.format(body=body))
    assert set(changes.prefixes) == prefixes
    assert (ANY in changes.bindings) is not bool(prefixes)


def test_a_name_from_a_method_another_class_of_the_file_also_defines_is_not_known():
    code = _NAMED_BY_METHOD.format(body='return "conv_fcn%d" % i') + "class Other(Head):\n    def _layer_name(self, i):\n        return 'x'\n"
    assert ANY in _collected(code).bindings
