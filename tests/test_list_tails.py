"""What a list of layers may end with before a display extends it (analysis/list_tails.py), and what a
name holds after a loop whose turns end binding it (analysis/producers.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.list_tails import display_predecessors
from memlint.analysis.producers import producers_before
from memlint.analysis.walk import code_descendants


def _function(code: str) -> cst.FunctionDef:
    module = cst.parse_module(textwrap.dedent(code))
    return next(s for s in module.body if isinstance(s, cst.FunctionDef))


def _tails(code: str, name: str = "layers") -> list[list[str]]:
    """Per extending display in source order: the code of each element the list may end with there
    ([] where not known)."""
    function = _function(code)
    found = display_predecessors(function, name)
    displays = []
    for node in code_descendants(function):
        if isinstance(node, cst.AugAssign) and isinstance(node.value, cst.List):
            displays.append(node.value)
    render = cst.Module([]).code_for_node
    return [[render(e) for e in found.get(id(d), ())] for d in displays]


def test_loops_join_the_state_before_with_what_the_body_leaves():
    code = """
    def build(n):
        layers = [pad(), conv_a()]
        for r in range(2):
            layers += [act(), up()]
            for j in range(n):
                layers += [block()]
        layers += [act(), conv_b()]
        return Sequential(*layers)
    """
    assert _tails(code) == [["conv_a()", "up()", "block()"], ["up()", "block()"], ["conv_a()", "up()", "block()"]]


def test_an_empty_list_has_no_known_predecessor():
    code = """
    def build(n):
        layers = []
        for r in range(n):
            layers += [act(), conv()]
        return Sequential(*layers)
    """
    assert _tails(code) == [[]]


def test_a_list_the_function_has_not_bound_has_no_known_predecessor():
    around_a_branch = """
    def build(layers, flag):
        if flag:
            layers += [conv()]
        layers += [act(), conv()]
        return Sequential(*layers)
    """
    in_a_loop = """
    def build(n, layers):
        for _ in range(n):
            layers += [act(), conv()]
        return Sequential(*layers)
    """
    assert _tails(around_a_branch) == [[], []]  # the caller may pass `[]`: `act()` may come first
    assert _tails(in_a_loop) == [[]]
    bound_first = """
    def build(layers):
        layers = [conv()]
        layers += [act(), conv()]
        return Sequential(*layers)
    """
    assert _tails(bound_first) == [["conv()"]]


def test_branches_join_and_an_if_without_else_keeps_the_path_around():
    code = """
    def build(bounded):
        layers = [conv()]
        if bounded:
            layers += [tanh()]
        layers += [act(), conv()]
        return Sequential(*layers)
    """
    assert _tails(code) == [["conv()"], ["conv()", "tanh()"]]


def test_other_uses_make_the_tail_unknown():
    for middle in ("layers = layers[:-1]", "probe(layers)", "layers += extra", "layers.insert(0, conv())"):
        code = f"""
        def build():
            layers = [conv()]
            {middle}
            layers += [act(), conv()]
            return Sequential(*layers)
        """
        assert _tails(code) == [[]], middle


def test_a_loop_that_may_end_a_turn_early_is_not_followed():
    code = """
    def build(flags):
        layers = [conv()]
        for f in flags:
            if f:
                continue
            layers += [tanh()]
        layers += [act(), conv()]
        return Sequential(*layers)
    """
    assert _tails(code) == [[], []]


def _after_loop(code: str, name: str):
    function = _function(code)
    body = function.body.body
    index = next(i for i, s in enumerate(body) if isinstance(s, cst.SimpleStatementLine) and "relu" in cst.Module([]).code_for_node(s))
    found = producers_before(body, index, name)
    return None if found is None else [cst.Module([]).code_for_node(v) for v in found.values]


def test_a_loop_whose_turns_end_binding_the_name():
    code = """
    def forward(self, x):
        skip = 0
        for conv in self.convs:
            s = conv(x)
            skip = s + skip
            x = x + s
        return relu(skip)
    """
    assert _after_loop(code, "skip") == ["s + skip", "0"]


def test_a_loop_that_reads_the_name_after_binding_it_or_ends_early_is_not_followed():
    later_read = """
    def forward(self, x):
        skip = 0
        for conv in self.convs:
            skip = conv(x) + skip
            kept.append(skip)
        return relu(skip)
    """
    early_end = """
    def forward(self, x):
        skip = 0
        for conv in self.convs:
            if conv is None:
                break
            skip = conv(x) + skip
        return relu(skip)
    """
    closure = """
    def forward(self, x):
        skip = 0
        for conv in self.convs:
            hooks.append(lambda: skip)
            skip = conv(x) + skip
        return relu(skip)
    """
    nothing_before = """
    def forward(self, x):
        for conv in self.convs:
            skip = conv(x)
        return relu(skip)
    """
    for code in (later_read, early_end, closure, nothing_before):
        assert _after_loop(code, "skip") is None, code
