"""bindings: the names a module or a function binds, over the whole of it."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.bindings import binds, local_names, module_bindings, module_imports_only
from memlint.analysis.context import Context

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
