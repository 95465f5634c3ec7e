"""bindings: the names a module or a function binds, over the whole of it."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.bindings import (
    alternatives, binds, bound_by, bound_names, bound_targets, declared_global_values, local_names, module_bindings, module_imports_only,
    erring_names, target_names,
)
from memlint.analysis.context import Context
from memlint.analysis.walk import code_descendants
from memlint.pipeline.traversal import Traversal

_MODULE = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.optim
    from os import path as p
    def helper(x):
        inner = 1
        return x
    if torch.cuda.is_available():
        def helper(x):
            return x
    try:
        fallback = 1
    except ImportError as missing:
        pass
    def sets():
        global counter
        counter = 2
    class Box:
        field = 1
    late = nn.Linear(1, 1)
    """
)


def _ctx() -> Context:
    module = cst.parse_module(_MODULE)
    return Context(module, None, _MODULE)


def test_module_bindings_count_nested_statements_globals_and_later_lines() -> None:
    counts = module_bindings(_ctx())
    assert counts["helper"] == 2  # the second `def` under an `if`
    assert counts["fallback"] == 1 and counts["missing"] == 1
    assert counts["counter"] == 1  # a function's `global`
    assert counts["late"] == 1 and counts["Box"] == 1 and counts["p"] == 1
    assert counts["inner"] == 0 and counts["field"] == 0  # a function's or a class's own names
    assert counts["torch"] == 2  # `import torch` and `import torch.optim`
    assert counts["nn"] == 1


def test_module_imports_only() -> None:
    ctx = _ctx()
    assert module_imports_only(ctx, "torch") and module_imports_only(ctx, "p")
    assert not module_imports_only(ctx, "late") and not module_imports_only(ctx, "absent")


def test_local_names_include_parameters_and_exclude_globals_and_nested_scopes() -> None:
    function = cst.parse_module(
        textwrap.dedent(
            """
            def f(a, *args, b=1, **kw):
                global g
                g = 1
                c, (d, *e) = 1, (2, 3)
                for i in range(3):
                    pass
                with open(a) as h:
                    pass
                def nested():
                    hidden = 1
            """
        )
    ).body[0]
    assert local_names(function) == {"a", "args", "b", "kw", "c", "d", "e", "i", "h", "nested"}  # type: ignore[arg-type]


def test_binds_looks_into_compound_statements() -> None:
    statement = cst.parse_module("if x:\n    y = 1\nelse:\n    z = 2\n").body[0]
    assert binds(statement, "y") and binds(statement, "z") and not binds(statement, "x")


# ---------------------------------------------------------------------------- the table of what binds


def _node(code: str, kind: type, index: int = 0) -> cst.CSTNode:
    """The `index`-th node of `kind` in `code`, in source order."""
    return [n for n in code_descendants(cst.parse_module(textwrap.dedent(code))) if type(n) is kind][index]


def _bound(code: str, kind: type, index: int = 0, **flags: bool) -> list[str]:
    return [name for target in bound_by(_node(code, kind, index), **flags) for name in target_names(target)]


def test_assignments_bind_their_targets() -> None:
    assert _bound("x = y = f()\n", cst.Assign) == ["x", "y"]
    assert _bound("a, (b, *c) = v\n", cst.Assign) == ["a", "b", "c"]
    assert _bound("x += 1\n", cst.AugAssign) == ["x"]
    assert _bound("x: int = 1\n", cst.AnnAssign) == ["x"]
    assert _bound("if (x := f()):\n    pass\n", cst.NamedExpr) == ["x"]


def test_loops_bind_their_targets() -> None:
    assert _bound("for i, j in pairs:\n    pass\n", cst.For) == ["i", "j"]
    assert _bound("[c for c in r]\n", cst.CompFor) == ["c"]  # (in the comprehension's own scope)


def test_with_and_except_bind_their_aliases() -> None:
    assert _bound("with f() as (h, k):\n    pass\n", cst.WithItem) == ["h", "k"]
    assert _bound("with f():\n    pass\n", cst.WithItem) == []
    assert _bound("try:\n    pass\nexcept E as err:\n    pass\n", cst.ExceptHandler) == ["err"]
    assert _bound("try:\n    pass\nexcept E:\n    pass\n", cst.ExceptHandler) == []


def test_imports_bind_their_alias_or_first_name() -> None:
    assert _bound("import torch\n", cst.ImportAlias) == ["torch"]
    assert _bound("import torch.nn\n", cst.ImportAlias) == ["torch"]
    assert _bound("import torch.nn as nn\n", cst.ImportAlias) == ["nn"]
    assert _bound("from os import path as p, sep\n", cst.ImportAlias, 1) == ["sep"]
    assert list(bound_targets(cst.parse_module("from os import *\n"))) == []


def test_definitions_bind_their_names_and_parameters_only_when_asked() -> None:
    assert _bound("def f(a):\n    pass\n", cst.FunctionDef) == ["f"]
    assert _bound("class C:\n    pass\n", cst.ClassDef) == ["C"]
    assert _bound("def f(a):\n    pass\n", cst.Param) == []
    assert _bound("def f(a):\n    pass\n", cst.Param, parameters=True) == ["a"]


def test_match_captures_bind() -> None:
    code = "match v:\n    case [x, *rest]:\n        pass\n    case {'k': 1, **others}:\n        pass\n    case _:\n        pass\n"
    assert _bound(code, cst.MatchAs) == ["x"]
    assert _bound(code, cst.MatchStar) == ["rest"]
    assert _bound(code, cst.MatchMapping) == ["others"]
    assert _bound(code, cst.MatchAs, 1) == []  # `case _` binds nothing


def test_del_binds_in_its_scope() -> None:
    assert _bound("del a, b\n", cst.Del) == ["a", "b"]


