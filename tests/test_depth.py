"""Code nested deeper than libcst can take (issue 13, item 3.2).

libcst's tree nests one level per `and`/`or` operand and per implicit string concatenation, where
CPython's AST is flat: 8,000 `and` operands used to crash the native parser (exit 139, every other
file's result lost) and 1,000-7,000 gave a false ML000.  Now a file up to `depth.LIMIT` levels is
analysed (positions and fixes included, in the deep statement itself); a deeper statement is left
out of the analysis as an ML901 "statement not analysed: too complex for memlint's parser" (a
finding: exit 1), the rest of the file is analysed, and no fix reaches into the statement left out.  Each case runs memlint in
a subprocess, as users do, so that a crash shows as its exit status.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, memlint_subprocess, write

import memlint
from memlint.pipeline import depth

LIMIT = depth.LIMIT
NEIGHBOUR = "z_neighbour.py:6:5: ML001"
TOO_COMPLEX = "ML901 statement not analysed: too complex for memlint's parser (libcst)"

# Deep constructs, each as a function of a size n.
CONSTRUCTS = {
    "and": lambda n: " and ".join(["a"] * n),
    "or": lambda n: " or ".join(["a"] * n),
    "strings": lambda n: "(" + "\n".join(["'s'"] * n) + ")",
    "fstrings": lambda n: "(" + "\n".join(["f'{a}'"] * n) + ")",
    "plus": lambda n: " + ".join(["a"] * n),
    "attributes": lambda n: "a" + ".b" * n,
    "calls": lambda n: "a" + "()" * n,
    "lambdas": lambda n: "lambda: " * n + "0",
    "not": lambda n: "not " * n + "a",
    "conditional": lambda n: " if a else ".join(["a"] * n),
}


def training(expression: str) -> str:
    """A loop with two findings (ML001 with a safe fix, ML002 with an unsafe one that rewrites the
    whole loop) around a statement holding `expression`: the analysis, the positions and the fixes
    all have to go through the deep statement."""
    body = textwrap.indent(f"z = {expression}\n", "    ")
    return (
        "import torch\ntotal = 0.0\nfor x, y in val_loader:\n    loss = criterion(model(x), y)\n"
        + body
        + "    total += loss\nprint(total)\n"
    )


def largest_accepted(construct: str) -> int:
    """The largest size of `construct` whose file `depth.too_complex` lets through."""
    make = CONSTRUCTS[construct]
    low, high = 1, 4 * LIMIT
    while low < high:
        middle = (low + high + 1) // 2
        text = training(make(middle))
        if depth.too_complex(ast.parse(text), text) is None:
            low = middle
        else:
            high = middle - 1
    return low


@pytest.fixture
def neighbour(project):
    write(project / "z_neighbour.py", EVAL_LOOP)
    return project


def run(project, *args, **kwargs):
    result = memlint_subprocess("check", "--output-format", "concise", "--no-cache", *args, cwd=project, **kwargs)
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr, result.stderr
    return result


# ---------------------------------------------------------------------------- the guard's counting


def levels(text: str) -> int:
    """How deep `too_complex` counts `text` (the smallest limit it accepts)."""
    tree = ast.parse(text)
    low, high = 0, 10 * LIMIT
    while low < high:
        middle = (low + high) // 2
        if depth.too_complex(tree, text, middle) is None:
            high = middle
        else:
            low = middle + 1
    return low


def test_a_flat_boolop_counts_one_level_per_operand():
    assert levels(f"x = {CONSTRUCTS['and'](2001)}\n") - levels(f"x = {CONSTRUCTS['and'](1001)}\n") == 1000


def test_implicit_string_concatenation_counts_one_level_per_literal():
    for construct in ("strings", "fstrings"):
        make = CONSTRUCTS[construct]
        assert levels(f"x = {make(1500)}\n") - levels(f"x = {make(500)}\n") == 1000, construct


def test_quotes_inside_one_literal_are_not_literals():
    text = 'x = """' + "' \" " * 5000 + '"""\n'  # one literal holding 10,000 quote characters
    assert levels(text) < 10


