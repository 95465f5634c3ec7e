"""The result cache and `memlint clean` never touch what memlint did not write, and a cache
directory an adversary controls can neither hang memlint, eat its memory nor crash it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Optional

import pytest
from conftest import invoke, memlint_subprocess, write

from memlint.pipeline.cache import ENTRY_LIMIT, MARKER, Cache
from memlint.pipeline.registry import find_rule

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _finding() -> str:
    return textwrap.dedent(find_rule("ML001").INVALID[0].code).lstrip("\n")


def _entries(directory: Path, kind: Optional[str] = None) -> list[Path]:
    """The cache's entries; `kind` "diagnostics" (a file's findings) or "summary" (its summary for
    the project pass) keeps those of one kind."""
    entries = sorted(directory.glob("v1/*/*.json"))
    return [e for e in entries if kind is None or next(iter(json.loads(e.read_text()))) == kind]


def _listing(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------ a directory memlint did not create


@needs_git
def test_a_source_tree_given_as_cache_dir_is_neither_used_nor_cleaned(tmp_path):
    """The reproduction from the issue: `check --cache-dir .` then `clean --cache-dir .` in a git
    repository used to hide every file from git and then delete the whole folder, .git included."""
    _git("init", "-q", cwd=tmp_path)
    (tmp_path / "a.py").write_text("import torch\n")
    before = _listing(tmp_path)

    result = memlint_subprocess("check", "--cache-dir", ".", "a.py", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "All checks passed!\n"
    assert result.stderr.count("memlint: warning:") == 1  # warned once, then ran without a cache
    assert "not using . as the cache" in result.stderr and "running without a cache" in result.stderr
    assert _listing(tmp_path) == before  # no CACHEDIR.TAG, no .gitignore hiding the tree, no entries
    assert _git("status", "--porcelain", cwd=tmp_path) == "?? a.py\n"

    cleaned = memlint_subprocess("clean", "--cache-dir", ".", cwd=tmp_path)
    assert cleaned.returncode == 2 and "memlint: error:" in cleaned.stderr
    assert _listing(tmp_path) == before
    assert (tmp_path / "a.py").read_text() == "import torch\n"
    assert _git("rev-parse", "--is-inside-work-tree", cwd=tmp_path) == "true\n"


def test_a_cache_dir_holding_a_user_file_is_not_used(project):
    write(project / "train.py", _finding())
    notes = write(project / "cache" / "notes.txt", "mine\n")
    expected = invoke("check", "--no-cache", ".").output

    result = memlint_subprocess("check", "--cache-dir", "cache", ".", cwd=project)
    assert result.returncode == 1 and result.stdout == expected  # the run goes on, without a cache
    assert result.stderr.count("memlint: warning:") == 1 and "not using cache as the cache" in result.stderr
    assert _listing(project / "cache") == ["notes.txt"]

    cleaned = invoke("clean", "--cache-dir", "cache")
    assert cleaned.exit_code == 2 and "not removing anything" in cleaned.output
    assert notes.read_text() == "mine\n" and _listing(project / "cache") == ["notes.txt"]


def test_a_cache_dir_that_is_a_file_is_not_used(project):
    write(project / "train.py", _finding())
    blocker = write(project / ".memlint_cache", "a file\n")  # (--cache-dir FILE is refused by click)
    result = memlint_subprocess("check", "--output-format", "concise", ".", cwd=project)
    assert result.returncode == 1 and "ML001" in result.stdout
    assert "as the cache: it is not a directory; running without a cache" in result.stderr
    assert blocker.read_text() == "a file\n"


def test_an_empty_directory_becomes_a_cache_without_a_warning(project):
    write(project / "train.py", _finding())
    (project / "empty").mkdir()
    result = memlint_subprocess("check", "--cache-dir", "empty", ".", cwd=project)
    assert result.returncode == 1 and result.stderr == ""
    assert (project / "empty" / MARKER).is_file()
    assert len(_entries(project / "empty", "diagnostics")) == len(_entries(project / "empty", "summary")) == 1


# ------------------------------------------------------------------ memlint clean


def test_clean_removes_a_normal_cache(project):
    write(project / "train.py", _finding())
    write(project / "util.py", "import torch\n")
    invoke("check", ".")
    cache = project / ".memlint_cache"
    assert {".gitignore", "CACHEDIR.TAG", MARKER, "v1"} == {path.name for path in cache.iterdir()}
    # Both files' summaries, and the findings of the one the screens let through.
    assert len(_entries(cache, "summary")) == 2 and len(_entries(cache, "diagnostics")) == 1
    result = memlint_subprocess("clean", cwd=project)
    assert result.returncode == 0 and result.stderr == f"Removed {cache}\n"
    assert not cache.exists()
    assert {path.name for path in project.iterdir()} == {"pyproject.toml", "train.py", "util.py"}


def test_clean_keeps_what_memlint_did_not_write_and_follows_no_link(project, tmp_path_factory):
    write(project / "train.py", _finding())
    invoke("check", ".")
    cache = project / ".memlint_cache"
    (entry,) = _entries(cache, "diagnostics")
    # Files outside the cache, named the way memlint names its own, behind symbolic links.
    outside = tmp_path_factory.mktemp("outside")
    victim_entry = write(outside / "ab" / ("0" * 64 + ".json"), "precious\n")
    victim_file = write(outside / "precious.txt", "precious\n")
    (cache / "v1" / "cd").symlink_to(outside / "ab", target_is_directory=True)  # a shard that is a link
    (entry.parent / ("1" * 64 + ".json")).symlink_to(victim_file)  # an entry that is a link
    (cache / "v2").symlink_to(outside, target_is_directory=True)  # a format directory that is a link
    write(cache / "README.md", "my notes\n")
    write(cache / "v1" / "notes.txt", "more notes\n")

    result = invoke("clean")
    linked_entry = f"v1/{entry.parent.name}/{'1' * 64}.json"
    assert result.exit_code == 0
    kept = ", ".join(sorted(["README.md", linked_entry, "v1/cd", "v1/notes.txt", "v2"]))
    assert f"kept what memlint did not write there: {kept}\n" in result.output
    assert _listing(cache) == sorted(["README.md", "v1", "v1/cd", "v1/notes.txt", "v2", f"v1/{entry.parent.name}", linked_entry])
    assert victim_entry.read_text() == "precious\n" and victim_file.read_text() == "precious\n"
    assert sorted(p.name for p in outside.rglob("*")) == sorted(["ab", "0" * 64 + ".json", "precious.txt"])


def test_clean_removes_what_an_older_memlint_wrote_into_a_project_and_nothing_else(project):
    """Before the marker, memlint wrote its tag, .gitignore and entries into any --cache-dir: clean
    takes those back out of a project that got them, and leaves the project."""
    write(project / "train.py", _finding())
    invoke("check", "--cache-dir", "fresh", ".")
    victim = project / "victim"
    write(victim / "src" / "model.py", "import torch\n")
    write(victim / ".gitignore", "build/\n")  # the user's own, which an older memlint kept
    for path in (project / "fresh").iterdir():
        if path.name == "v1":
            shutil.copytree(path, victim / "v1")
        elif path.name not in (MARKER, ".gitignore"):
            shutil.copy(path, victim / path.name)

    result = invoke("clean", "--cache-dir", "victim")
    assert result.exit_code == 0 and "kept what memlint did not write there: .gitignore, src" in result.output
    assert _listing(victim) == [".gitignore", "src", "src/model.py"]
    assert (victim / ".gitignore").read_text() == "build/\n"


def test_a_cache_from_before_the_marker_is_used_without_a_warning(project):
    write(project / "train.py", _finding())
    invoke("check", ".")
    cache = project / ".memlint_cache"
    (cache / MARKER).unlink()
    result = memlint_subprocess("check", ".", cwd=project)
    assert result.returncode == 1 and result.stderr == ""
    write(project / "other.py", "import torch\n")  # a miss: its summary is written, and the marker with it
    result = memlint_subprocess("check", ".", cwd=project)
    assert result.returncode == 1 and result.stderr == ""
    assert (cache / MARKER).is_file() and len(_entries(cache, "summary")) == 2


# ------------------------------------------------------------------ entries an adversary planted


@pytest.fixture(params=["diagnostics", "summary", "files"])
def cached(project, request):
    """A project with one file with a finding, its expected output and one of its three cache
    entries (its findings, its summary for the project pass, the pass's result for the project)."""
    write(project / "train.py", _finding())
    expected = memlint_subprocess("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    assert expected.returncode == 1
    memlint_subprocess("check", "--output-format", "json", ".", cwd=project)
    (entry,) = _entries(project / ".memlint_cache", request.param)
    return project, expected.stdout, entry


def _check_again(project: Path) -> subprocess.CompletedProcess:
    """A second run, which must not hang (memlint_subprocess times out) and must not crash."""
    result = memlint_subprocess("check", "--output-format", "json", ".", cwd=project)
    assert result.returncode == 1, result.stderr
    return result


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_place_of_an_entry_does_not_hang(cached):
    project, expected, entry = cached
    entry.unlink()
    os.mkfifo(entry)
    assert _check_again(project).stdout == expected


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["CACHEDIR.TAG", MARKER, ".gitignore"])
def test_a_fifo_in_place_of_the_cache_files_does_not_hang_check_or_clean(cached, name):
    project, expected, _ = cached
    fifo = project / ".memlint_cache" / name
    fifo.unlink()
    os.mkfifo(fifo)
    assert _check_again(project).stdout == expected
    cleaned = memlint_subprocess("clean", cwd=project)  # times out if it waits on the FIFO
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stderr.endswith(f"kept what memlint did not write there: {name}\n")
    assert fifo.exists() and os.listdir(project / ".memlint_cache") == [name]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_entry_linked_to_dev_zero_is_not_read(cached):
    project, expected, entry = cached
    entry.unlink()
    entry.symlink_to("/dev/zero")
    cache = Cache(entry.parent.parent.parent, "")
    assert cache.get(entry.stem) is None and cache.get_summary(entry.stem) is None and cache.get_pass(entry.stem) is None
    assert _check_again(project).stdout == expected


def test_an_entry_larger_than_the_limit_is_not_read(cached):
    project, expected, entry = cached
    with open(entry, "r+b") as handle:
        handle.truncate(ENTRY_LIMIT + 1)  # sparse: no disk needed, but reading it would take the memory
    cache = Cache(entry.parent.parent.parent, "")
    assert cache.get(entry.stem) is None and cache.get_summary(entry.stem) is None and cache.get_pass(entry.stem) is None
    assert _check_again(project).stdout == expected


def _crafted(entry: dict) -> list[dict]:
    """Entries with the right keys and the wrong types, each one field at a time."""
    diagnostic = entry["diagnostics"][0]
    variants = [[], {"diagnostics": {}}, {"diagnostics": [[]]}, {"diagnostics": None}]
    for name, bad in [
        ("location", ["1", "x"]), ("location", [1]), ("location", [True, 1]), ("end_location", None),
        ("frame", "text"), ("frame", [[1]]), ("frame", [["1", "line"]]), ("code", 1), ("severity", "fatal"),
        ("cell", True), ("cell", "1"), ("url", 3), ("message", None), ("fix", []),
        ("fix", {"message": "m", "applicability": "safe", "edits": [[0, 1, "x", [1, 1]]]}),
        ("fix", {"message": "m", "applicability": "safe", "edits": [["0", 1, "x", [1, 1], [1, 2]]]}),
        ("fix", {"message": "m", "applicability": "sometimes", "edits": []}),
    ]:
        variants.append({"diagnostics": [{**diagnostic, name: bad}]})
    return variants


def test_crafted_entries_are_misses_not_crashes(cached):
    project, expected, entry = cached
    original = json.loads(entry.read_text())
    if "summary" in original:
        return _crafted_summaries(project, expected, entry, original)
    if "files" in original:
        return _crafted_passes(project, expected, entry, original)
    cache = Cache(entry.parent.parent.parent, "")
    assert cache.get(entry.stem) is not None  # the genuine entry is a hit
    for variant in _crafted(original):
        entry.write_text(json.dumps(variant))
        assert cache.get(entry.stem) is None, variant
    entry.write_text(json.dumps({"diagnostics": [{**original["diagnostics"][0], "location": ["1", "x"]}]}))
    assert _check_again(project).stdout == expected  # the TypeError the issue reproduced


def _crafted_summary_variants(entry: dict) -> list[dict]:
    """Summary entries with the right shape almost everywhere and one field wrong."""
    summary = entry["summary"]
    function = {"calls": [[["n", "helper"], None, [0, "for x in loader", True], False]], "returns": [[True]]}
    good = {**summary, "functions": {**summary["functions"], "helper": function}}
    site = function["calls"][0]
    variants: list = [
        [], {"summary": summary}, {"summary": summary, "screened": True}, {"summary": summary, "screened": 1, "rules": None},
        {"summary": [], "screened": True, "rules": None}, {"summary": summary, "screened": True, "rules": "ML001"},
        {"summary": summary, "screened": True, "rules": [1]},
    ]
    for field, bad in [
        ("format", 99), ("format", True), ("imports", []), ("imports", {"x": ["m", None]}), ("imports", {"x": ["m", None, -1]}),
        ("imports", {"x": [1, None, 0]}), ("defs", "helper"), ("defs", [1]), ("classes", {"C": {"bases": "B"}}),
        ("classes", {"C": {"bases": [], "attrs": {"fc": 1}}}), ("classes", {"C": {}}), ("functions", []),
        ("functions", {"": {"calls": []}}), ("functions", {**good["functions"], "Missing.m": {}}),
        ("extra", {}),
    ]:
        variants.append({"summary": {**good, field: bad}, "screened": True, "rules": None})
    for field, bad in [
        ("grad", "off!"), ("hook", "daily"), ("trains", 1), ("flush", None), ("decorators", [None]), ("model", [["x"]]),
        ("returns", [[]]), ("returns", [["c", "x"]]), ("calls", [site[:3]]), ("calls", [[["n"], None, None, False]]),
        ("calls", [[["n", "f"], "sometimes", None, False]]), ("calls", [[["n", "f"], None, [0, None], False]]),
        ("calls", [[["n", "f"], None, ["0", None, False], False]]), ("calls", [[["i", "C"], None, None, False]]),
        ("calls", [[["n", "f"], None, None, 0]]), ("unknown", True),
    ]:
        broken = {**function, field: bad}
        variants.append({"summary": {**good, "functions": {**good["functions"], "helper": broken}}, "screened": True, "rules": None})
    return variants


def _crafted_summaries(project: Path, expected: str, entry: Path, original: dict) -> None:
    cache = Cache(entry.parent.parent.parent, "")
    assert cache.get_summary(entry.stem) == original  # the genuine entry is a hit
    for variant in _crafted_summary_variants(original):
        entry.write_text(json.dumps(variant))
        assert cache.get_summary(entry.stem) is None, variant
    entry.write_text(json.dumps(_crafted_summary_variants(original)[-1]))
    assert _check_again(project).stdout == expected


def _crafted_passes(project: Path, expected: str, entry: Path, original: dict) -> None:
    """A project pass entry whose views have the wrong shape is a miss: the pass runs again."""
    from memlint.pipeline.prepare import _read_pass

    cache = Cache(entry.parent.parent.parent, "")
    assert _read_pass(cache, entry.stem, 1, ["0" * 64]) is not None  # the genuine entry is a hit
    (screened, view, rules), = original["files"]
    for variant in [
        [], {"files": {}}, {"files": [[screened]]}, {"files": [[screened, view]]}, {"files": [[1, view, rules]]},
        {"files": [[screened, view[:6], rules]]}, {"files": [[screened, [*view[:2], [["f"]], *view[3:]], rules]]},
        {"files": [[screened, [[1], *view[1:]], rules]]}, {"files": [[screened, view, "ML001"]]},
        {"files": [[screened, view, [1]]]},
        {"files": [[screened, view, rules], [screened, view, rules]]},  # another number of files
    ]:
        entry.write_text(json.dumps(variant))
        assert _read_pass(cache, entry.stem, 1, ["0" * 64]) is None, variant
    assert _check_again(project).stdout == expected
