"""`--fix --unsafe-fixes` twice over copies of real corpora: every fixed file must still compile and
the second run must change nothing.

    python bench/fix_corpora.py [NAME ...] [--jobs N]      (default: timm transformers)

Each corpus (see bench/corpora.py) is copied to a temporary directory, so the originals are never
touched.  Every rule is enabled, including the ones that are off by default.  Prints one JSON object
per corpus and a Markdown table row for docs/reliability.md.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpora  # noqa: E402  (bench/corpora.py)

from memlint.config import ConfigFile, Selection, build_settings  # noqa: E402
from memlint.pipeline.files import discover_files  # noqa: E402
from memlint.pipeline.registry import all_rules  # noqa: E402
from memlint.pipeline.runner import Mode, run  # noqa: E402


def digests(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*.py"))
        if path.is_file()
    }


def compiles(path: Path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(path.read_bytes(), str(path), "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_run(root: Path, settings, jobs: int) -> tuple[Counter, int, float]:
    """(fixes applied per code, ML900 findings, seconds) of one `--fix` run (`settings` say unsafe-fixes)."""
    files = discover_files([root], settings).files
    started = time.perf_counter()
    results = run(files, settings, Mode(fix=True, write=True), jobs=jobs)
    seconds = time.perf_counter() - started
    fixed: Counter = Counter()
    for result in results:
        fixed.update(result.fixed)
        if result.error:
            print(f"  {result.error}", file=sys.stderr)
    crashes = [d for r in results for d in r.diagnostics if d.code == "ML900"]
    for crash in crashes:
        print(f"  {crash.filename}:{crash.location.row}: {crash.message}", file=sys.stderr)
    return fixed, len(crashes), seconds


def check_corpus(name: str, jobs: int) -> dict:
    source = corpora.fetch(name)
    every_rule = [rule.code for rule in all_rules()]  # "ALL" leaves out the off-by-default rules
    with tempfile.TemporaryDirectory(prefix=f"memlint-fix-{name}-") as temporary:
        root = Path(temporary) / source.name
        shutil.copytree(source, root, symlinks=True)
        settings = build_settings(ConfigFile(None, {}), Selection(select=every_rule), unsafe_fixes=True)
        before = digests(root)
        compiled_before = {rel for rel in before if compiles(root / rel)}
        fixed, crashes, seconds = fix_run(root, settings, jobs)
        after = digests(root)
        changed = sorted(rel for rel in after if after[rel] != before.get(rel))
        broken = sorted(rel for rel in changed if rel in compiled_before and not compiles(root / rel))
        again, crashes_again, seconds_again = fix_run(root, settings, jobs)
        changed_again = sorted(rel for rel, digest in digests(root).items() if digest != after.get(rel))
        return {
            "corpus": source.name,
            "python_files": len(before),
            "rules": len(every_rule),
            "fixes_applied": sum(fixed.values()),
            "fixes_by_code": dict(sorted(fixed.items())),
            "files_changed": len(changed),
            "compile_failures": broken,
            "ml900_findings": crashes,
            "second_run_fixes": sum(again.values()),
            "second_run_changed_files": changed_again,
            "seconds": [round(seconds, 1), round(seconds_again, 1)],
        }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=["timm", "transformers"], choices=sorted(corpora.CORPORA))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    failed = False
    rows = []
    for name in args.names:
        outcome = check_corpus(name, args.jobs)
        print(json.dumps(outcome, indent=2), flush=True)
        failed |= bool(outcome["compile_failures"] or outcome["second_run_changed_files"])
        rows.append(
            f"| {outcome['corpus']} | {outcome['python_files']} | {outcome['fixes_applied']} | "
            f"{outcome['files_changed']} | {len(outcome['compile_failures'])} | "
            f"{len(outcome['second_run_changed_files'])} | {outcome['ml900_findings']} |"
        )
    print("| corpus | .py files | fixes applied | files changed | compile failures | second-run changes | ML900 |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
