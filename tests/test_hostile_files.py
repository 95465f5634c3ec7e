"""Hostile files: each gives a clear finding or message, the run goes on to the other files, and the
exit code stays 0 or 1 (never a traceback); a path named that does not exist is an error (2)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, invoke, memlint_subprocess, write

# A second, ordinary file in every run: its finding proves the run went on past the hostile one.
NEIGHBOUR_FINDING = "z_neighbour.py:6:5: ML001"


@pytest.fixture
def neighbour(project):
    write(project / "z_neighbour.py", EVAL_LOOP)
    return project


def check(*paths: str):
    result = invoke("check", "--output-format", "concise", "--no-cache", "--jobs", "1", *paths)
    assert "Traceback" not in result.output
    return result


def test_nul_bytes(neighbour):
    (neighbour / "nul.py").write_bytes(b"import torch\nx = 1\x00\n")
    result = check(".")
    assert result.exit_code == 1
    assert "nul.py:1:1: ML000 SyntaxError: source contains NUL bytes (a binary file?)" in result.output
    assert NEIGHBOUR_FINDING in result.output


def test_binary_content(neighbour):
    (neighbour / "image.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 20)
    (neighbour / "noise.py").write_bytes(bytes(range(1, 256)) * 20)  # binary without a NUL byte
    result = check(".")
    assert result.exit_code == 1
    assert "image.py:1:1: ML000 SyntaxError: source contains NUL bytes" in result.output
    assert "noise.py:1:1: ML000 SyntaxError: cannot decode as utf-8" in result.output
    assert NEIGHBOUR_FINDING in result.output


def test_undecodable_bytes(neighbour):
    (neighbour / "bad.py").write_bytes(b'import torch\ns = "\xff\xfe"\n')
    (neighbour / "bad_cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\nimport torch\n")
    result = check(".")
    assert result.exit_code == 1
    assert "bad.py:1:1: ML000 SyntaxError: cannot decode as utf-8" in result.output
    assert "bad_cookie.py:1:1: ML000 SyntaxError: unknown encoding" in result.output
    assert NEIGHBOUR_FINDING in result.output


def test_latin1_with_coding_cookie_is_linted(project):
    source = "# -*- coding: latin-1 -*-\n# café\n" + EVAL_LOOP.lstrip("\n")
    (project / "latin.py").write_bytes(source.encode("latin-1"))
    result = check("latin.py")
    assert result.exit_code == 1
    assert "latin.py:8:5: ML001" in result.output


def test_utf8_bom_does_not_shift_columns(project):
    (project / "bom.py").write_bytes(("\ufeff" + EVAL_LOOP.lstrip("\n")).encode("utf-8"))
    result = check("bom.py")
    assert result.exit_code == 1
    assert "bom.py:6:5: ML001" in result.output


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_crlf_and_cr_newlines_keep_rows(project, newline):
    (project / "lines.py").write_bytes(EVAL_LOOP.lstrip("\n").replace("\n", newline).encode())
    result = check("lines.py")
    assert result.exit_code == 1
    assert "lines.py:6:5: ML001" in result.output


def test_empty_file(project):
    (project / "empty.py").write_bytes(b"")
    (project / "only_torch.py").write_bytes(b"import torch")  # no trailing newline
    result = check(".")
    assert result.exit_code == 0
    assert "All checks passed!" in result.output


def test_deep_nesting_is_a_syntax_error_not_a_crash(neighbour):
    # libcst's native parser overflows the C stack (a segfault) on code like this; CPython refuses it
    # (at most 200 nested brackets, an AST about 3,000 deep), so memlint reports it before parsing.
    (neighbour / "brackets.py").write_text("import torch\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\n")
    (neighbour / "lists.py").write_text("import torch\nx = " + "[" * 2000 + "]" * 2000 + "\n")
    (neighbour / "chain.py").write_text("import torch\nx = a" + "[0]" * 5000 + "\n")
    (neighbour / "unary.py").write_text("import torch\nx = " + "-" * 20000 + "1\n")
    body = "".join(" " * (i + 1) + "if x:\n" for i in range(300))  # CPython allows 100 levels
    (neighbour / "indent.py").write_text("import torch\ndef f():\n" + body + " " * 301 + "pass\n")
    result = memlint_subprocess("check", "--output-format", "concise", "--no-cache", ".", cwd=neighbour)
    assert result.returncode == 1, result.stderr  # a segfault would be -11
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stdout
    assert "brackets.py:2:205: ML000 SyntaxError: too many nested parentheses" in result.stdout
    assert "lists.py:2:205: ML000 SyntaxError: too many nested parentheses" in result.stdout
    assert "chain.py:1:1: ML000 SyntaxError: code is nested too deeply for Python to compile" in result.stdout
    assert "unary.py:1:1: ML000 SyntaxError: code is nested too deeply for Python to compile" in result.stdout
    assert "indent.py:102:1: ML000 SyntaxError: too many levels of indentation" in result.stdout
    assert NEIGHBOUR_FINDING in result.stdout


def test_deep_but_valid_nesting_is_reported_not_raised(project):
    # Deep enough to exhaust Python's recursion limit in a recursive walk, shallow enough to compile.
    (project / "deep.py").write_text("import torch\nx = " + "not " * 1500 + "y\n")
    result = check("deep.py")
    assert result.exit_code in (0, 1)
    assert "RecursionError" not in result.output


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loops_end(neighbour):
    (neighbour / "pkg").mkdir()
    os.symlink("..", neighbour / "pkg" / "up")  # a directory loop
    os.symlink("self.py", neighbour / "self.py")  # a link to itself
    os.symlink("b.py", neighbour / "a.py")
    os.symlink("a.py", neighbour / "b.py")  # a two-link cycle
    result = invoke("check", "--output-format", "concise", "--no-cache", ".")  # CliRunner: no timeout needed
    assert result.exit_code == 1
    assert result.output.count(NEIGHBOUR_FINDING) == 1  # the loop did not visit it twice
    direct = check("self.py", "a.py")
    # Named, a link that leads nowhere is a path that could not be checked: an error, as a missing one.
    assert "memlint: error: self.py: not a regular file or directory" in direct.output and direct.exit_code == 2


def test_unreadable_file(neighbour, monkeypatch):
    (neighbour / "secret.py").write_text(EVAL_LOOP)
    if os.geteuid() != 0:
        os.chmod(neighbour / "secret.py", 0)
    else:  # root reads anything: make opening it fail the way chmod 000 would
        real = os.open

        def open_file(path, *args, **kwargs):
            if os.path.basename(path) == "secret.py":
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", open_file)
    result = check(".")
    assert result.exit_code == 1
    assert "memlint: warning: secret.py: cannot read: Permission denied" in result.output
    assert NEIGHBOUR_FINDING in result.output


def test_directory_named_like_a_python_file(neighbour):
    write(neighbour / "x.py" / "inner.py", EVAL_LOOP)
    result = check(".")
    assert "x.py/inner.py:6:5: ML001" in result.output  # walked as the directory it is
    assert check("x.py").exit_code == 1


def test_path_that_does_not_exist(neighbour):
    result = check("missing.py", "z_neighbour.py")
    assert result.exit_code == 2  # an error (README, exit codes), the run going on
    assert "memlint: error: missing.py: no such file or directory" in result.output
    assert NEIGHBOUR_FINDING in result.output


def _generated(size: int) -> str:
    """A generated module: a training loop with a finding, then `size` bytes of comment lines."""
    line = "# generated table row 0123456789abcdef 0123456789abcdef 0123456789abcdef\n"
    return EVAL_LOOP.lstrip("\n") + line * (size // len(line))


def _children_cpu_seconds() -> float:
    """CPU time of the child processes waited for so far. Timings compare CPU time, not wall time:
    other processes sharing the machine stretch wall time, not the CPU time memlint itself uses."""
    try:
        import resource
    except ImportError:  # not POSIX: wall time
        return time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_check(project: Path, name: str, size: int) -> float:
    (project / name).write_text(_generated(size))
    started = _children_cpu_seconds()
    result = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--output-format", "concise", "--no-cache", name],
        cwd=project, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    elapsed = _children_cpu_seconds() - started
    assert result.returncode == 1, result.stderr
    assert f"{name}:6:5: ML001" in result.stdout
    return elapsed


def test_ten_megabyte_file_in_time_linear_in_its_size(project):
    (project / "pyproject.toml").write_text('[tool.memlint]\nmax-file-size = "12MB"\n')  # above the default
    small = _timed_check(project, "small.py", 2_500_000)
    large = _timed_check(project, "large.py", 10_000_000)
    # 4x the size: linear is ~4x the time; quadratic would be ~16x.  Generous for a shared machine.
    assert large < 9 * small, (small, large)


def test_many_fixable_findings_in_time_linear_in_their_number(project):
    block = "def f{i}(loader):\n    total = 0.0\n    for x, y in loader:\n        total += model(x).sum()\n    return total\n"
    times = []
    for count in (40, 160):
        path = project / f"many{count}.py"
        path.write_text("import torch\n" + "".join(block.format(i=i) for i in range(count)))
        started = time.process_time()  # in this process (--jobs 1); CPU time, as above
        result = check(path.name)
        times.append(time.process_time() - started)
        assert result.output.count(": ML001") == count
    assert times[1] < 9 * times[0], times


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_exit_code_stays_one_with_every_kind_of_hostile_file(neighbour):
    (neighbour / "nul.py").write_bytes(b"\x00")
    (neighbour / "bad.py").write_bytes(b"\xff")
    (neighbour / "empty.py").write_bytes(b"")
    (neighbour / "dir.py").mkdir()
    result = check(".")
    assert result.exit_code == 1
    assert NEIGHBOUR_FINDING in result.output
