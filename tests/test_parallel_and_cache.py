"""--jobs, the result cache, `memlint clean` and the progress bar, as users run them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import invoke, memlint_subprocess, write

import memlint
from memlint.pipeline.registry import find_rule
from memlint.report import progress


def _finding_snippet() -> str:
    return textwrap.dedent(find_rule("ML001").INVALID[0].code).lstrip("\n")


def _tree(root: Path, count: int = 24) -> None:
    """A project with findings, clean files, a file without torch and a syntax error."""
    snippet = _finding_snippet()
    for index in range(count):
        kind = index % 4
        if kind == 0:
            source = snippet
        elif kind == 1:
            source = f"import torch\n\ndef f{index}(x):\n    return torch.relu(x) + {index}\n"
        elif kind == 2:
            source = f"VALUE = {index}\n"
        else:
            source = snippet + "\n\ndef broken(:\n    pass\n" if index == 7 else snippet.replace("loss", f"loss_{index}")
        write(root / f"pkg{index % 3}" / f"module_{index:02d}.py", source)


def _cache_entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("v1/*/*.json"))


def test_output_is_identical_for_any_number_of_jobs(project):
    _tree(project)
    outputs = {}
    for jobs in ("1", "2", "3"):
        for output_format in ("json", "full"):
            result = memlint_subprocess("check", "--no-cache", "--jobs", jobs, "--output-format", output_format, ".", cwd=project)
            assert result.returncode == 1, result.stderr
            outputs.setdefault(output_format, set()).add(result.stdout)
    assert all(len(variants) == 1 for variants in outputs.values())
    findings = json.loads(outputs["json"].pop())
    assert {d["code"] for d in findings} >= {"ML001", "ML000"}
    assert [d["filename"] for d in findings] == sorted(d["filename"] for d in findings)


def test_second_run_is_served_from_the_cache_and_matches(project):
    _tree(project, count=12)
    first = invoke("check", "--output-format", "json", ".")
    cache = project / ".memlint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    entries = _cache_entries(cache)
    kinds = [next(iter(json.loads(entry.read_text()))) for entry in entries]
    # A summary per file (the project pass), clean files included; findings for the files the
    # screens let through (the 9 that mention torch: clean ones are screened out by ML001's screen).
    assert kinds.count("summary") == 12
    assert kinds.count("diagnostics") == 6
    second = invoke("check", "--output-format", "json", ".")
    assert second.output == first.output and second.exit_code == first.exit_code == 1
    # Parallel workers read and write the same entries.
    third = invoke("check", "--jobs", "2", "--output-format", "json", ".")
    assert third.output == first.output and _cache_entries(cache) == entries


def _plant(project: Path, filename: str, message: str) -> None:
    """Rewrite the file's cache entry so that a hit is visible in the output."""
    cache = project / ".memlint_cache"
    for entry in _cache_entries(cache):
        data = json.loads(entry.read_text())
        for item in data.get("diagnostics", ()):
            if item["filename"] == filename:
                item["message"] = message
                entry.write_text(json.dumps(data))
                return
    raise AssertionError(f"no cache entry with findings for {filename}")


def test_cache_hit_then_invalidation_by_content_config_and_version(project, monkeypatch):
    write(project / "train.py", _finding_snippet())
    invoke("check", "--output-format", "json", ".")
    _plant(project, "train.py", "served from the cache")
    assert "served from the cache" in invoke("check", "--output-format", "json", ".").output  # a hit

    # The file's bytes change (a trailing comment): recomputed.
    (project / "train.py").write_text(_finding_snippet() + "# edited\n")
    out = invoke("check", "--output-format", "json", ".").output
    assert "served from the cache" not in out and "ML001" in out

    # The effective configuration changes: recomputed.
    _plant(project, "train.py", "served from the cache")
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.memlint]\nmin-retained-chain = 4\n")
    out = invoke("check", "--output-format", "json", ".").output
    assert "served from the cache" not in out and "ML001" in out

    # memlint's version changes: recomputed.
    _plant(project, "train.py", "served from the cache")
    monkeypatch.setattr(memlint, "__version__", "999.0.0")
    out = invoke("check", "--output-format", "json", ".").output
    assert "served from the cache" not in out and "ML001" in out


