"""memlint.pipeline.tree and memlint.pipeline.traversal read trees faster than libcst's visitors; they must see exactly
what libcst would."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.pipeline import tree
from memlint.pipeline.traversal import Traversal

SOURCE = textwrap.dedent(
    '''\
    """Module docstring."""
    from __future__ import annotations
    import torch, torch.nn as nn  # a comment
    from torch.utils.checkpoint import (checkpoint as ckpt,)

    @torch.no_grad()
    def evaluate(model: nn.Module, loader, *args, scale: float = 1.0, **kw) -> float:
        total = 0
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cuda"), open("f") as f:
                out = model(x)[0, ..., 1:2] if i % 2 else lambda q=3: q ** 2
            total += out.sum().item() + (-x).mean()
            print(f"{total!r:>10} {x=} {y:{scale}.{2}}")
        while total and not False:
            total -= 1
        try:
            pass
        except (ValueError, TypeError) as error:
            raise RuntimeError() from error
        finally:
            del total
        return [a async for a in b], {k: v for k, v in kw.items()}, {*args}, (yield)

    class Net(nn.Module):
        x: int = 3
        def forward(self, x, /, y):
            global g
            return self.seq(x) @ y if x is not None and y not in [1, 2] else ~x
    match command:
        case [Point(x=0), *rest] | {"k": _}:
            pass
    '''
)


def _libcst_order(module: cst.Module) -> list:
    events = []

    class Recorder(cst.CSTVisitor):
        def on_visit(self, node):
            events.append(("visit", node))
            return True

        def on_leave(self, node):
            events.append(("leave", node))

    module.visit(Recorder())
    return events


def test_children_are_libcst_children_in_the_same_order():
    module = cst.parse_module(SOURCE)
    stack, seen = [module], 0
    while stack:
        node = stack.pop()
        mine, theirs = tree.children(node), node.children
        assert len(mine) == len(theirs) and all(a is b for a, b in zip(mine, theirs)), type(node).__name__
        stack.extend(mine)
        seen += 1
    assert seen > 300
    visited = [node for event, node in _libcst_order(module) if event == "visit"]
    assert list(tree.descendants(module)) == visited[1:]  # everything below the module, pre-order


def test_parse_without_validation_builds_the_same_tree_and_restores_validation():
    fast, stock = tree.parse_module(SOURCE), cst.parse_module(SOURCE)
    assert fast.deep_equals(stock) and fast.code == SOURCE
    try:
        cst.Name("not an identifier")
    except cst.CSTValidationError:
        pass
    else:
        raise AssertionError("validation of hand-built nodes was left switched off")


def test_traversal_visits_in_libcst_order_with_every_handler():
    module = cst.parse_module(SOURCE)
    events = []

    class Everything:
        """A stand-in rule with a handler for every node type, whitespace included."""

        def __getattr__(self, name):
            if name.startswith(("visit_", "leave_")):
                return lambda node: events.append((name[:5], node))
            raise AttributeError(name)

    class Ctx:
        visit_handlers: dict = {}
        leave_handlers: dict = {cst.Comment: lambda node: None}  # forces whitespace to be walked

    Traversal(Ctx(), [Everything()]).walk(module)
    assert [(e, id(n)) for e, n in events] == [(e, id(n)) for e, n in _libcst_order(module)]


def test_traversal_skips_whitespace_and_punctuation_nobody_asks_for():
    module = cst.parse_module(SOURCE)
    seen = []

    class Calls:
        def visit_Call(self, node):
            seen.append(node)

    class Ctx:
        visit_handlers: dict = {}
        leave_handlers: dict = {}

    traversal = Traversal(Ctx(), [Calls()])
    assert cst.Comma in traversal._skip and cst.SimpleWhitespace in traversal._skip
    traversal.walk(module)
    expected = [n for e, n in _libcst_order(module) if e == "visit" and isinstance(n, cst.Call)]
    assert seen == expected and len(seen) >= 8


def test_code_children_leave_out_only_layout_nodes():
    module = cst.parse_module(SOURCE)
    everything = list(tree.descendants(module))
    for node in [module, *everything]:
        expected = [child for child in node.children if type(child) not in tree.LAYOUT]
        mine = tree.code_children(node)
        assert len(mine) == len(expected) and all(a is b for a, b in zip(mine, expected)), type(node).__name__
        if type(node) in tree.LAYOUT:  # why leaving them out loses nothing
            assert all(type(inner) in tree.LAYOUT for inner in tree.descendants(node))
    code = list(tree.code_descendants(module))
    assert code == [node for node in everything if type(node) not in tree.LAYOUT]
    assert len(code) < len(everything) / 2
    skip = (cst.FunctionDef,)
    assert list(tree.code_descendants(module, skip)) == [
        n for n in tree.descendants(module, skip) if type(n) not in tree.LAYOUT
    ]


def test_an_indexed_module_answers_code_descendants_as_the_walk_does():
    """`index_code_nodes` (the Context builds it for the file it analyses) must give every node's
    `code_descendants`, with and without skip types, exactly as walking it: same nodes, same order."""
    module = cst.parse_module(SOURCE)
    nodes = [module, *tree.code_descendants(module)]
    skips = [(), (cst.FunctionDef,), (cst.FunctionDef, cst.ClassDef, cst.Lambda), (cst.BaseSmallStatement,)]
    walked = {(id(n), skip): list(tree.code_descendants(n, skip)) for n in nodes for skip in skips}
    tree.index_code_nodes(module)
    try:
        assert tree._INDEX is not None and tree._INDEX.nodes[0] is module
        for node in nodes:
            for skip in skips:
                indexed = list(tree.code_descendants(node, skip))
                expected = walked[(id(node), skip)]
                assert len(indexed) == len(expected) and all(a is b for a, b in zip(indexed, expected)), type(node).__name__
        # a node of another tree (a fix being built, another file) is walked, not looked up
        other = cst.parse_module(SOURCE)
        assert [type(n) for n in tree.code_descendants(other)] == [type(n) for n in nodes[1:]]
    finally:
        tree._INDEX = None


def test_code_with_parents_keeps_every_code_node_with_its_ancestors():
    from memlint.analysis.walk import code_with_parents, with_parents

    module = cst.parse_module(SOURCE)
    full = [(n, p) for n, p in with_parents(module) if type(n) not in tree.LAYOUT]
    mine = list(code_with_parents(module))
    assert [n for n, _ in mine] == [n for n, _ in full]
    assert all(p1 == p2 for (_, p1), (_, p2) in zip(mine, full))
    assert all(p1 == p2[-2:] for (_, p1), (_, p2) in zip(code_with_parents(module, nearest=2), full))


def test_resolve_follows_rebinding_while_rules_share_answers():
    from memlint.analysis.context import Context

    source = textwrap.dedent(
        """\
        import torch as t
        t.zeros(1)
        t = t.nn
        t.Linear(1, 1)
        t = make()
        t.Linear(1, 1)
        """
    )
    module = cst.parse_module(source)
    ctx = Context(module)
    answers = []

    class Probe:
        def visit_Call(self, node):
            answers.append((ctx.resolve(node.func), ctx.resolve(node.func)))

    Traversal(ctx, [Probe()]).walk(module)
    assert answers == [("torch.zeros", "torch.zeros"), ("torch.nn.Linear",) * 2, (None, None), (None, None)]


def test_remembered_answers_follow_rebinding():
    from memlint.analysis.context import Context
    from memlint.analysis.evaluation import is_model_call

    source = textwrap.dedent(
        """\
        import torch
        class Net(torch.nn.Module):
            pass
        net = Net()
        net(x)
        net = 3
        net(x)
        """
    )
    module = cst.parse_module(source)
    ctx = Context(module)
    answers = []

    class Probe:
        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value == "net":
                answers.append((is_model_call(node, ctx), is_model_call(node, ctx)))

    Traversal(ctx, [Probe()]).walk(module)
    assert answers == [(True, True), (False, False)]


def test_cached_resolve_is_forgotten_when_a_name_is_rebound():
    from memlint.analysis.context import Context

    source = textwrap.dedent(
        """\
        import torch.nn.functional as F
        def f(x):
            y = F.relu(x)
            F = make()
        """
    )
    module = cst.parse_module(source)
    ctx = Context(module)
    seen = []

    class Probe:
        def visit_Call(self, node):
            if isinstance(node.func, cst.Attribute):
                seen.append(node)
                self.first = ctx.resolve(node.func)

        def leave_FunctionDef(self, node):
            self.last = ctx.resolve(seen[0].func)  # the same node, after `F` was rebound

    probe = Probe()
    Traversal(ctx, [probe]).walk(module)
    assert (probe.first, probe.last) == ("torch.nn.functional.relu", None)
