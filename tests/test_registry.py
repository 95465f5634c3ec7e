"""The rule catalogue and third-party rules registered as entry points."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from memlint.registry import all_rules, rule_entries
from memlint.rules import CATALOGUE

REPO = Path(__file__).resolve().parent.parent


def test_the_catalogue_matches_the_rule_classes():
    assert [(code, name, enabled) for code, name, enabled, _ in CATALOGUE] == [
        (rule.code, rule.name, rule.default_enabled) for rule in all_rules()
    ]
    assert [module for *_, module in CATALOGUE] == [rule.__module__.split(".")[2] for rule in all_rules()]
    assert [(e.code, e.name, e.default_enabled) for e in rule_entries()] == [(r.code, r.name, r.default_enabled) for r in all_rules()]


PLUGIN = '''
import libcst as cst
from memlint.rule import Rule

class NoPrint(Rule):
    """
    ## What it does
    Reports `print(...)`.
    """
    code = "XP001"
    name = "no-print"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            self.report(node, "no print here")
'''


def test_a_rule_installed_as_an_entry_point_runs_and_is_never_screened_out(tmp_path):
    site = tmp_path / "site"
    (site / "xp_rules-1.0.dist-info").mkdir(parents=True)
    (site / "xp_rules-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: xp-rules\nVersion: 1.0\n")
    (site / "xp_rules-1.0.dist-info" / "entry_points.txt").write_text("[memlint.rules]\nxp = xp_rules\n")
    (site / "xp_rules.py").write_text(textwrap.dedent(PLUGIN))
    target = tmp_path / "train.py"
    target.write_text("import torch\nprint(torch.__name__)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    run = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--extend-select", "XP001", "--output-format", "concise", str(target)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert "XP001 no print here" in run.stdout
    listing = subprocess.run([sys.executable, "-m", "memlint", "rules"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "XP001" in listing.stdout