def test_cache_stores_fixes_and_frames(project):
    write(project / "train.py", _finding_snippet())
    first = invoke("check", "--output-format", "json", ".").output
    second = invoke("check", "--output-format", "json", ".").output
    assert second == first
    full_first = invoke("check", "--no-cache", ".").output
    assert invoke("check", ".").output == full_first  # the code frame survives the cache too
    entries = [json.loads(path.read_text()) for path in _cache_entries(project / ".memlint_cache")]
    entry = next(entry for entry in entries if "diagnostics" in entry)
    assert entry["diagnostics"][0]["frame"]


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"diagnostics": [{"code": 1}]}', b'{"summary": {}, "screened": 1}', b"\x00\xff"])
@pytest.mark.parametrize("kind", ["diagnostics", "summary"])
def test_corrupt_or_partial_entry_is_a_miss(project, damage, kind):
    write(project / "train.py", _finding_snippet())
    expected = invoke("check", "--output-format", "json", ".").output
    entries = {next(iter(json.loads(e.read_text()))): e for e in _cache_entries(project / ".memlint_cache")}
    entry = entries[kind]
    entry.write_bytes(damage)
    if kind == "summary":
        entries["files"].unlink()  # else the project pass is answered whole and the summary is not read
    result = invoke("check", "--output-format", "json", ".")
    assert result.output == expected and result.exit_code == 1
    assert json.loads(entry.read_text())[kind]  # rewritten whole


def test_no_cache_and_fix_runs_write_nothing(project):
    write(project / "train.py", _finding_snippet())
    invoke("check", "--no-cache", ".")
    assert not (project / ".memlint_cache").exists()
    invoke("check", "--fix", "--unsafe-fixes", ".")
    assert not _cache_entries(project / ".memlint_cache")


def test_cache_dir_option_environment_and_clean(project, tmp_path_factory, monkeypatch):
    write(project / "train.py", _finding_snippet())
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "cache"
    invoke("check", "--cache-dir", str(elsewhere), ".")
    assert _cache_entries(elsewhere) and not (project / ".memlint_cache").exists()

    from_env = tmp_path_factory.mktemp("env") / "cache"
    monkeypatch.setenv("MEMLINT_CACHE_DIR", str(from_env))
    invoke("check", ".")
    assert _cache_entries(from_env)
    result = memlint_subprocess("clean", cwd=project)  # the environment variable is inherited
    assert result.returncode == 0 and not from_env.exists()
    monkeypatch.delenv("MEMLINT_CACHE_DIR")

    invoke("check", ".")
    assert (project / ".memlint_cache").is_dir()
    result = memlint_subprocess("clean", cwd=project)
    assert result.returncode == 0 and "Removed" in result.stderr
    assert not (project / ".memlint_cache").exists()
    again = memlint_subprocess("clean", cwd=project)
    assert again.returncode == 0 and "No cache" in again.stderr


def test_no_progress_bar_when_stderr_is_not_a_terminal(project):
    for index in range(progress.MIN_FILES + 5):
        write(project / f"m{index:03d}.py", f"import torch\nx{index} = torch.zeros(1)\n")
    result = memlint_subprocess("check", "--no-cache", ".", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Checking" not in result.stderr and result.stderr.strip() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_for_people_watching_long_runs():
    many = progress.MIN_FILES
    assert progress.wanted(many, "full", _Terminal())
    assert progress.wanted(many, "concise", _Terminal())
    assert not progress.wanted(many - 1, "full", _Terminal())  # short runs
    for machine_format in ("json", "json-lines", "sarif", "github", "gitlab", "rdjson", "junit"):
        assert not progress.wanted(many, machine_format, _Terminal())
    assert not progress.wanted(many, "full", io.StringIO())  # not a terminal


def test_clean_refuses_a_directory_memlint_did_not_create(project):
    keep = write(project / "src" / "model.py", "import torch\n")
    result = invoke("clean", "--cache-dir", str(project / "src"))
    assert result.exit_code == 2 and "CACHEDIR.TAG" in result.output
    assert keep.exists()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal(project):
    for index in range(progress.MIN_FILES + 5):
        write(project / f"m{index:03d}.py", f"import torch\nx{index} = torch.zeros(1)\n")
    controller, terminal = os.openpty()
    try:
        env = {**os.environ, "NO_COLOR": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "memlint", "check", "--no-cache", "--jobs", "1", "."],
            cwd=project, stdout=subprocess.PIPE, stderr=terminal, env=env, timeout=300,
        )  # fmt: skip
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal side is closed and drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert result.returncode == 0
    assert b"Checking" in shown and f"{progress.MIN_FILES + 5}/{progress.MIN_FILES + 5}".encode() in shown
    assert b"Checking" not in result.stdout
