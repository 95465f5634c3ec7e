"""Is the prescreen sound on real code, and how much does it save?

    python bench/prescreen_check.py [--corpus timm ...] [--dir DIR ...] [--jobs 2]

For every file of the pinned corpora that mentions torch, runs every rule (ML017 and ML006 with a
1 MiB budget included, so that each rule reports as often as it can) through the full analysis,
WITHOUT the prescreen, and asks each rule's screen (trigger words, screen.py) separately.  A finding
of rule X in a file where X's screen said "no" is a soundness failure: the script lists them and
exits 1.  It also prints, per corpus, how many files and bytes each screen lets through and how many the prescreen
as a whole sends to libcst with the default rules, and the CPU time of the prescreen against the
full analysis.  Both are given the project pass's facts about each file (memlint/pipeline/project.py, over
the whole corpus, as `memlint check` on the corpus gives them), so a screen that ignores a fact its
rule follows shows up here too.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import corpora  # noqa: E402  (bench/corpora.py)

from memlint.config import Selection, Settings, build_settings, discover  # noqa: E402
from memlint.pipeline.checker import check_text  # noqa: E402
from memlint.pipeline.files import discover_files  # noqa: E402
from memlint.pipeline.prepare import prepare_chunk, project_pass  # noqa: E402
from memlint.pipeline.registry import builtin_rules, rule_entries  # noqa: E402
from memlint.prescreen import Source, needs_analysis, screen_holds  # noqa: E402

CORPORA = ("timm", "transformers", "torchvision", "pytorch-lightning")
SCREENED = frozenset(builtin.meta.code for builtin in builtin_rules())  # the rules with a screen


def _settings(root: Path) -> Settings:
    every = [entry.code for entry in rule_entries()]
    settings = build_settings(discover(root), Selection(select=every))
    return replace(settings, options={**settings.options, "gpu-memory": 1 << 20})


def _screen_file(path: Path, settings: Settings, default_codes: frozenset[str], view=None) -> dict:
    text = path.read_text(encoding="utf-8", errors="replace")
    row = {"path": str(path), "bytes": len(text.encode("utf-8", "replace")), "torch": "torch" in text}
    if not row["torch"]:
        return row
    start = time.process_time()
    source = Source(text)
    source.project = view
    compiled = source.tree is not None
    row["compiled"] = compiled
    row["needed"] = (not compiled) or needs_analysis(source, default_codes, settings.options)
    row["screen_s"] = time.process_time() - start
    row["passes"] = sorted(code for code in SCREENED if not compiled or screen_holds(source, code, settings.options))
    start = time.process_time()
    row["found"] = sorted({d.code for d in check_text(text, str(path), settings, project=view)})
    row["full_s"] = time.process_time() - start
    return row


def _screen_chunk(paths: list[Path], settings: Settings, default_codes: frozenset[str], views: list) -> list[dict]:
    return [_screen_file(path, settings, default_codes, view) for path, view in zip(paths, views)]


def _views(files: list[Path], settings: Settings, pool: ProcessPoolExecutor) -> list:
    """The project pass's view of every file of the corpus."""
    names = [str(path) for path in files]
    chunks = [list(range(i, min(i + 8, len(files)))) for i in range(0, len(files), 8)]
    prepared = {}
    for chunk, results in zip(chunks, pool.map(prepare_chunk, [[files[i] for i in c] for c in chunks], [[names[i] for i in c] for c in chunks], [settings] * len(chunks), [None] * len(chunks))):
        prepared.update(zip(chunk, results))
    return [facts.view for facts in project_pass(files, names, settings, None, lambda todo: {i: prepared[i] for i in todo})]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", choices=CORPORA)
    parser.add_argument("--dir", action="append", type=Path, default=[], help="also (or only) check this directory")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    default_codes = frozenset(entry.code for entry in rule_entries() if entry.default_enabled)
    failures = 0
    roots = [(name, corpora.fetch(name)) for name in (args.corpus or ([] if args.dir else CORPORA))]
    for name, root in [*roots, *((str(d), d.resolve()) for d in args.dir)]:
        settings = _settings(root)
        files = discover_files([root], settings).files
        chunks = [files[i : i + 8] for i in range(0, len(files), 8)]
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            views = _views(files, settings, pool)
            view_chunks = [views[i : i + 8] for i in range(0, len(files), 8)]
            rows = [row for chunk in pool.map(_screen_chunk, chunks, [settings] * len(chunks), [default_codes] * len(chunks), view_chunks) for row in chunk]
        failures += _report(name, root, rows)
    print("soundness failures:", failures)
    return 1 if failures else 0


def _report(name: str, root: Path, rows: list[dict]) -> int:
    torch_rows = [r for r in rows if r["torch"]]
    total_bytes = sum(r["bytes"] for r in torch_rows)
    unsound = [(r["path"], code) for r in torch_rows for code in r["found"] if code in SCREENED and code not in r["passes"]]
    needed = [r for r in torch_rows if r["needed"]]
    found_files = [r for r in torch_rows if r["found"]]
    missed = [r["path"] for r in found_files if not r["needed"] and set(_default_found(r))]
    errors = Counter(code for r in torch_rows for code in r["found"] if code not in SCREENED)
    print(f"\n## {name} ({len(rows)} files, {len(torch_rows)} mention torch, {total_bytes / 1e6:.1f} MB)")
    print(f"libcst parses (default rules): {len(needed)} files, {sum(r['bytes'] for r in needed) / 1e6:.1f} MB "
          f"({100 * sum(r['bytes'] for r in needed) / max(total_bytes, 1):.0f}% of the bytes that mention torch)")
    screen = sum(r["screen_s"] for r in torch_rows)
    full = sum(r["full_s"] for r in torch_rows)
    print(f"CPU: prescreen {screen:.1f} s, full analysis of every torch file {full:.1f} s")
    passes = Counter(code for r in torch_rows for code in r["passes"])
    passed_bytes = Counter()
    for r in torch_rows:
        for code in r["passes"]:
            passed_bytes[code] += r["bytes"]
    reports = Counter(code for r in torch_rows for code in r["found"])
    print("| rule | files its screen lets through | their share of the bytes | files with a finding |")
    print("|---|---:|---:|---:|")
    for code in sorted(SCREENED):
        print(f"| {code} | {passes[code]} | {100 * passed_bytes[code] / max(total_bytes, 1):.0f}% | {reports[code]} |")
    if errors:
        print(f"not rule findings (ML000 syntax errors, ML900 internal errors): {dict(errors)}")
    for path, code in unsound:
        print(f"UNSOUND: {code} reports in {Path(path).relative_to(root)} but its screen said no")
    for path in missed:
        print(f"UNSOUND: {Path(path).relative_to(root)} has findings but was screened out")
    return len(unsound) + len(missed)


def _default_found(row: dict) -> list[str]:
    """The row's findings of rules that are on by default (what `needed` was decided for)."""
    return [code for code in row["found"] if code in SCREENED and code != "ML017"]


if __name__ == "__main__":
    raise SystemExit(main())
