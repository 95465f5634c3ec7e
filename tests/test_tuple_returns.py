"""tuple_returns, asked directly: a method whose every `return` is a tuple display, the names of
another method of its class bound to its result, and the reads of them a tuple lacks (they raise)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.tuple_returns import raising_tuple_read, returned_tuple_length
from memlint.pipeline.traversal import Traversal

_CLASS = """
class Net:
    def forward(self, x):
        h = self.encode(x)
        probe("tuple", h.size())
        probe("data", torch.randn(3).cuda(h.data.get_device()))
        probe("count", h.count(1))
        probe("dunder", h.__len__())
        probe("maybe", h.size() if x else 0)
        probe("lambda", lambda: h.size())
        a, b = self.encode(x)
        probe("unpacked", a.size())
        m = self.mixed(x)
        probe("mixed", m.size())
        d = self.decorated(x)
        probe("decorated", d.size())
        g = self.gen(x)
        probe("generator", g.size())
        f = self.falls(x)
        probe("falls", f.size())
        r = self.encode(x)
        r = r[0]
        probe("rebound", r.size())
        s = self.starred(x)
        probe("starred", s.size())
        i = self.inherited(x)
        probe("inherited", i.size())
        p = self.shadowed(x)
        probe("shadowed", p.size())
    def encode(self, x):
        if x is None:
            return None, x
        return x * 2, x
    def mixed(self, x):
        if x is None:
            return x, x
        return x
    @property
    def decorated(self):
        return 1, 2
    def gen(self, x):
        yield x
        return x, x
    def falls(self, x):
        if x is not None:
            return x, x
        print(x)
    def starred(self, x):
        return (*x,)
    def shadowed(self, x):
        return x, x
    shadowed = staticmethod(lambda x: x)
"""

_EXPECTED = {
    "tuple": True,  # `h.size()`: a tuple has no `size`
    "data": True,  # `h.data` in the move's argument
    "count": False,  # a tuple's own method
    "dunder": False,
    "maybe": False,  # a conditional expression may not evaluate it
    "lambda": False,  # nor does a lambda's body run where it stands
    "unpacked": False,  # an element of the tuple: may be a tensor
    "mixed": False,  # one `return` gives something else
    "decorated": False,  # a property: not a plain method
    "generator": False,
    "falls": False,  # may fall off its end and give None
    "rebound": False,  # bound twice in the method
    "starred": False,  # a starred element: the display's length is not known
    "inherited": False,  # the class does not define it
    "shadowed": False,  # the class body binds the name again
}


def _answers(text: str) -> dict[str, bool]:
    text = textwrap.dedent(text)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    answers: dict[str, bool] = {}

    class Asker:
        def visit_Call(self, node: cst.Call) -> None:
            if type(node.func) is cst.Name and node.func.value == "probe":
                label = node.args[0].value.evaluated_value  # type: ignore[attr-defined]
                answers[label] = raising_tuple_read(node.args[1].value, ctx) is not None

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    return answers


@pytest.mark.parametrize("label, expected", list(_EXPECTED.items()))
def test_raising_tuple_read(label: str, expected: bool) -> None:
    assert _answers(_CLASS)[label] is expected


def test_a_subclass_of_the_file_or_an_instance_assignment_may_replace_the_method() -> None:
    assert _answers(_CLASS + "class Small(Net):\n    pass\n")["tuple"] is False
    assert _answers(_CLASS + "net = Net()\nnet.encode = print\n")["tuple"] is False


def test_returned_tuple_length() -> None:
    module = cst.parse_module(textwrap.dedent(_CLASS))
    methods = {m.name.value: m for m in module.body[0].body.body if type(m) is cst.FunctionDef}
    assert returned_tuple_length(methods["encode"]) == 2
    assert returned_tuple_length(methods["decorated"]) == 2  # the function's own fact; its callers judge decorators
    for name in ("mixed", "gen", "falls", "starred", "forward"):
        assert returned_tuple_length(methods[name]) is None, name


def test_a_class_the_file_may_replace_a_method_of_has_no_fact() -> None:
    for tail in (
        "Base = Net\nclass Small(Base):\n    pass\n",  # an alias as a base
        "class Small(Net[int]):\n    pass\n",  # a subscripted base
        "class Net(Net):\n    pass\n",  # the class bound again under its name
        "class Other:\n    forward = Net.forward\n",  # a method borrowed by another class
        'Small = type("Small", (object,), {})\n',  # a class made at run time
        'def flat(net):\n    setattr(net, "encode", print)\n',
        "class Small(make_base()):\n    pass\n",  # a base that is no dotted name
    ):
        assert _answers(_CLASS + tail)["tuple"] is False, tail
    assert _answers(_CLASS + "def f(m, n, w):\n    setattr(m, n, w)\n")["tuple"] is True  # a computed name: the documented limit
    assert _answers(_CLASS + "class Other(nn.Module):\n    def f(self):\n        return super(Other, self).f(Net())\n")["tuple"] is True


def test_the_file_is_read_once_and_each_method_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from memlint.analysis import tuple_returns

    calls = {"file": 0, "method": 0}
    file_reader, method_judge = tuple_returns._FixedMethods.__init__, tuple_returns._own_tuple_method

    def count_file(self, module):  # type: ignore[no-untyped-def]
        calls["file"] += 1
        file_reader(self, module)

    def count_method(*args):  # type: ignore[no-untyped-def]
        calls["method"] += 1
        return method_judge(*args)

    monkeypatch.setattr(tuple_returns._FixedMethods, "__init__", count_file)
    monkeypatch.setattr(tuple_returns, "_own_tuple_method", count_method)
    callers = "".join(f"    def f{i}(self, x):\n" + "".join(f"        a{j} = self.encode(x)\n" for j in range(5)) + "        probe('p', a0.size())\n" for i in range(20))
    _answers("class Net:\n" + callers + "    def encode(self, x):\n        return x, x\n")
    assert calls == {"file": 1, "method": 1}
