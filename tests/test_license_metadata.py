"""The license is declared the PEP 639 way (an SPDX expression and a license file), so building or
installing prints no setuptools deprecation warning about it, and the file ships with the metadata."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import REPO


def test_pyproject_declares_an_spdx_license_and_ships_the_file():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    assert project["project"]["license-files"] == ["LICENSE"]
    # PEP 639 support arrived in setuptools 77; older ones reject the string form.
    assert "setuptools>=77" in project["build-system"]["requires"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Copyright (c) the memlint authors" in text


def test_metadata_build_has_license_expression_and_no_deprecation_warning(tmp_path: Path):
    # The files the metadata step reads, copied so that the build writes nothing into the checkout.
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "memlint/__init__.py", "rules/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    out = tmp_path / "out"
    out.mkdir()
    script = (
        "import sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "from setuptools import build_meta\n"
        "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Deprecat" not in result.stderr + result.stdout
    dist_info = out / result.stdout.strip().splitlines()[-1]
    metadata = (dist_info / "METADATA").read_text(encoding="utf-8")
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert (dist_info / "licenses" / "LICENSE").read_text(encoding="utf-8") == (REPO / "LICENSE").read_text(encoding="utf-8")