def test_global_and_nonlocal_only_when_asked() -> None:
    code = "def f():\n    global g\n    def h():\n        nonlocal n\n"
    assert _bound(code, cst.Global) == [] and _bound(code, cst.Nonlocal) == []
    assert _bound(code, cst.Global, declarations=True) == ["g"]
    assert _bound(code, cst.Nonlocal, declarations=True) == ["n"]


def test_exact_names_and_names_erring_towards_bound() -> None:
    store = _node("d[k] = v\nself.x = v\n", cst.Assign)
    (target,) = bound_by(store)
    assert target_names(target) == [] and erring_names(target) == ["d", "k"]
    (attribute,) = bound_by(_node("self.x = v\n", cst.Assign))
    assert target_names(attribute) == [] and erring_names(attribute) == ["self", "x"]


def test_nested_scopes_skipped_or_not() -> None:
    statement = cst.parse_module(
        "if c:\n    def inner(p):\n        hidden = 1\n    [q for q in r]\n    k = lambda s: s\n"
    ).body[0]
    assert bound_names(statement) == {"inner", "k"}
    assert bound_names(statement, nested=True) == {"inner", "p", "hidden", "q", "k", "s"}
    assert binds(statement, "inner") and not binds(statement, "hidden") and binds(statement, "q")  # (erring: a comprehension's own)


def test_del_makes_a_name_local() -> None:
    """`del helper` in a function makes `helper` its own name (Python compiles every read of it
    there as a local one), as at module level it counts as a binding of the module's name."""
    function = cst.parse_module("def f(x):\n    helper(x)\n    del helper\n").body[0]
    assert "helper" in local_names(function)  # type: ignore[arg-type]
    text = "def helper():\n    pass\ndel helper\n"
    assert module_bindings(Context(cst.parse_module(text), None, text))["helper"] == 2


_GLOBALS = textwrap.dedent(
    """
    import torch.nn as nn
    from torch.nn import BatchNorm2d
    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.bn = BN(c)
            self.act = Act(c)
            self.pool = Pool(c)
    class Net(nn.Module):
        def __init__(self, sync):
            global BN, Act, Pool
            if sync:
                BN = nn.BatchNorm2d
            else:
                BN = BatchNorm2d
            Act = nn.ReLU
            Pool = nn.MaxPool2d
    def plain():
        global Act
        Act = nn.Identity
    def loops():
        global Pool
        for Pool in (nn.MaxPool2d,):
            pass
    """
)


def test_declared_global_values_lists_every_binding_of_the_name() -> None:
    found = declared_global_values(cst.parse_module(_GLOBALS))
    assert len(found["BN"]) == 2 and None not in found["BN"]  # both branches
    assert len(found["Act"]) == 2  # the constructor's and `plain`'s
    assert found["Pool"][1:] == [None]  # a loop target: no plain value
    assert "Block" not in found and "sync" not in found


def test_a_declared_global_another_scope_also_binds_for_itself_is_not_resolved() -> None:
    """A parameter, a local, a comprehension target, a lambda's parameter or a class attribute
    named like the global: a read of the name may be that scope's, so no value is trusted."""
    setup = "import torch.nn as nn\ndef setup():\n    global Norm\n    Norm = nn.BatchNorm2d\n"
    for other in (
        "def block(c, Norm):\n    return Norm(c)\n",
        "def block(c):\n    Norm = nn.Tanh\n    return Norm(c)\n",
        "blocks = [Norm(3) for Norm in (nn.Tanh,)]\n",
        "make = lambda Norm: Norm(3)\n",
        "class Cfg:\n    Norm = nn.Tanh\n",
    ):
        code = setup + other
        assert None in declared_global_values(cst.parse_module(code))["Norm"], other
        ctx = Context(cst.parse_module(code), None, code)
        Traversal(ctx, []).walk(ctx.module)
        assert ctx.module_binding("Norm") is None, other
    ctx = Context(cst.parse_module(setup), None, setup)
    Traversal(ctx, []).walk(ctx.module)
    assert ctx.module_binding("Norm").qualified == "torch.nn.BatchNorm2d"  # type: ignore[union-attr]


def test_a_global_bound_only_through_global_resolves_where_every_binding_agrees() -> None:
    """`BN(c)` in a class above the constructor that binds `global BN`: every binding names
    torch's BatchNorm2d (through two imports), so the name is that class; `Act` is also rebound
    to `nn.Identity`, `Pool` by a loop: unknown."""
    module = cst.parse_module(_GLOBALS)
    ctx = Context(module, None, _GLOBALS)
    Traversal(ctx, []).walk(module)  # (the imports resolved, as where a rule asks)
    assert ctx.module_binding("BN").qualified == "torch.nn.BatchNorm2d"  # type: ignore[union-attr]
    assert ctx.resolve(cst.Name("BN")) == "torch.nn.BatchNorm2d"
    assert ctx.module_binding("Act") is None and ctx.module_binding("Pool") is None
    shadowed = "import torch.nn as nn\ndef f():\n    global len\n    len = nn.Linear\n"
    ctx = Context(cst.parse_module(shadowed), None, shadowed)
    Traversal(ctx, []).walk(ctx.module)
    assert ctx.module_binding("len") is None  # a builtin before `f` runs


def test_alternatives_are_the_branches_of_conditional_expressions() -> None:
    value = cst.parse_expression("t.gen_a.encode if a else (t.gen_b.encode if b else t.gen_c.encode)")
    assert [cst.Module([]).code_for_node(v) for v in alternatives(value)] == ["t.gen_a.encode", "t.gen_b.encode", "t.gen_c.encode"]
    plain = cst.parse_expression("t.gen_a.encode")
    assert alternatives(plain) == [plain]
