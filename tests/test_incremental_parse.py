"""The language server's incremental parse (memlint/pipeline/incremental.py) gives libcst's own tree.

After every edit the tree it builds from the previous one is compared, node for node and printed back,
with a whole parse of the new text; the tests also check that the incremental path is taken (a parser
that always parsed everything would pass the comparisons and save nothing).  bench/incremental_check.py
runs the same comparison on the library and real-code corpora.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import libcst as cst
import pytest

from memlint import api
from memlint.pipeline.engine import lint_text
from memlint.pipeline.incremental import IncrementalParser
from memlint.pipeline.source import ast_or_none
from memlint.pipeline.tree import parse_module

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from lsp_latency import source as training_script  # noqa: E402


def assert_same_tree(parser: IncrementalParser, text: str) -> None:
    """parser.parse(text) is the whole parse of text, or raises what the whole parse raises."""
    try:
        expected = parse_module(text)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            parser.parse(text, ast_or_none(text))
        return
    got = parser.parse(text, ast_or_none(text))
    assert got.code == text
    assert got.deep_equals(expected), text


def parse_all(texts: list[str]) -> IncrementalParser:
    parser = IncrementalParser()
    for text in texts:
        assert_same_tree(parser, text)
    return parser


BASE = '''"""A module."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += model(x).sum().item()
    return total


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
'''


def edit(text: str, anchor: str, old: str, new: str) -> str:
    start = text.index(anchor)
    at = text.index(old, start)
    return text[:at] + new + text[at + len(old) :]


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param(edit(BASE, "def evaluate", "total = 0.0", "total = 1.0"), id="inside-a-function"),
        pytest.param(edit(BASE, "class Net", "return self.fc(x)\n", "return self.fc(x)\n    # a note\n"), id="indented-comment-after-block"),
        pytest.param(edit(BASE, "class Net", "return self.fc(x)\n", "return self.fc(x)\n        # deeper\n"), id="deeper-comment-after-block"),
        pytest.param(edit(BASE, "return total", "\n\nclass Net", "\n# about Net\n\nclass Net"), id="comment-between-statements"),
        pytest.param(edit(BASE, "@torch", "@torch.no_grad()\n", ""), id="decorator-removed"),
        pytest.param(edit(BASE, "def train", "def train", "@staticmethod\ndef train"), id="decorator-added"),
        pytest.param(BASE + "train(None, [], None)\n", id="statement-appended"),
        pytest.param(BASE + "# the end", id="no-final-newline"),
        pytest.param(BASE[: BASE.index("def train")], id="last-statement-removed"),
        pytest.param(edit(BASE, "class Net", "class Net(nn.Module):\n", "class Net(nn.Module):\n    x = 1; y = 2\n"), id="semicolons"),
        pytest.param(edit(BASE, '"""A module."""', '"""A module."""', '"""The module."""'), id="first-statement"),
        pytest.param(edit(BASE, "import torch", "import torch", "import torch as t"), id="at-the-start-of-the-second-statement"),
        pytest.param("# header\n" + BASE, id="header-comment"),
        pytest.param(edit(BASE, "def evaluate", "    model.eval()", "model.eval()"), id="syntax-error"),
        pytest.param(edit(BASE, "class Net", "class Net(nn.Module):", 'class Net(nn.Module):\n    """'), id="unterminated-string"),
        pytest.param(edit(BASE, "def train", "def train", "def helper():\n  pass\n\n\ndef train"), id="other-indent-after-the-first-block"),
        pytest.param(edit(BASE, "return total", "\n\nclass Net", "\n\f\nclass Net"), id="form-feed"),
    ],
)
def test_an_edit_gives_the_whole_parse(changed: str) -> None:
    parse_all([BASE, changed, BASE])


def test_edits_inside_the_file_re_use_the_statements_around_them() -> None:
    changed = edit(BASE, "def evaluate", "total = 0.0", "total = 1.0")
    parser = parse_all([BASE, changed])
    assert parser.reused == 1
    appended = parse_all([BASE, BASE + "x = 1\n", BASE + "x = 12\n"])
    assert appended.reused == 2  # typing at the end of a file re-parses only its last statements


def test_the_default_indentation_follows_the_first_block() -> None:
    # The first indented block sets libcst's Module.default_indent: an edit that changes its width
    # changes how every other block is recorded (indent=None or its own), so it parses everything.
    two_spaces = "import torch\n\n\ndef first():\n  return 1\n\n\ndef second():\n  return 2\n\n\ndef third():\n  return 3\n"
    four_in_the_first = two_spaces.replace("  return 1", "    return 1")
    parse_all([two_spaces, four_in_the_first, two_spaces])
    tabs = two_spaces.replace("  return", "\treturn")
    parse_all([tabs, tabs.replace("\treturn 2", "\treturn 22"), tabs.replace("\treturn 2", "  return 2")])
    no_block_yet = "import torch\nx = 1\ny = 2\nz = 3\n"
    parse_all([no_block_yet, no_block_yet + "if x:\n  y = 4\n", no_block_yet + "if x:\n    y = 4\n"])


def test_an_edit_of_a_block_can_move_the_comments_after_it() -> None:
    # "  # c" belongs to the next statement after a block indented by 4, to the block when it is
    # indented by 2: the statement after an edited one is parsed again too.
    old = "import a\ndef e():\n    pass\ndef f():\n    x = 1\n  # c\ny = 2\nz = 3\nw = 4\n"
    assert parse_all([old, old.replace("    x = 1", "  x = 1"), old]).reused == 2
    spaced = "import a\ndef e():\n    pass\ndef f():\n    x = 1\n\n\n    # c\n\ny = 2\nz = 3\nw = 4\n"
    assert parse_all([spaced, spaced.replace("    x = 1", "    if x:\n        x = 1"), spaced]).reused == 2


CLASS = '''import torch


