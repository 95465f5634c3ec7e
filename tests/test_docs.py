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


def _relative_links(page):
    """(target, anchor) of each markdown link of `page` that points inside the repository."""
    import re

    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # not links in code blocks
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or a place in the same page
        path, _, anchor = target.partition("#")
        yield path, anchor


def _anchors(page) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    import re

    headings = re.findall(r"^#+\s+(.*?)\s*$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_link_between_the_documents_resolves():
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        for path, anchor in _relative_links(page):
            target = (page.parent / path).resolve()
            if not target.exists():
                broken.append(f"{page.relative_to(REPO)}: {path}")
            elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
                broken.append(f"{page.relative_to(REPO)}: {path}#{anchor}")
    assert not broken
