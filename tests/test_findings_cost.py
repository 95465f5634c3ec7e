"""The cost of a finding is bounded (issue 26, item 3): a file with a finding in every function costs a
small multiple of the same file without findings, whatever their number.

What a finding costs beyond the analysis is code generation: its top-level statement is printed once
to place it (pipeline/positions.py) and its fix's nodes once each to edit the text in place
(checker._in_place_edit).  Printing the whole module per finding, or per fix, made files with many
findings quadratic before; these tests count the nodes printed (deterministic) and compare the time
with and without findings measured in one process (a generous bound: the machine may be loaded).
`python bench/findings_scaling.py` records the same measures at 1,000, 10,000 and 60,000 findings.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import libcst as cst

from memlint.config import Selection, build_settings, discover
from memlint.pipeline.checker import check_text
from memlint.pipeline.source import statement_rows
from memlint.pipeline.tree import parse_module

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from findings_scaling import module  # noqa: E402


def settings(tmp_path):
    return build_settings(discover(tmp_path), Selection())


def analyse(text: str, where) -> list:
    return check_text(text, "bench.py", settings(where), statement_rows=statement_rows(ast.parse(text)))


def printed_nodes(function) -> int:
    """How many nodes libcst's code generator printed while `function` ran."""
    count = 0
    original = cst.CSTNode._codegen

    def counting(self, state, **kwargs):
        nonlocal count
        count += 1
        return original(self, state, **kwargs)

    cst.CSTNode._codegen = counting
    try:
        function()
    finally:
        cst.CSTNode._codegen = original
    return count


def test_findings_print_each_statement_a_bounded_number_of_times(tmp_path):
    for shape in ("call", "statement"):
        sizes = {}
        for count in (300, 1200):
            text = module(count, shape, findings=True)
            once = printed_nodes(lambda: parse_module(text).code)  # the whole module printed once
            found = []
            sizes[count] = printed_nodes(lambda: found.extend(analyse(text, tmp_path)))
            assert len(found) == count, (shape, count, len(found))
            # positions print each statement once; a fix prints its old and new nodes, twice each
            # where the new one may depend on the indentation (checker._in_place_edit): about 1.3x
            # the module for the call shape, 3.3x for the statement one (its fix is the whole loop)
            assert sizes[count] <= 5 * once, (shape, count, sizes[count], once)
        assert sizes[1200] <= 4.4 * sizes[300], (shape, sizes)  # linear in the number of findings


def test_a_finding_in_every_function_costs_at_most_four_times_the_analysis_without(tmp_path):
    for shape in ("call", "statement"):
        texts = {findings: module(1500, shape, findings) for findings in (False, True)}
        times = {False: [], True: []}
        for _ in range(2):  # alternated, the least of each: the machine's load falls on both alike
            for findings, text in texts.items():
                start = time.process_time()
                found = analyse(text, tmp_path)
                times[findings].append(time.process_time() - start)
                assert (len(found) == 1500) == findings
        ratio = min(times[True]) / min(times[False])
        assert ratio <= 4, (shape, times)  # measured 1.1-1.9
