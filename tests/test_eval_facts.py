"""Where evaluation mode comes from (ML002's regions): a helper that returns a model it put in eval
mode (eval_returns), and the tests of `if`s that imply an earlier one's (evaluation.conjuncts)."""

import textwrap

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.eval_returns import returns_in_eval_mode
from memlint.analysis.evaluation import conjuncts, implies


def _returns_in_eval_mode(function: str) -> bool:
    module = cst.parse_module("import torch\n" + textwrap.dedent(function))
    definition = next(s for s in module.body if type(s) is cst.FunctionDef)
    return returns_in_eval_mode(definition, Context(module))


@pytest.mark.parametrize("function", [
    "def load(path):\n    net = Net()\n    net.load_state_dict(torch.load(path))\n    net.eval()\n    return net\n",
    "def load(path):\n    model = build(path)\n    model.cuda().eval()\n    return model\n",  # named like a model
    "def load(path):\n    net = Net().eval()\n    if path:\n        net.load_state_dict(torch.load(path))\n    return net\n",
    "def load(path):\n    net = Net()\n    net.train(False)\n    return net\n",
])
def test_a_model_put_in_eval_mode_and_returned(function):
    assert _returns_in_eval_mode(function)


@pytest.mark.parametrize("function", [
    "def load(path, tune):\n    net = Net()\n    if tune:\n        return net\n    net.eval()\n    return net\n",  # a return before
    "def load(path):\n    net = Net()\n    net.eval()\n    return net, path\n",  # not the model alone
    "def load(path):\n    net = Net()\n    net.eval()\n    net.train()\n    return net\n",
    "def load(path):\n    net = Net()\n    net.eval()\n    net = Wrapper(net)\n    return net\n",  # rebound after
    "def load(path, tune):\n    net = Net()\n    if tune:\n        net.eval()\n    return net\n",  # behind an `if`
    "def load(path):\n    thing = make(path)\n    thing.eval()\n    return thing\n",  # not known to be a model
    "def load(path):\n    net = Net()\n    other.eval()\n    return net\n",
])
def test_no_evidence_of_a_returned_eval_mode(function):
    assert not _returns_in_eval_mode(function)


def _test(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def test_a_test_implies_its_own_conjuncts():
    condition = conjuncts(_test("do_aff"))
    assert condition is not None and condition.names == frozenset({"do_aff"})
    assert implies(_test("do_aff"), condition)
    assert implies(_test("do_aff and do_tps"), condition)
    assert implies(_test("do_tps and do_aff"), condition)
    assert not implies(_test("do_tps"), condition)
    assert not implies(_test("do_aff or do_tps"), condition)
    compared = conjuncts(_test("kind == Kind.THREE_D"))
    assert compared is not None and implies(_test("kind==Kind.THREE_D and fast"), compared)


@pytest.mark.parametrize("code", ["flags()", "flags[0]", "a or b", "x.ready()", "len(x) > 1"])
def test_tests_that_may_change_value_have_no_conjuncts(code):
    assert conjuncts(_test(code)) is None


@pytest.mark.parametrize("statement, off", [
    ("with torch.no_grad():\n    probe()", True),
    ("with th.no_grad():\n    probe()", True),  # (an alias of torch)
    ("with torch.set_grad_enabled(phase == 'train'):\n    probe()", True),  # may be off
    ("with (torch.enable_grad() if train else torch.no_grad()):\n    probe()", True),  # may be off
    ("with torch.no_grad() if frozen else contextlib.nullcontext():\n    probe()", True),
    ("with open(path), torch.inference_mode():\n    probe()", True),
    ("with torch.enable_grad():\n    probe()", False),
    ("with torch.set_grad_enabled(True):\n    probe()", False),  # the word does not turn gradients off
    ("with open(path):\n    probe()", False),
])
def test_a_call_under_a_with_that_may_turn_gradients_off(statement, off):
    """evaluation's `_under_grad_off` asks the Context's grad mode of a `with` item (`grad_mode_set_by`),
    read through the module's imports, for a call anywhere in the file."""
    from memlint.analysis.evaluation import _under_grad_off
    from memlint.analysis.walk import code_with_parents
    from memlint.pipeline.traversal import Traversal

    text = "import contextlib\nimport torch\nimport torch as th\ndef f(phase, train, frozen, path):\n" + textwrap.indent(statement, "    ") + "\n"
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)
    parents = next(p for n, p in code_with_parents(module) if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == "probe")
    assert _under_grad_off(parents, ctx) is off


