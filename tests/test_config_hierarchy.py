"""Which configuration applies to which file (issue 18.2), through the command line as a user runs it:
the closest configuration file governs each file (a subproject's pyproject.toml is not ignored when
memlint runs from the repository root, as pre-commit runs it), `extend` starts from a shared file,
and `fixable` / `unfixable` decide which fixes are applied and shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import memlint_subprocess, write

# ML003 (nn.ReLU after BatchNorm, safe fix) on line 4, ML001 (graph-retaining sum, safe fix) on line 11.
TRAIN = """
import torch
from torch import nn

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
running_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss
print(running_loss)
"""


def findings(cwd: Path, *args: str) -> dict[str, list[str]]:
    """file -> sorted codes found, from `memlint check --output-format json`."""
    result = memlint_subprocess("check", "--no-cache", "--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    found: dict[str, list[str]] = {}
    for d in json.loads(result.stdout):
        found.setdefault(d["filename"], []).append(d["code"])
    return {name: sorted(codes) for name, codes in found.items()}


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    """A root project and a subproject with a configuration of its own."""
    write(tmp_path / "pyproject.toml", "[tool.memlint]\nextend-exclude = ['generated']\n")
    write(tmp_path / "train.py", TRAIN)
    write(tmp_path / "generated" / "train.py", TRAIN)
    write(tmp_path / "lib" / "pyproject.toml", "[project]\nname = 'lib'\n")  # not a memlint configuration
    write(tmp_path / "lib" / "train.py", TRAIN)
    sub = tmp_path / "services" / "trainer"
    write(sub / "pyproject.toml", """
        [tool.memlint]
        ignore = ["ML003"]
        extend-exclude = ["scratch"]
        per-file-ignores = { "nested/*.py" = ["ML001"] }
    """)
    write(sub / "train.py", TRAIN)
    write(sub / "nested" / "train.py", TRAIN)
    write(sub / "scratch" / "train.py", TRAIN)
    write(sub / "generated" / "train.py", TRAIN)  # the root's exclude does not reach into the subproject
    return tmp_path


def test_each_file_follows_its_closest_configuration(monorepo):
    assert findings(monorepo, ".") == {
        "train.py": ["ML001", "ML003"],
        "lib/train.py": ["ML001", "ML003"],  # lib's pyproject has no [tool.memlint]: the root's applies
        "services/trainer/train.py": ["ML001"],
        "services/trainer/generated/train.py": ["ML001"],
    }


def test_the_same_findings_from_inside_the_subproject(monorepo):
    sub = monorepo / "services" / "trainer"
    assert findings(sub, ".") == {"train.py": ["ML001"], "generated/train.py": ["ML001"]}
    # Named from the root, a subproject's file still follows the subproject's configuration.
    assert findings(monorepo, "train.py", "services/trainer/nested/train.py") == {"train.py": ["ML001", "ML003"]}


def test_the_command_line_applies_over_every_configuration(monorepo):
    assert findings(monorepo, ".", "--ignore", "ML001") == {"train.py": ["ML003"], "lib/train.py": ["ML003"]}
    selected = findings(monorepo, ".", "--select", "ML003")
    assert selected["services/trainer/train.py"] == ["ML003"]  # --select replaces the file's selection


def test_config_names_one_file_for_every_file(monorepo):
    shared = write(monorepo / "ci.toml", "select = ['ML001']\n")
    assert findings(monorepo, ".", "--config", str(shared)) == {
        name: ["ML001"]
        for name in ("train.py", "lib/train.py", "generated/train.py", "services/trainer/train.py",
                     "services/trainer/nested/train.py", "services/trainer/scratch/train.py",
                     "services/trainer/generated/train.py")
    }  # fmt: skip


def test_show_settings_names_the_configuration_of_the_file(monorepo):
    result = memlint_subprocess("check", "--show-settings", "services/trainer/train.py", cwd=monorepo)
    shown = json.loads(result.stdout)
    assert Path(shown["configuration"]) == (monorepo / "services" / "trainer" / "pyproject.toml").resolve()
    assert "ML003" not in shown["rules for the file"] and "ML001" in shown["rules for the file"]


def test_show_files_honours_the_subprojects_excludes(monorepo):
    result = memlint_subprocess("check", "--show-files", ".", cwd=monorepo)
    assert sorted(result.stdout.split()) == [
        "lib/train.py", "services/trainer/generated/train.py", "services/trainer/nested/train.py",
        "services/trainer/train.py", "train.py",
    ]  # fmt: skip


def test_a_broken_subproject_configuration_is_an_error_naming_it(monorepo):
    write(monorepo / "services" / "trainer" / "pyproject.toml", "[tool.memlint]\nignor = ['ML003']\n")
    result = memlint_subprocess("check", "--no-cache", ".", cwd=monorepo)
    assert result.returncode == 2
    assert "services/trainer/pyproject.toml" in result.stderr and "did you mean 'ignore'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_cache_follows_a_subproject_configuration(monorepo):
    sub = monorepo / "services" / "trainer"
    args = ("check", "--output-format", "json", "services/trainer/train.py", "train.py")
    first = memlint_subprocess(*args, cwd=monorepo)
    assert {d["code"] for d in json.loads(first.stdout) if d["filename"].startswith("services")} == {"ML001"}
    write(sub / "pyproject.toml", "[tool.memlint]\nignore = ['ML001']\n")
    second = memlint_subprocess(*args, cwd=monorepo)
    assert {d["code"] for d in json.loads(second.stdout) if d["filename"].startswith("services")} == {"ML003"}


# ---------------------------------------------------------------------------- extend


def test_extend_starts_from_a_shared_file(tmp_path):
    write(tmp_path / "shared" / "memlint.toml", """
        select = ["ML001", "ML003"]
        extend-exclude = ["legacy/old.py"]
        per-file-ignores = { "test_*.py" = ["ML003"] }  # no "/": a file name anywhere
    """)
    project = tmp_path / "project"
    write(project / "pyproject.toml", "[tool.memlint]\nextend = '../shared/memlint.toml'\nignore = ['ML001']\n")
    write(project / "train.py", TRAIN)
    write(project / "tools" / "test_train.py", TRAIN)
    write(project / "legacy" / "old.py", TRAIN)  # the shared file's pattern is relative to shared/, not here
    assert findings(project, ".") == {
        "train.py": ["ML003"],  # the base's select, then this file's ignore
        "legacy/old.py": ["ML003"],
    }


def test_an_extended_files_path_pattern_is_relative_to_that_file(tmp_path):
    write(tmp_path / "memlint.toml", "select = ['ML001']\nextend-exclude = ['project/legacy/*']\n")
    project = tmp_path / "project"
    write(project / "memlint.toml", "extend = '../memlint.toml'\nextend-exclude = ['scratch.py']\n")
    write(project / "train.py", TRAIN)
    write(project / "scratch.py", TRAIN)
    write(project / "legacy" / "old.py", TRAIN)
    assert findings(project, ".") == {"train.py": ["ML001"]}


@pytest.mark.parametrize(
    "files, message",
    [
        ({"a.toml": "extend = 'b.toml'\n", "b.toml": "extend = 'a.toml'\n"}, "'extend' makes a cycle"),
        ({"a.toml": "extend = 'missing.toml'\n"}, "is not a file"),
        ({"a.toml": "extend = 'b.toml'\n", "b.toml": "selec = ['ML001']\n"}, "unknown key 'selec'"),
        ({"a.toml": "extend = 3\n"}, "invalid value for 'extend'"),
    ],
)
def test_a_bad_extend_is_an_error(tmp_path, files, message):
    for name, text in files.items():
        write(tmp_path / name, text)
    write(tmp_path / "train.py", TRAIN)
    result = memlint_subprocess("check", "--no-cache", "--config", "a.toml", "train.py", cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------- fixable / unfixable


def fixed_text(tmp_path: Path, config: str, *args: str) -> str:
    write(tmp_path / "memlint.toml", config)
    train = write(tmp_path / "train.py", TRAIN)
    result = memlint_subprocess("check", "--no-cache", "--fix", "train.py", *args, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return train.read_text()


def test_unfixable_keeps_a_rules_fix_out_of_fix(tmp_path):
    text = fixed_text(tmp_path, "unfixable = ['ML001']\n")
    assert "running_loss += loss\n" in text and "nn.ReLU(inplace=True)" in text


def test_fixable_names_the_only_fixes_applied(tmp_path):
    text = fixed_text(tmp_path, "fixable = ['ML001']\n")
    assert "running_loss += loss.detach()" in text and "nn.ReLU()" in text


def test_the_command_line_overrides_fixable(tmp_path):
    text = fixed_text(tmp_path, "fixable = ['ML001']\n", "--extend-fixable", "ML003", "--unfixable", "ML001")
    assert "running_loss += loss\n" in text and "nn.ReLU(inplace=True)" in text


def test_an_unfixable_finding_is_reported_without_a_fix(tmp_path):
    write(tmp_path / "train.py", TRAIN)
    concise = memlint_subprocess("check", "--no-cache", "--output-format", "concise", "--unfixable", "ML0", "train.py", cwd=tmp_path)
    assert concise.returncode == 1
    assert "[*]" not in concise.stdout and "fixable" not in concise.stdout
    as_json = memlint_subprocess("check", "--no-cache", "--output-format", "json", "--unfixable", "ML001", "train.py", cwd=tmp_path)
    fixes = {d["code"]: d["fix"] for d in json.loads(as_json.stdout)}
    assert fixes["ML001"] is None and fixes["ML003"] is not None


def test_an_unknown_fixable_selector_is_an_error(tmp_path):
    write(tmp_path / "memlint.toml", "unfixable = ['XY1']\n")
    write(tmp_path / "train.py", TRAIN)
    result = memlint_subprocess("check", "--no-cache", "train.py", cwd=tmp_path)
    assert result.returncode == 2 and "unknown rule selector 'XY1'" in result.stderr


def test_the_runs_own_configuration_reached_through_a_symlink_is_not_a_subproject(monorepo, tmp_path_factory):
    link = tmp_path_factory.mktemp("links") / "repo"
    link.symlink_to(monorepo, target_is_directory=True)
    result = memlint_subprocess("check", "--show-settings", "train.py", cwd=link)
    shown = json.loads(result.stdout)
    assert Path(shown["configuration"]).resolve() == (monorepo / "pyproject.toml").resolve()
    assert findings(link, ".") == findings(monorepo, ".")
    from memlint.config import ConfigTree, Selection, build_settings, discover

    tree = ConfigTree(build_settings(discover(link), Selection()))
    assert tree.settings_for_files([link / "train.py", link / "lib" / "train.py"]).subprojects == ()


def test_a_subprojects_unsafe_fixes_applies_to_its_files(tmp_path):
    zero_grad = "import torch\nfor x, y in loader:\n    optimizer.zero_grad(set_to_none=False)\n"  # ML012: unsafe fix only
    root_file = write(tmp_path / "train.py", zero_grad)
    write(tmp_path / "pyproject.toml", "[tool.memlint]\n")
    sub_file = write(tmp_path / "sub" / "train.py", zero_grad)
    write(tmp_path / "sub" / "pyproject.toml", "[tool.memlint]\nunsafe-fixes = true\n")
    result = memlint_subprocess("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "zero_grad()" in sub_file.read_text() and "set_to_none=False" in root_file.read_text()
    write(sub_file, zero_grad)
    memlint_subprocess("check", "--no-cache", "--fix", "--no-unsafe-fixes", ".", cwd=tmp_path)
    assert "set_to_none=False" in sub_file.read_text()  # the command line's flag wins
