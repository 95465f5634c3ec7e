"""Odd whitespace (issue 13, item 3.10): form feeds, tabs, `\\` continuations, CR newlines.

ML000 is reported exactly where CPython refuses the program.  Where CPython reads a file that
libcst's parser cannot, memlint says it could not analyse it (ML900), not that it is invalid.  Where
libcst parses but drops some whitespace (a form feed or a `\\` continuation before a statement),
findings keep their true position and no fix deletes what libcst dropped.
"""

from __future__ import annotations

import ast
import random

import libcst as cst
from conftest import EVAL_LOOP, memlint_subprocess

from memlint.pipeline.checker import _Places
from memlint.pipeline.positions import node_positions

LOOP = EVAL_LOOP.lstrip("\n").replace("import torch\n\n", "")  # total = 0.0 ... print(total)

# name -> source; each gets the loop (an ML001 finding) appended.
PROGRAMS = {
    "formfeed_before_statement": "import torch\n\fx = 1\n",
    "formfeed_in_indentation": "import torch\nif x:\n\f    y = 1\n",
    "formfeed_line": "import torch\n\f\nx = 1\n",
    "tab_indentation": "import torch\nif x:\n\ty = 1\n",
    "backslash_cr": "import torch\nx = 1 + \\\r    2\n",
    "backslash_crlf": "import torch\r\nx = 1 + \\\r\n    2\r\n",
    "continuation_line_before_statement": "import torch\n\\\nx = 1\n",
    "continuation_line_in_block": "import torch\nif x:\n    \\\n    y = 1\n",
    "continuation_cr_then_tab": "\fimport torch\nif x:\r\\\n\tpass\n",
    "continuation_in_brackets": "import torch\nx = [1,\\\n 2]\n",
    "inconsistent_tabs": "import torch\nif x:\n        y = 1\n\tz = 2\n",
    "vertical_tab": "import torch\nx = 1\v\n",
    "continuation_at_end": "import torch\nx = 1\n\\",
    "formfeed_mid_indentation": "import torch\nif x:\n    \fy = 1\n",
}


def compiles(source: str) -> bool:
    try:
        compile(source, "<test>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError:
        return False
    return True


def test_ml000_exactly_where_cpython_refuses(project):
    expected = {}
    for name, head in PROGRAMS.items():
        source = head + LOOP if not head.endswith("\\") else head
        (project / f"{name}.py").write_bytes(source.encode())
        expected[name] = compiles(source)
    assert set(expected.values()) == {True, False}  # both kinds are tried
    result = memlint_subprocess("check", "--output-format", "concise", "--no-cache", "--jobs", "1", ".", cwd=project)
    assert "Traceback" not in result.stderr
    for name, valid in expected.items():
        lines = [line for line in result.stdout.splitlines() if line.startswith(f"{name}.py:")]
        assert any(": ML000 " in line for line in lines) is not valid, (name, lines)
        if valid:  # analysed (the loop's ML001), or said plainly that memlint's parser cannot read it
            assert any(": ML001 " in line for line in lines) or any(
                "ML901 file not analysed: memlint's parser (libcst) cannot read it, though Python can" in line for line in lines
            ), (name, lines)


def test_a_statement_after_a_continuation_line_is_placed_and_fixed_in_place(project):
    # libcst leaves the `\` line out of its tree: the finding used to be reported one line up and the
    # fix deleted the continuation.
    source = "import torch\ntotal = 0.0\nfor x, y in loader:\n    loss = criterion(model(x), y)\n\\\n    total += loss\n"
    assert compiles(source)
    path = project / "train.py"
    path.write_text(source)
    result = memlint_subprocess("check", "--output-format", "concise", "--no-cache", "train.py", cwd=project)
    assert "train.py:6:5: ML001" in result.stdout, result.stdout
    memlint_subprocess("check", "--no-cache", "--fix", "train.py", cwd=project)
    fixed = path.read_text()
    assert fixed.startswith(source[: source.index("    total")])  # the `\` line is still there
    assert fixed != source and compiles(fixed)
    assert fixed.splitlines()[:5] == source.splitlines()[:5]


def test_formfeeds_keep_positions_and_a_fix_over_them_is_not_offered(project):
    source = "import torch\n\ftotal = 0.0\nfor x, y in val_loader:\n\f    loss = criterion(model(x), y)\n    total += loss\nprint(total)\n"
    path = project / "ff.py"
    path.write_text(source)
    result = memlint_subprocess("check", "--output-format", "concise", "--no-cache", "--unsafe-fixes", "ff.py", cwd=project)
    assert "ff.py:4:23: ML002" in result.stdout, result.stdout  # `model(x)` after the form feed
    assert "ff.py:5:5: ML001" in result.stdout, result.stdout
    memlint_subprocess("check", "--no-cache", "--fix", "--unsafe-fixes", "ff.py", cwd=project)
    fixed = path.read_text()
    # ML002's fix re-indents the loop, form feed included: not applied. ML001's is, elsewhere.
    assert "with torch.no_grad()" not in fixed
    assert fixed.count("\f") == 2 and fixed != source and compiles(fixed)


def _generated_programs(count: int):
    """Small programs with odd whitespace in odd places that both CPython and libcst read, and
    from which libcst drops characters (fixed seed: the same programs every run)."""
    rng = random.Random(13)
    pieces = [" ", "\t", "\f", "\\\n", "\\\r", "\\\r\n", "\n", "\r", "\r\n", "    ", "#c\n", "\\\n\\\n"]
    statements = ["import torch", "x = a.b", "if x:", "y = (c +", "d)", "def f():", "pass", "z = e(g)", "for h in k:"]
    found = 0
    while found < count:
        parts = []
        for _ in range(rng.randint(2, 7)):
            parts.append("".join(rng.choice(pieces) for _ in range(rng.randint(0, 3))))
            parts.append(rng.choice(statements))
        text = "".join(parts) + rng.choice(["", "\n", "\f"])
        if not compiles(text):
            continue
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        if module.code != text:
            found += 1
            yield text, module


def test_names_land_where_cpython_puts_them_when_libcst_drops_whitespace():
    checked = 0
    for text, module in _generated_programs(150):
        names = []

        class Collect(cst.CSTVisitor):
            def visit_Name(self, node):
                names.append(node)

        module.visit(Collect())
        places = _Places(module, text)
        positions = node_positions(module, places.code, names)
        ours = {places.start(positions[name]) + places.end(positions[name]) for name in names}
        # CPython's names (libcst also has names for attributes, imports and definitions)
        theirs = {
            (node.lineno, node.col_offset + 1, node.end_lineno, node.end_col_offset + 1)
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Name)
        }
        assert theirs <= ours, (repr(text), sorted(theirs - ours))
        checked += len(theirs)
    assert checked > 300