def _own_definitions(source: str) -> list:
    """`values.own_definition` of each call's callee (`cls.x` / `self.x` receivers), in order."""
    from memlint.analysis import values
    from memlint.pipeline.traversal import Traversal

    module = cst.parse_module(textwrap.dedent(source))
    ctx = Context(module)
    answers = []

    class Probe:
        def visit_Call(self, node):
            if type(node.func) is cst.Attribute and type(node.func.value) is cst.Name and node.func.value.value in ("cls", "self"):
                answers.append((node.func.attr.value, values.own_definition(node.func, ctx)))

    Traversal(ctx, [Probe()]).walk(module)
    return answers


def test_a_classmethods_cls_receiver_reaches_the_classs_own_methods():
    # `cls.pick_head(model)`, named like a model, is the class's method (as `self.pick_head` is);
    # a `cls` that is no classmethod's class (a plain method's parameter, rebound, a nested
    # function's own parameter) or a name the class does not define is not known
    assert _own_definitions("""
        class Tester:
            def pick_head(self, model):
                return model.heads
            @classmethod
            def test(cls, model):
                cls.pick_head(model)
                cls.unknown_head(model)
                def inner(cls):
                    cls.pick_head(model)
                inner(object)
            def plain(self, cls):
                cls.pick_head(self)
                self.pick_head(cls)
            @classmethod
            def rebinding(cls, model):
                cls = other_class()
                cls.pick_head(model)
    """) == [("pick_head", "method"), ("unknown_head", None), ("pick_head", None), ("pick_head", None), ("pick_head", "method"), ("pick_head", None)]


def test_a_classmethods_rebinding_of_cls_is_looked_for_once_per_method(monkeypatch):
    # each `cls.helper(...)` asks whether the method rebinds `cls`; the walk of the body runs once
    # per method and name, not once per call (a classmethod of hundreds of calls stays linear)
    from memlint.analysis import values

    walks = []
    real = values.binds
    monkeypatch.setattr(values, "binds", lambda node, name: walks.append(name) or real(node, name))
    calls = "\n".join(f"        cls.helper(model, {i})" for i in range(50))
    answers = _own_definitions(f"""
class Tester:
    def helper(self, model, i):
        return model
    @classmethod
    def evaluate(cls, model):
{calls}
    @classmethod
    def other(cls, model):
        cls.helper(model, 0)
""")
    assert answers == [("helper", "method")] * 51
    assert walks == ["cls", "cls"]


@pytest.mark.parametrize("source, mentions", [
    ("net = Net()\nnet.eval()\n", True),  # a module-level call, found from the tree
    ("def run():\n    net.eval()\n", False),  # only inside a function
    ("net = Net()\nprint('call net.eval() first')\n", True),  # in a string: the statement is printed back
    ("x = 1\n# net.eval() at import\ny = 2\n", True),  # a comment before a statement is part of its code
    ("# net.eval() at import\nx = 1\n", False),  # the file's header is no statement's
    ("x = 1\n# net.eval() at the end\n", False),  # a comment after the last statement is no statement's
    ("def run():\n    net.eval()\nnet. eval()\n", False),  # a space after the dot prints no `.eval(`
    ("net = Net()\n(net.eval)()\n", False),
    ("x = 1\n", False),
])
def test_module_statement_mentions_eval(source, mentions):
    """A simple statement of the module whose code holds `.eval(` (evaluation._module_evals' cheap
    test), read off the text where it can be, the same answer as printing each statement back."""
    from memlint.analysis.evaluation import _module_statement_mentions_eval

    module = cst.parse_module(source)
    printed = any(type(s) is cst.SimpleStatementLine and ".eval(" in module.code_for_node(s) for s in module.body)
    assert printed == mentions
    assert _module_statement_mentions_eval(Context(module, None, source)) == mentions
    assert _module_statement_mentions_eval(Context(module)) == mentions  # (no text: printed back)