@decorated
class Trainer:
    """Trains."""

    def one(self):
        return 1

    def two(self):
        return 2

    async def three(self):
        await self.step()
        return 3

    def four(self):
        return 4

    def five(self):
        return 5
    # the end of five


def after():
    return 0
'''


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param(CLASS.replace("return 3", "return 33"), id="middle-method"),
        pytest.param(CLASS.replace("await self.step()", "await  self.step()"), id="async-method"),
        pytest.param(CLASS.replace("return 5", "return 55"), id="last-method"),
        pytest.param(CLASS.replace("    # the end of five\n", "    # the end of five\n        # deeper\n"), id="block-footer"),
        pytest.param(CLASS.replace("    # the end of five\n", ""), id="block-footer-removed"),
        pytest.param(CLASS.replace("    def four(self):\n        return 4\n", "    def four(self):\n        if x:\n            return 4\n"), id="new-block"),
        pytest.param(CLASS.replace("    def four(self):\n", "    @property\n    def four(self):\n"), id="decorator"),
        pytest.param(CLASS.replace('"""Trains."""', '"""Trains models."""'), id="first-statement-of-the-body"),
        pytest.param(CLASS.replace("def after():\n    return 0\n", ""), id="class-last"),
        pytest.param(CLASS.replace("    def two(self):\n", "    x = 1\n  # c\n    def two(self):\n"), id="comment-less-indented"),
        pytest.param(CLASS.replace("return 2", "return (2"), id="syntax-error"),
    ],
)
def test_an_edit_inside_a_class_gives_the_whole_parse(changed: str) -> None:
    parse_all([CLASS, changed, CLASS])
    last = CLASS.replace("def after():\n    return 0\n", "")
    parse_all([last, last.replace("return 5", "return 55"), last + "    # typed at the end", last])


def test_an_edit_inside_a_class_re_parses_only_its_methods(monkeypatch) -> None:
    from memlint.pipeline import incremental

    stretches = []
    parse_stretch = incremental._parse_stretch
    monkeypatch.setattr(incremental, "_parse_stretch", lambda m, code, tail: stretches.append(code) or parse_stretch(m, code, tail))
    parser = parse_all([CLASS, CLASS.replace("return 3", "return 33")])
    assert parser.reused == 1
    assert "return 33" in stretches[-1] and "def two" in stretches[-1] and "def four" in stretches[-1]
    assert "def one" not in stretches[-1] and "def five" not in stretches[-1] and "def after" not in stretches[-1]


def test_a_match_statement_sets_the_default_indentation() -> None:
    # A `match` indents its `case` lines (Match.indent) before any block: found by
    # bench/incremental_check.py on the corpora.
    parse_all(["a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\nmatch c:\n  case 1:\n      pass\n"])
    parse_all(["a = 1\nb = 2\nc = 3\nif c:\n    pass\n", "a = 1\nb = 2\nmatch c:\n  case 1:\n      pass\nif c:\n    pass\n"])
    parse_all(["a = 1\nb = 2\ndef f():\n        x\n", "a = 1\nb = 2\nmatch x:\n    case 1: pass\ndef f():\n        x\n"])


def test_an_edit_in_the_first_statement_after_its_first_token() -> None:
    docstring = '"""The module."""\nimport torch\nx = 1\n'
    assert parse_all([docstring, docstring.replace("The module", "A module")]).reused == 1
    assert parse_all(["# header\n" + docstring, "# header\n" + docstring.replace("import", "import  ")]).reused == 1
    assert parse_all([docstring, "#" + docstring]).reused == 0  # before its first token: the whole text


def test_the_first_line_ending_sets_the_default_newline() -> None:
    # libcst writes new lines with the first line's ending (found by a review: fixes printed "\n" in a
    # file whose first line had become "\r\n")
    parse_all(["x = 1\r\ny = 2\nz = 3\n", "x = 1\ny = 2\nz = 3\n"])
    parse_all(["x = 1\ny = 2\nz = 3\n", "x = 1\r\ny = 2\nz = 3\n", "x = 1\ry = 2\nz = 3\n"])
    parse_all(["x = 1", "x = 1\r\ny = 2\r\n"])
    parse_all(['"""A a."""\r\n', '"""A \na."""\r\n'])


def test_windows_line_endings() -> None:
    crlf = BASE.replace("\n", "\r\n")
    parser = parse_all([crlf, edit(crlf, "def evaluate", "total = 0.0", "total = 1.0"), crlf + "x = 1\r\n"])
    assert parser.reused == 2


def random_edit(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    kind = rng.randrange(7)
    if kind == 0 or not lines:  # a character typed anywhere
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice("x :()#\n\t'\"=,.") + text[at:]
    if kind == 1:  # a character deleted
        at = rng.randrange(max(len(text), 1))
        return text[:at] + text[at + 1 :]
    row = rng.randrange(len(lines))
    if kind == 2:  # a comment line, indented or not
        lines.insert(row, rng.choice(["# note\n", "    # note\n", "        # note\n", "\n"]))
    elif kind == 3:
        del lines[row]
    elif kind == 4:
        lines.insert(row, lines[row])
    elif kind == 5:  # re-indented
        lines[row] = rng.choice(["", "    ", "  "]) + lines[row].lstrip(" ")
    else:  # typed at the end
        return text + rng.choice(["x = 1\n", "\n", "#", "    pass\n", "def f():\n    return 1\n"])
    return "".join(lines)


SAMPLES = sorted(ROOT.glob("fixtures/*.py")) + sorted((ROOT / "memlint" / "pipeline").glob("*.py"))[:12]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_random_edits_of_real_files(path: Path) -> None:
    rng = random.Random(path.name)
    text = path.read_text(encoding="utf-8")
    parser = IncrementalParser()
    assert_same_tree(parser, text)
    compiled = 0
    for _ in range(12):
        text = random_edit(text, rng)
        compiled += ast_or_none(text) is not None
        assert_same_tree(parser, text)
    if compiled >= 6:  # most random edits of code that compiles leave statements to re-use
        assert parser.reused >= compiled // 3


def test_findings_with_the_parser_are_the_findings_without_it() -> None:
    """The server's path (lint_text with the document's parser) reports what `memlint check` would,
    positions and fixes included, while the text changes under it."""
    settings = api.settings_for(ROOT)
    text = training_script(300, "many")
    parser = IncrementalParser()
    rng = random.Random(7)
    for step in range(12):
        with_parser = lint_text(text, "train.py", settings, parser=parser)
        assert with_parser == lint_text(text, "train.py", settings)
        assert with_parser  # the script has findings, so positions and fixes are compared
        if step == 5:  # a text that does not compile, then the one before it again
            broken, text = text, text.replace("total = 0.0", "total = (0.0", 1)
            assert lint_text(text, "train.py", settings, parser=parser) == lint_text(text, "train.py", settings)
            text = broken
        candidates = (random_edit(text, rng) for _ in range(50))
        text = next(candidate for candidate in candidates if ast_or_none(candidate) is not None)
    assert parser.reused >= 8


def test_deferred_fixes_are_the_fixes() -> None:
    """The server's findings carry their fixes deferred (computed when a code action asks): once
    computed, they are the fixes `memlint check` reports."""
    settings = api.settings_for(ROOT)
    text = training_script(300, "many")
    eager = lint_text(text, "train.py", settings)
    deferred = lint_text(text, "train.py", settings, parser=IncrementalParser(), defer_fixes=True)
    assert [d.fix for d in deferred] == [None] * len(eager)
    assert sum(d.fix is not None for d in eager) > 10
    assert [d.resolved_fix() for d in deferred] == [d.fix for d in eager]
    assert [d.has_safe_fix() for d in deferred] == [d.fix is not None and d.fix.is_safe for d in eager]
