"""Does the language server's incremental parse give libcst's own tree after realistic edits of real
code?  A stress test of memlint/pipeline/incremental.py against whole parses.

    python bench/incremental_check.py [DIR ...] [--edits 20] [--seed 0] [--limit N] [--max-bytes 200000]
    python bench/incremental_check.py bench/corpora/timm-1.0.31 --limit 50 --out /tmp/incremental

For each *.py file under each DIR (default: fixtures/ and the corpora under bench/corpora/ that are
present: timm, transformers, pytorch-lightning, realcode), one IncrementalParser parses the file's
text, then --edits random edits applied one after another to the current text, as an editor's user
types: characters typed or deleted (letters, space, tab, newline, '#', ':', brackets, quotes),
whole lines inserted, deleted, duplicated or re-indented, comment lines at column 0 or indented,
edits at the start of `def`/`class`/decorator lines, compound statements (2/4/8 spaces, tab,
`match`) inserted before a column-0 line or removed, typing at the end of the file, the final
newline removed, and, after an edit that leaves the text not compiling, now and then an undo to
the last text that compiled.  Edit positions are anywhere, at line starts, and at the end.

After each edit the incremental parse (given CPython's AST of the text; None when it does not
compile) is compared with `tree.parse_module`: the trees must be `deep_equals` and
print back the text (unless the whole parse does not either: libcst drops some indented comment lines
after the last statement, counted apart); when the whole parse raises, the incremental one must
raise the same type.
A mismatch is written to --out (old.py, new.py, the pair shrunk to the lines that matter, and a
note).  Prints per corpus: files, edits, edits that compile, parses that re-used statements, the
mismatches, the median times of the two parses over the edits that compile, and the edits by kind
with how many of them re-used statements.  Exit 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from memlint.pipeline.incremental import IncrementalParser  # noqa: E402
from memlint.pipeline.source import ast_or_none  # noqa: E402
from memlint.pipeline.text import Positions  # noqa: E402
from memlint.pipeline.tree import parse_module  # noqa: E402

CORPORA = ("timm-1.0.31", "transformers-5.23.0", "pytorch-lightning-2.6.6", "realcode")
TYPED = "abcdefghijklmnopqrstuvwxyz_XY0123456789" + " " * 8 + "\n" * 6 + "\t#:()[]{}.,='\"" + "'\"#:()"
WORDS = ("x", "self", "pass", "return", "if", "def", "class", "import", "y = 1", "print(x)", "# todo")


def default_targets() -> list[Path]:
    found = [ROOT / "bench" / "corpora" / name for name in CORPORA if (ROOT / "bench" / "corpora" / name).is_dir()]
    return found + [ROOT / "fixtures"]


# --- edits -------------------------------------------------------------------------------------


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def pick_offset(text: str, rng: random.Random) -> int:
    """Anywhere (half the time), a line start, or the end of the file."""
    roll = rng.random()
    if roll < 0.5 or not text:
        return rng.randint(0, len(text))
    if roll < 0.85:
        return rng.choice(Positions(text).starts)
    return len(text) - rng.randint(0, min(3, len(text)))


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def boundary_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith(("def ", "class ", "@", "async def "))]


def edit_char_insert(text: str, rng: random.Random) -> str:
    at = pick_offset(text, rng)
    return text[:at] + rng.choice(TYPED) + text[at:]


def edit_char_delete(text: str, rng: random.Random) -> str:
    if not text:
        return text
    at = min(pick_offset(text, rng), len(text) - 1)
    return text[:at] + text[at + 1 :]


def edit_line_insert(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    at = rng.randint(0, len(lines))
    near = lines[min(at, len(lines) - 1)] if lines else ""
    body = rng.choice(lines).strip() if lines and rng.random() < 0.5 else rng.choice(WORDS)
    return "".join(lines[:at]) + indent_of(near) + body + "\n" + "".join(lines[at:])


def edit_line_delete(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    if not lines:
        return text
    at = rng.randrange(len(lines))
    return "".join(lines[:at] + lines[at + 1 :])


def edit_comment_indented(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    at = rng.randint(0, len(lines))
    near = lines[min(at, len(lines) - 1)] if lines else ""
    indent = indent_of(near) or rng.choice(("    ", "        ", "\t"))
    return "".join(lines[:at]) + indent + "# an indented comment\n" + "".join(lines[at:])


def edit_comment_col0(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    at = rng.randint(0, len(lines))
    return "".join(lines[:at]) + rng.choice(("# note\n", "#\n", "# note\n\n", "\n# note\n")) + "".join(lines[at:])


def edit_reindent(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    if not lines:
        return text
    at = rng.randrange(len(lines))
    line = lines[at]
    if rng.random() < 0.5:
        line = rng.choice(("    ", " ", "\t")) + line
    else:
        line = line[min(len(indent_of(line)), rng.choice((1, 4))) :] if indent_of(line) else line
    return "".join(lines[:at] + [line] + lines[at + 1 :])


def edit_duplicate_line(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    if not lines:
        return text
    at = rng.randrange(len(lines))
    line = lines[at] if lines[at].endswith("\n") else lines[at] + "\n"
    return "".join(lines[:at] + [line] + lines[at:])


def edit_delete_blank(text: str, rng: random.Random) -> str:
    lines = lines_of(text)
    blanks = [i for i, line in enumerate(lines) if not line.strip()]
    if not blanks:
        return edit_line_delete(text, rng)
    at = rng.choice(blanks)
    return "".join(lines[:at] + lines[at + 1 :])


def edit_boundary(text: str, rng: random.Random) -> str:
    """At the start of a `def`, `class` or decorator line: a character, a line or a comment before it,
    or its first character or the blank line above removed."""
    lines = lines_of(text)
    found = boundary_lines(lines)
    if not found:
        return edit_char_insert(text, rng)
    at = rng.choice(found)
    start = sum(len(line) for line in lines[:at])
    roll = rng.random()
    if roll < 0.25:
        return text[:start] + rng.choice(TYPED) + text[start:]
    if roll < 0.4:
        return text[:start] + text[start + 1 :]
    if roll < 0.55 and at > 0:
        return text[: start - len(lines[at - 1])] + text[start:]  # the line above
    if roll < 0.7:  # the end of the line above (often the end of the previous block)
        return text[: max(start - 1, 0)] + rng.choice(TYPED) + text[max(start - 1, 0) :]
    inserted = rng.choice(("\n", "# comment\n", "    # indented comment\n", "x = 1\n", "@decorator\n", "    pass\n"))
    return text[:start] + inserted + text[start:]


BLOCKS = (
    "if x:\n  y = 1\n", "if x:\n\ty = 1\n", "for i in x:\n        pass\n", "while x:\n    pass\n",
    "match x:\n  case 1:\n      pass\n", "match x:\n    case 1: pass\n", "match x:\n    case 1:\n        pass\n",
    "try:\n   pass\nexcept E:\n   pass\n", "class C: pass\n", "def g():\n    return 1\n", "if x: y = 1\nelse:\n  y = 2\n",
)  # fmt: skip


def top_level_starts(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "\t", "\n", "#", ")", "]", "}")]


def edit_block_insert(text: str, rng: random.Random) -> str:
    """A compound statement (of 2, 4 or 8 spaces or a tab, or a match) before a column-0 line: it may
    become the document's first indented block, which sets libcst's default indentation."""
    lines = lines_of(text)
    found = top_level_starts(lines) or [len(lines)]
    at = rng.choice(found[: max(3, len(found) // 3)] if rng.random() < 0.5 else found)
    return "".join(lines[:at]) + rng.choice(BLOCKS) + "".join(lines[at:])


def edit_block_delete(text: str, rng: random.Random) -> str:
    """A top-level compound statement removed (often the first indented block)."""
    lines = lines_of(text)
    found = [i for i in top_level_starts(lines) if lines[i].rstrip().endswith(":")]
    if not found:
        return edit_line_delete(text, rng)
    at = found[0] if rng.random() < 0.5 else rng.choice(found)
    end = at + 1
    while end < len(lines) and (lines[end][:1] in (" ", "\t", "\n") or lines[end].startswith("#")):
        end += 1
    return "".join(lines[:at] + lines[end:])


def edit_at_end(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.45:
        return text + rng.choice(TYPED)
    if roll < 0.6:
        return text + rng.choice(("\n", "x = 1\n", "# end\n", "def f():\n    pass\n", "    # tail\n", "    y = 2\n"))
    return text[:-1] if text else text


def edit_drop_final_newline(text: str, rng: random.Random) -> str:
    return text.rstrip("\n") if text.endswith("\n") else text + "\n"


EDITS: dict[str, tuple[float, Callable[[str, random.Random], str]]] = {
    "char_insert": (22, edit_char_insert),
    "char_delete": (12, edit_char_delete),
    "line_insert": (7, edit_line_insert),
    "line_delete": (7, edit_line_delete),
    "comment_indented": (6, edit_comment_indented),
    "comment_col0": (6, edit_comment_col0),
    "reindent": (5, edit_reindent),
    "duplicate_line": (5, edit_duplicate_line),
    "delete_blank": (5, edit_delete_blank),
    "boundary": (12, edit_boundary),
    "end": (11, edit_at_end),
    "drop_final_newline": (2, edit_drop_final_newline),
    "block_insert": (4, edit_block_insert),
    "block_delete": (3, edit_block_delete),
}


# --- checking ----------------------------------------------------------------------------------


def outcome(parse: Callable[[], cst.Module]) -> tuple[Optional[cst.Module], Optional[BaseException], float]:
    started = time.perf_counter()
    try:
        module = parse()
    except Exception as error:  # noqa: BLE001 - compared by type
        return None, error, time.perf_counter() - started
    return module, None, time.perf_counter() - started


def difference(text: str, mine: tuple, whole: tuple) -> Optional[str]:
    """Why the incremental parse's outcome is not the whole parse's; None when they agree."""
    (module, error, _), (expected, expected_error, _) = mine, whole
    if expected_error is not None or error is not None:
        if type(error) is type(expected_error):
            return None
        return f"incremental raised {type(error).__name__}: {error!s:.300}; whole raised {type(expected_error).__name__}"
    assert module is not None and expected is not None
    if module.code != text and expected.code == text:
        return "incremental tree does not print back the text"
    if not module.deep_equals(expected):
        notes = []
        for name in ("default_indent", "default_newline", "has_trailing_newline", "encoding"):
            if getattr(module, name) != getattr(expected, name):
                notes.append(f"{name}: {getattr(module, name)!r} != whole {getattr(expected, name)!r}")
        if not cst.Module(body=module.header).deep_equals(cst.Module(body=expected.header)):
            notes.append("header differs")
        if not cst.Module(body=module.footer).deep_equals(cst.Module(body=expected.footer)):
            notes.append(f"footer differs: {len(module.footer)} vs {len(expected.footer)} lines")
        if len(module.body) != len(expected.body):
            notes.append(f"{len(module.body)} statements vs {len(expected.body)}")
        for index, (a, b) in enumerate(zip(module.body, expected.body)):
            if not a.deep_equals(b):
                notes.append(f"statement {index} differs: incremental {module.code_for_node(a)[:300]!r} "
                             f"whole {expected.code_for_node(b)[:300]!r}")  # fmt: skip
                break
        return "trees differ: " + "; ".join(notes or ["(somewhere below the module)"])
    return None


def pair_fails(old: str, new: str) -> bool:
    """Does a fresh parser, given `old` and then `new`, disagree with the whole parse of `new`?"""
    parser = IncrementalParser()
    try:
        parser.parse(old, ast_or_none(old))
    except Exception:  # noqa: BLE001
        return False
    tree = ast_or_none(new)
    return difference(new, outcome(lambda: parser.parse(new, tree)), outcome(lambda: parse_module(new))) is not None


def shrink(old: str, new: str, budget: float = 20.0) -> tuple[str, str]:
    """Lines dropped from the common start and end of the pair while it still fails (ddmin-like)."""
    from memlint.pipeline.text import common_ends

    deadline = time.monotonic() + budget
    prefix, suffix = common_ends(old, new)
    # whole lines around the changed stretch
    prefix = old.rfind("\n", 0, prefix) + 1
    tail_start = len(old) - suffix
    if 0 < tail_start < len(old) and old[tail_start - 1] != "\n":
        newline = old.find("\n", tail_start)
        tail_start = len(old) if newline < 0 else newline + 1
    suffix = len(old) - tail_start
    head, tail = lines_of(old[:prefix]), lines_of(old[tail_start:])
    mid_old, mid_new = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]

    def build(h: list[str], t: list[str]) -> tuple[str, str]:
        return "".join(h) + mid_old + "".join(t), "".join(h) + mid_new + "".join(t)

    if not pair_fails(*build(head, tail)):
        return old, new
    for side in ("head", "tail", "head", "tail"):
        chunk = max(1, len(head if side == "head" else tail) // 2)
        while chunk >= 1 and time.monotonic() < deadline:
            lines = head if side == "head" else tail
            removed_any = False
            i = 0
            while i < len(lines) and time.monotonic() < deadline:
                trial = lines[:i] + lines[i + chunk :]
                h, t = (trial, tail) if side == "head" else (head, trial)
                if pair_fails(*build(h, t)):
                    lines, removed_any = trial, True
                    head, tail = h, t
                else:
                    i += chunk
            if not removed_any:
                chunk //= 2
    return build(head, tail)


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Tally:
    files: int = 0
    skipped: int = 0
    edits: int = 0
    compiled: int = 0
    reused: int = 0
    mismatches: int = 0
    lossy: int = 0  # edits whose whole parse does not print back the text either (libcst's, not compared)
    inc_times: list[float] = field(default_factory=list)
    whole_times: list[float] = field(default_factory=list)
    reused_inc_times: list[float] = field(default_factory=list)
    reused_whole_times: list[float] = field(default_factory=list)
    kinds: collections.Counter = field(default_factory=collections.Counter)
    kinds_reused: collections.Counter = field(default_factory=collections.Counter)


def check_file(path: Path, text: str, args: argparse.Namespace, rng: random.Random, tally: Tally, out: Path, corpus: str) -> None:
    parser = IncrementalParser()
    tree = ast_or_none(text)
    base = (outcome(lambda: parser.parse(text, tree)), outcome(lambda: parse_module(text)))
    if difference(text, *base):
        report(out, corpus, path, "", text, "open", difference(text, *base) or "", tally, [text])
    history = [text]
    last_compiling = text if tree is not None else None
    names, weights = list(EDITS), [EDITS[name][0] for name in EDITS]
    for _ in range(args.edits):
        old = text
        if tree is None and last_compiling is not None and rng.random() < args.undo:
            kind, text = "undo", last_compiling
        else:
            kind = rng.choices(names, weights)[0]
            text = EDITS[kind][1](text, rng)
        history.append(text)
        tree = ast_or_none(text)
        before = parser.reused
        mine = outcome(lambda: parser.parse(text, tree))
        whole = outcome(lambda: parse_module(text))
        tally.edits += 1
        tally.kinds[kind] += 1
        if tree is not None:
            last_compiling = text
            tally.compiled += 1
            if whole[1] is None:
                tally.inc_times.append(mine[2])
                tally.whole_times.append(whole[2])
        if parser.reused > before:
            tally.reused += 1
            tally.kinds_reused[kind] += 1
            tally.reused_inc_times.append(mine[2])
            tally.reused_whole_times.append(whole[2])
        if whole[0] is not None and whole[0].code != text:
            tally.lossy += 1  # libcst's own print differs (indented comments after the last statement)
        problem = difference(text, mine, whole)
        if problem:
            report(out, corpus, path, old, text, kind, problem, tally, history)
            # a fresh parser from the whole parse, so that one wrong tree is not counted again on every edit after it
            parser = IncrementalParser()
            try:
                parser.parse(text, tree)
            except Exception:  # noqa: BLE001
                pass
            history = [text]


def report(out: Path, corpus: str, path: Path, old: str, new: str, kind: str, problem: str, tally: Tally, history: list[str]) -> None:
    tally.mismatches += 1
    folder = out / f"{tally.mismatches:03d}_{corpus}_{path.stem}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old.py").write_text(old, encoding="utf-8")
    (folder / "new.py").write_text(new, encoding="utf-8")
    reproduces = pair_fails(old, new)
    note = [f"file: {path}", f"edit: {kind}", f"problem: {problem}", f"a fresh parser given old then new fails too: {reproduces}"]
    if reproduces:
        small_old, small_new = shrink(old, new)
        (folder / "old.min.py").write_text(small_old, encoding="utf-8")
        (folder / "new.min.py").write_text(small_new, encoding="utf-8")
        note.append(f"shrunk: old {small_old!r}")
        note.append(f"        new {small_new!r}")
    else:  # the state came from earlier incremental parses: keep the whole sequence
        for index, text in enumerate(history):
            (folder / f"step{index:03d}.py").write_text(text, encoding="utf-8")
    (folder / "note.txt").write_text("\n".join(note) + "\n", encoding="utf-8")
    print(f"  MISMATCH {folder.name}: {kind}: {problem[:200]}", flush=True)


def files_of(directory: Path, args: argparse.Namespace, rng: random.Random) -> tuple[list[Path], int]:
    found = sorted(p for p in directory.rglob("*.py") if p.is_file())
    small = [p for p in found if p.stat().st_size <= args.max_bytes]
    rng.shuffle(small)
    return (small[: args.limit] if args.limit else small), len(found) - len(small)


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f}" if values else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path, help="default: the corpora under bench/corpora/ and fixtures/")
    parser.add_argument("--edits", type=int, default=20, help="edits per file, each on the text the last one left")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="files per directory, drawn at random (0: all)")
    parser.add_argument("--max-bytes", type=int, default=200_000, help="skip larger files")
    parser.add_argument("--undo", type=float, default=0.5,
                        help="chance that an edit after one that broke compilation undoes back to the last text that compiled")
    parser.add_argument("--out", type=Path, help="where mismatches are written (default: a temporary folder)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="incremental_check_"))
    out.mkdir(parents=True, exist_ok=True)
    tallies: dict[str, Tally] = {}
    started = time.perf_counter()
    for directory in args.dirs or default_targets():
        directory = directory.resolve()
        name = directory.name
        rng = random.Random(f"{args.seed}:{name}")
        tally = tallies.setdefault(name, Tally())
        files, too_big = files_of(directory, args, rng)
        tally.skipped += too_big
        print(f"{name}: {len(files)} files ({too_big} over {args.max_bytes} bytes skipped)", flush=True)
        for path in files:
            try:
                with path.open(encoding="utf-8", newline="") as handle:  # its own line endings, CRLF included
                    text = handle.read()
            except (UnicodeDecodeError, OSError):
                tally.skipped += 1
                continue
            tally.files += 1
            check_file(path, text, args, random.Random(f"{args.seed}:{path}"), tally, out, name)
    elapsed = time.perf_counter() - started
    header = f"{'corpus':<26}{'files':>7}{'edits':>8}{'compiled':>10}{'reused':>9}{'%comp':>7}{'mism':>6}" \
             f"{'inc ms':>8}{'whole ms':>10}{'reused: inc':>13}{'whole':>7}"  # fmt: skip
    print(f"\n{header}")
    total = Tally()
    for name, tally in [*tallies.items(), ("total", None)]:
        if tally is None:
            tally = total
        else:
            for attr in ("files", "skipped", "edits", "compiled", "reused", "mismatches", "lossy"):
                setattr(total, attr, getattr(total, attr) + getattr(tally, attr))
            for attr in ("inc_times", "whole_times", "reused_inc_times", "reused_whole_times"):
                getattr(total, attr).extend(getattr(tally, attr))
            for attr in ("kinds", "kinds_reused"):
                getattr(total, attr).update(getattr(tally, attr))
        share = f"{100 * tally.reused / tally.compiled:.0f}" if tally.compiled else "-"
        print(f"{name:<26}{tally.files:>7}{tally.edits:>8}{tally.compiled:>10}{tally.reused:>9}{share:>7}{tally.mismatches:>6}"
              f"{ms(tally.inc_times):>8}{ms(tally.whole_times):>10}{ms(tally.reused_inc_times):>13}{ms(tally.reused_whole_times):>7}")  # fmt: skip
    print("\n(inc ms / whole ms: medians over the edits that compile; reused: over the parses that re-used statements)")
    if total.lossy:
        print(f"{total.lossy} edits where libcst's whole parse itself does not print back the text (not counted as mismatches)")
    print("\nedits by kind (reused / all):")
    print("  " + ", ".join(f"{kind} {total.kinds_reused[kind]}/{count}" for kind, count in total.kinds.most_common()))
    print(f"\n{elapsed:.0f} s; mismatches written to {out}" if total.mismatches else f"\n{elapsed:.0f} s; no mismatches ({out})")
    return 1 if total.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
