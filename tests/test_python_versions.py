"""The check path (no torch) on the oldest and the newest Python that `requires-python` admits and
this machine has (issue 18.6): a wheel built from the checkout is installed into a fresh virtual
environment of each, and `memlint check` and `--diff` must give what the main interpreter gives.

The interpreters are looked up under the pyenv root ($PYENV_ROOT, or ~/.pyenv); where one is
missing the test says so and is skipped."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from test_packaging import _tracked_files

REPO = Path(__file__).resolve().parent.parent


def _requires_python_floor() -> tuple[int, int]:
    with open(REPO / "pyproject.toml", "rb") as handle:
        spec = tomllib.load(handle)["project"]["requires-python"]
    match = re.fullmatch(r">=\s*3\.(\d+)", spec.strip())
    assert match, f"requires-python {spec!r}: this test expects a plain lower bound"
    return 3, int(match.group(1))


def _interpreters() -> dict[tuple[int, int], Path]:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found: dict[tuple[int, int], Path] = {}
    for entry in sorted(root.glob("3.*")) if root.is_dir() else ():
        match = re.fullmatch(r"3\.(\d+)\.\d+", entry.name)
        python = entry / "bin" / "python"
        if match and python.is_file():
            found[(3, int(match.group(1)))] = python
    return found


FLOOR = _requires_python_floor()
AVAILABLE = {version: path for version, path in _interpreters().items() if version >= FLOOR}
WANTED = {"oldest": FLOOR, "newest": max(AVAILABLE) if AVAILABLE else None}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    checkout = tmp_path_factory.mktemp("checkout")
    for name in _tracked_files():
        source = REPO / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(wheels), str(checkout)],
        check=True, timeout=300,
    )  # fmt: skip
    (built,) = wheels.glob("torch_memlint-*.whl")
    return built


def _outputs(command: list[str]) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = lambda *extra: subprocess.run(  # noqa: E731
        [*command, "check", "--no-cache", "--select", "ML", "--extend-select", "ML017", *extra, "fixtures"],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    findings, diff = run("--output-format", "json"), run("--diff", "--unsafe-fixes")
    assert findings.returncode == 1 and "Traceback" not in findings.stderr, findings.stderr
    assert diff.returncode == 1 and "Traceback" not in diff.stderr, diff.stderr
    return findings.stdout, diff.stdout


@pytest.mark.slow
@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_the_check_path_runs_alike_on_the_oldest_and_newest_python(which, wheel, tmp_path):
    version = WANTED[which]
    if version is None or version not in AVAILABLE:
        pytest.skip(f"no Python {version} under the pyenv root on this machine (requires-python >= 3.{FLOOR[1]})")
    environment = tmp_path / "venv"
    subprocess.run([str(AVAILABLE[version]), "-m", "venv", str(environment)], check=True, timeout=120)
    python = environment / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=600)
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True, check=True)
    assert "torch==" not in listed.stdout  # the check path needs no torch
    expected = _outputs([sys.executable, "-m", "memlint"])
    assert _outputs([str(environment / "bin" / "memlint")]) == expected
