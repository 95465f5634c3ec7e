"""A wheel built from a clean checkout, installed into a fresh virtual environment, works."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
import zipfile

import pytest

from conftest import EVAL_LOOP, REPO, write


def _tracked_files() -> list[str]:
    """The files a clean clone would have: tracked ones plus new ones git does not ignore."""
    result = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, check=False
    )
    if result.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in result.stdout.decode().split("\0") if name]


def test_every_package_ships():
    """setup.py's package list holds every package of memlint/ and every rule folder of rules/."""
    spec = importlib.util.spec_from_file_location("memlint_setup", REPO / "setup.py")
    setup_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup_module)  # defines packages(); setup() runs only as __main__
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        listed = set(setup_module.packages())
    finally:
        os.chdir(cwd)
    present = {
        ".".join(path.parent.relative_to(REPO).parts)
        for path in (REPO / "memlint").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    present |= {"memlint.rules"} | {f"memlint.rules.{path.parent.name}" for path in (REPO / "rules").glob("*/__init__.py")}
    assert present == listed
    assert len([name for name in listed if name.startswith("memlint.rules.ml")]) >= 17


@pytest.mark.slow
def test_wheel_from_clean_checkout_installs_and_runs(tmp_path):
    checkout = tmp_path / "checkout"
    for name in _tracked_files():
        source = REPO / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(wheels), str(checkout)],
        check=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("torch_memlint-*.whl")  # the distribution is torch-memlint; the package memlint
    with zipfile.ZipFile(wheel) as archive:
        assert "memlint/py.typed" in archive.namelist()  # type checkers read memlint's annotations
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=600)

    project = tmp_path / "project"
    write(project / "train.py", EVAL_LOOP)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    check = subprocess.run(
        [str(environment / "bin" / "memlint"), "check", "--select", "ML001", "train.py"],
        cwd=project, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert check.returncode == 1, check.stderr
    assert "train.py:6:5: ML001" in check.stdout
    listing = subprocess.run(
        [str(python), "-m", "memlint", "rules"], cwd=project, capture_output=True, text=True, env=env, timeout=120
    )
    assert listing.returncode == 0, listing.stderr
    shipped = [line.split()[0] for line in listing.stdout.splitlines() if not line.endswith("(reserved: not a rule)")]
    assert [line.split()[0] for line in listing.stdout.splitlines()][len(shipped) :] == ["ML000", "ML900", "ML901"]
    expected = sorted(p.parent.name[:5].upper() for p in (REPO / "rules").glob("ml[0-9][0-9][0-9]_*/rule.py"))
    assert shipped == expected  # every rule folder of rules/ ships inside the wheel as memlint.rules
    imported = subprocess.run(
        [str(python), "-c", "import memlint.rules, memlint; print(memlint.rules.__file__)"],
        cwd=project, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert "site-packages" in imported.stdout
    shown = subprocess.run([str(python), "-m", "pip", "show", "torch-memlint"], capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0 and "Name: torch-memlint" in shown.stdout, shown.stderr
    page = subprocess.run([str(environment / "bin" / "memlint"), "rule", "ML001"], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert page.returncode == 0 and "## What it does" in page.stdout and "http" not in page.stdout.split("\n", 3)[2]


def _clean_checkout(destination) -> None:
    for name in _tracked_files():
        source = REPO / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def test_the_test_dependencies_are_a_group_not_a_public_extra():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "test" not in project["project"]["optional-dependencies"]
    assert any(requirement.startswith("pytest>=") for requirement in project["dependency-groups"]["test"])
    assert "--group test" in (REPO / "Makefile").read_text(encoding="utf-8")  # how `make test` installs it


@pytest.mark.slow
def test_the_sdist_builds_the_wheel_and_leaves_the_tests_out(tmp_path):
    """The sdist holds what builds the wheel; the tests need fixtures/, docs/, action.yml and git, so
    they run from the repository and stay out of it (MANIFEST.in)."""
    checkout = tmp_path / "checkout"
    _clean_checkout(checkout)
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(dist), str(checkout)],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    (sdist,) = dist.glob("torch_memlint-*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
        metadata = archive.extractfile(next(m for m in archive.getmembers() if m.name.endswith("/PKG-INFO") and m.name.count("/") == 1)).read().decode()
    assert not [name for name in names if name.startswith("tests")]
    assert {"pyproject.toml", "setup.py", "README.md", "LICENSE", "memlint/cli.py", "rules/__init__.py"} <= set(names)
    assert "Provides-Extra: test" not in metadata and "Provides-Extra: server" in metadata

    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(wheels), str(sdist)],
                   check=True, timeout=300)  # fmt: skip
    (wheel,) = wheels.glob("torch_memlint-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.namelist()
    rule_folders = {p.parent.name for p in (REPO / "rules").glob("ml[0-9][0-9][0-9]_*/rule.py")}
    assert {name.split("/")[2] for name in shipped if name.startswith("memlint/rules/ml") and name.endswith("/rule.py")} == rule_folders
    assert "memlint/py.typed" in shipped