def test_real_code_is_far_below_the_limit():
    # memlint's own sources here; the corpora (timm, transformers, torchvision, Lightning) and numpy,
    # sympy and torch count at most 132 levels.
    for path in sorted(Path(memlint.__file__).parent.rglob("*.py")):
        text = path.read_text()
        assert depth.too_complex(ast.parse(text), text, LIMIT // 10) is None, path


def test_where_the_finding_points():
    text = "import torch\n\nx = (b,\n     " + CONSTRUCTS["and"](LIMIT + 50) + ")\n"
    found = depth.too_complex(ast.parse(text), text)
    assert found is not None and found.what == f"a chain of {LIMIT + 50:,} `and`/`or` operands"
    assert (found.row, found.column) == (4, 6)


def test_token_levels_bound_what_the_ast_counts():
    # For text CPython cannot compile the tokens give the bound; it must not be below the AST's count.
    for construct, make in CONSTRUCTS.items():
        text = training(make(300))
        assert depth.token_levels(text) >= levels(text), construct
    flat = "x = [" + ", ".join(["a + b"] * 5000) + "]\n"  # a long but flat literal stays shallow
    assert depth.token_levels(flat) < 20
    assert depth.token_levels("lambda a, b: " * 50 + "0\n") >= 50  # commas do not hide lambdas
    assert depth.token_levels("x = (\n") is None  # the tokenizer cannot read it


def test_on_deep_stack_returns_raises_and_restores_the_recursion_limit():
    before = sys.getrecursionlimit()

    def deep(n):
        return 0 if n == 0 else 1 + deep(n - 1)

    assert depth.on_deep_stack(deep, 20 * before) == 20 * before  # deeper than this thread allows
    assert sys.getrecursionlimit() == before
    with pytest.raises(ZeroDivisionError):
        depth.on_deep_stack(lambda: 1 / 0)
    assert sys.getrecursionlimit() == before
    assert depth.on_deep_stack(depth.on_deep_stack, deep, 10) == 10  # nested: runs in the same thread


# ---------------------------------------------------------------------------- as users run it


MEASURED = ["and", "strings", "plus", "attributes", "lambdas"]


def test_just_below_the_limit_is_analysed_with_fixes(neighbour):
    for construct in MEASURED:
        size = largest_accepted(construct)
        assert size > LIMIT - 20, construct
        (neighbour / f"deep_{construct}.py").write_text(training(CONSTRUCTS[construct](size)))
    result = run(neighbour, "--jobs", "1", "--select", "ML001,ML002", "--unsafe-fixes", "--diff", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    for construct in MEASURED:
        diff = result.stdout.split(f"+++ b/deep_{construct}.py\n")[1].split("+++ ")[0]
        # ML002's fix regenerated the whole loop, the deep statement included
        assert "+with torch.no_grad():" in diff and "\n+        z = " in diff, construct
        assert "\n+        total += loss." in diff, construct  # and ML001's fix was placed in it
    assert "ML900" not in result.stdout + result.stderr and "ML000" not in result.stdout


def test_just_above_the_limit_is_not_analysed(neighbour):
    for construct in MEASURED:
        (neighbour / f"deep_{construct}.py").write_text(training(CONSTRUCTS[construct](largest_accepted(construct) + 1)))
    result = run(neighbour, "--jobs", "1", ".")
    assert result.returncode == 1, result.stdout + result.stderr  # a finding, not memlint's failure
    for construct in MEASURED:
        assert f"deep_{construct}.py:5:" in result.stdout and TOO_COMPLEX in result.stdout, construct
        # the rest of the file is analysed: the findings before and after the deep statement
        assert f"deep_{construct}.py:4:22: ML002" in result.stdout, construct
        assert f"deep_{construct}.py:6:5: ML001" in result.stdout or construct == "strings", construct
    assert "deep_strings.py:1003:5: ML001" in result.stdout  # after the statement's 998 lines
    assert result.stdout.count(TOO_COMPLEX) == len(MEASURED)
    assert "ML900" not in result.stdout and NEIGHBOUR in result.stdout
    assert run(neighbour, "--jobs", "1", "--exit-zero", ".").returncode == 0


BOOL_SIZES = [LIMIT - 10, LIMIT + 10, 8_000, 100_000]


def _bool_files(project):
    names = {}
    for size in BOOL_SIZES:
        names[size] = f"and_{size}.py"
        (project / names[size]).write_text(training(CONSTRUCTS["and"](size)))
    return names


def _assert_bool_results(output: str, names: dict, prefix: str = "") -> None:
    for size, name in names.items():
        assert f"{prefix}{name}:4:22: ML002" in output, (name, output)  # analysed, all but the deep statement
        assert f"{prefix}{name}:6:5: ML001" in output, (name, output)
        if size <= LIMIT - 10:
            assert f"{name}:5:9: ML90" not in output
        else:
            assert f"{prefix}{name}:5:9: {TOO_COMPLEX}: a chain of {size:,} `and`/`or` operands" in output, (name, output)
    assert "ML900" not in output


def test_long_and_chains_in_check_with_workers(neighbour):
    # Eight files or more: worker processes (a crash there used to lose their chunk).
    names = _bool_files(neighbour)
    for index in range(4):
        write(neighbour / f"other_{index}.py", EVAL_LOOP)
    result = run(neighbour, "--jobs", "2", ".")
    assert result.returncode == 1, result.stderr
    _assert_bool_results(result.stdout, names)
    assert all(f"other_{index}.py:6:5: ML001" in result.stdout for index in range(4))
    assert NEIGHBOUR in result.stdout


def test_long_and_chains_in_check_in_process(neighbour):
    names = _bool_files(neighbour)
    result = run(neighbour, "--jobs", "1", *names.values(), "z_neighbour.py")
    assert result.returncode == 1, result.stderr
    _assert_bool_results(result.stdout, names)
    assert NEIGHBOUR in result.stdout


def test_long_and_chains_with_fix(neighbour):
    names = _bool_files(neighbour)
    before = {name: (neighbour / name).read_text() for name in names.values()}
    result = run(neighbour, "--jobs", "1", "--fix", *names.values(), "z_neighbour.py")
    assert result.returncode == 1, result.stdout + result.stderr  # ML002 (no safe fix) and ML901 remain
    for name in names.values():
        after = (neighbour / name).read_text()
        # ML001's fix, in the statement after the deep one; the deep one is kept as it was, also
        # where it was left out of the analysis
        changed = [(old, new) for old, new in zip(before[name].splitlines(), after.splitlines()) if old != new]
        assert [old for old, _ in changed] == ["    total += loss"], changed
        ast.parse(after)
    assert "total += loss\n" not in (neighbour / "z_neighbour.py").read_text()


@pytest.mark.parametrize("size", BOOL_SIZES)
def test_long_and_chains_on_standard_input(project, size):
    source = training(CONSTRUCTS["and"](size))
    result = run(project, "--stdin-filename", "a.py", "-", input=source)
    assert result.returncode == 1, result.stderr
    assert "a.py:4:22: ML002" in result.stdout
    assert (f"a.py:5:9: {TOO_COMPLEX}" in result.stdout) == (size > LIMIT)


def test_syntax_error_beside_a_deep_chain_is_cpythons_message(neighbour):
    # CPython cannot compile it, so its AST cannot be counted: the tokens bound it instead, and the
    # chain never reaches libcst.
    (neighbour / "broken.py").write_text("import torch\nx = (" + CONSTRUCTS["and"](100_000) + "\ny = 1 +\n")
    (neighbour / "newer.py").write_text("import torch\nx = 1 +\n" + CONSTRUCTS["or"](20) + "\n")
    result = run(neighbour, "--jobs", "1", ".")
    assert result.returncode == 1, result.stderr
    assert "broken.py:2:5: ML000 SyntaxError: '(' was never closed" in result.stdout
    assert "newer.py:2:8: ML000 SyntaxError: invalid syntax" in result.stdout
    assert NEIGHBOUR in result.stdout
