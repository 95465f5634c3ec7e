"""Rule discovery: the built-in rule folders (meta.py, screen.py, rule.py) and third-party rules
registered as entry points."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from memlint.config import RULE_OPTIONS, SCHEMA
from memlint.pipeline.registry import all_rules, builtin_rules, rule_entries, rule_options

REPO = Path(__file__).resolve().parent.parent


def test_every_rule_folder_has_a_meta_and_a_rule_class_that_names_it():
    folders = sorted(path.parent.name for path in (REPO / "rules").glob("*/__init__.py"))
    assert sorted(b.folder for b in builtin_rules()) == folders and len(folders) >= 17
    rules = {rule.code: rule for rule in all_rules()}
    for builtin in builtin_rules():
        meta = builtin.meta
        assert builtin.folder == f"{meta.code.lower()}_{meta.name.replace('-', '_')}"
        rule = rules[meta.code]
        assert rule.meta is meta and rule.__module__ == f"memlint.rules.{builtin.folder}.rule"
        assert (rule.code, rule.name, rule.default_enabled) == (meta.code, meta.name, meta.default_enabled)
    entries = [(e.code, e.name, e.default_enabled) for e in rule_entries()]
    assert entries == [(r.code, r.name, r.default_enabled) for r in all_rules()]


def test_rule_options_come_from_the_metas_into_the_configuration_schema():
    assert RULE_OPTIONS == tuple(option.key for option in rule_options())
    for option in rule_options():
        assert SCHEMA[option.key] == (option.check, option.default)
    owners = {option.key: b.meta.code for b in builtin_rules() for option in b.meta.options}
    assert owners == {
        "prefer-inference-mode": "ML002", "min-retained-chain": "ML004", "max-linear-params": "ML005",
        "gpu-memory": "ML006", "memory-headroom": "ML006",
    }  # fmt: skip


def test_metas_and_screens_import_no_libcst():
    probe = (
        "import sys, memlint.pipeline.registry as r, memlint.prescreen as p\n"
        "for b in r.builtin_rules(): p._screen(b.meta.code)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst' or m.startswith('memlint.rules') and m.endswith('.rule')))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


# A new rule, XP901: the files of its folder.
NEW_RULE = {
    "__init__.py": '"""XP901 no-exit."""\n',
    "meta.py": """
        from memlint.rule import Meta, Option, positive_int

        META = Meta(code="XP901", name="no-exit", options=(Option("max-exits", 1, positive_int),), words=(("exit",),))
    """,
    "screen.py": """
        import ast

        def screen(source, options):
            calls = [n for n in source.nodes(ast.Call) if isinstance(n.func, ast.Name) and n.func.id == "exit"]
            return len(calls) > options["max-exits"]
    """,
    "rule.py": '''
        import libcst as cst
        from memlint.rule import Rule
        from memlint.rules.xp901_no_exit.meta import META

        class NoExit(Rule):
            """
            ## What it does
            Reports the calls of `exit(...)` after the first `max-exits`.
            """
            meta = META

            def __init__(self, *args):
                super().__init__(*args)
                self.seen = 0

            def visit_Call(self, node):
                if isinstance(node.func, cst.Name) and node.func.value == "exit":
                    self.seen += 1
                    if self.seen > self.option("max-exits"):
                        self.report(node, "one exit is enough")
    ''',
}
# memlint's command line with one more directory in memlint.rules' path: where the new folder lies.
WITH_FOLDER = (
    "import sys, memlint.rules\n"
    "memlint.rules.__path__.append(sys.argv.pop(1))\n"
    "from memlint.cli import main\n"
    "main(sys.argv[1:], prog_name='memlint')\n"
)


def test_a_new_rule_is_one_folder(tmp_path):
    folder = tmp_path / "extra" / "xp901_no_exit"
    folder.mkdir(parents=True)
    for name, text in NEW_RULE.items():
        (folder / name).write_text(textwrap.dedent(text))
    (tmp_path / "two.py").write_text("import torch\nexit(1)\nexit(2)\n")
    (tmp_path / "one.py").write_text("import torch\nexit(1)\n")

    def memlint(*args):
        command = [sys.executable, "-c", WITH_FOLDER, str(tmp_path / "extra"), *args]
        return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)

    listing = memlint("rules")
    assert listing.returncode == 0 and "XP901  no-exit" in listing.stdout, listing.stdout + listing.stderr
    run = memlint("check", "--no-cache", "--select", "XP", "--output-format", "concise", "one.py", "two.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "two.py:3:1: XP901 one exit is enough" in run.stdout and "one.py" not in run.stdout
    (tmp_path / "memlint.toml").write_text("max-exits = 2\n")  # its option is a configuration key
    assert memlint("check", "--no-cache", "--select", "XP", "two.py").returncode == 0
    (tmp_path / "memlint.toml").write_text("max-exit = 2\n")
    typo = memlint("check", "--no-cache", "two.py")
    assert typo.returncode == 2 and "unknown key 'max-exit' (did you mean 'max-exits'?)" in typo.stderr


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
