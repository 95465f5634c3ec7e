"""The generated rule pages and the README's table of rules match the rule classes."""

from __future__ import annotations

from conftest import REPO

from memlint.commands.ruledocs import pages, with_readme_table
from memlint.pipeline.registry import all_rules


def test_rule_pages_are_current():
    stale = [
        name for name, text in pages().items()
        if not (REPO / "docs" / "rules" / name).is_file()
        or (REPO / "docs" / "rules" / name).read_text(encoding="utf-8") != text
    ]  # fmt: skip
    assert not stale, f"regenerate with `python -m memlint.commands.ruledocs docs/rules` (make docs): {stale}"


def test_readme_lists_every_rule():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [r.code for r in all_rules() if f"| {r.code} | {r.name} |" not in readme]
    assert not missing
    assert with_readme_table(readme) == readme, "regenerate the README's table of rules with `make docs`"
