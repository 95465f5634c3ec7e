"""Precision review on real code: run memlint over the pinned corpora and write every finding of the
selected rules to a report, with a reproducible random sample to triage.

    python bench/precision.py --select ML002,ML003 [--corpus timm ...] [--sample 30]
        [--option gpu-memory=24GiB] [--triage bench/triage/ml002-ml006.csv] [--reuse]

Writes under bench/out/ (git-ignored), named after the selection:
- findings-<sel>.jsonl   every finding: corpus, path relative to the corpus, row, column, code, message
- summary-<sel>.md       counts per rule and corpus, and precision when a triage file is given
- sample-<sel>.md        up to --sample findings per rule (seeded), each with its source lines
                         and a key to copy into the triage file

A triage file is CSV `key,verdict,note` with verdict `TP` or `FP`; `key` is `CODE corpus/path:row`
as printed in the sample.  With --triage, the summary counts the verdicts per rule and lists sampled
findings that have none yet.  The corpora are run with an empty configuration (plus --option values)
so that this repository's own excludes do not apply to them.  --reuse recomputes the sample and
summary from the last findings file (after editing verdicts) without running memlint again.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402  (bench/corpora.py, next to this file)

OUT = HERE / "out"


def _toml_value(text: str) -> str:
    """`24GiB` -> `"24GiB"`, `0.3` -> `0.3`, `true` -> `true`: enough TOML for memlint's options."""
    if text in ("true", "false"):
        return text
    try:
        float(text)
        return text
    except ValueError:
        return json.dumps(text)


def write_config(options: list[str], path: Path) -> Path:
    lines = []
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise SystemExit(f"--option expects KEY=VALUE, got {option!r}")
        lines.append(f"{key.strip()} = {_toml_value(value.strip())}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_memlint(directory: Path, select: str, config: Path, jobs: int) -> list[dict]:
    command = [
        sys.executable, "-m", "memlint", "check", str(directory), "--select", select,
        "--output-format", "json", "--exit-zero", "--no-cache", "--config", str(config), "--jobs", str(jobs),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent)
    # exit 2 with a JSON report means internal errors (ML900) on some files: keep them in the report
    if done.returncode != 0 and not (done.returncode == 2 and done.stdout.lstrip().startswith("[")):
        raise SystemExit(f"memlint failed on {directory} (exit {done.returncode}):\n{done.stderr[-4000:]}")
    for line in done.stderr.splitlines():
        print(f"  {line}", file=sys.stderr)
    return json.loads(done.stdout or "[]")


def finding_key(finding: dict) -> str:
    return f"{finding['code']} {finding['corpus']}/{finding['path']}:{finding['row']}"


def source_lines(root: Path, finding: dict, before: int = 8, after: int = 6) -> str:
    try:
        lines = (root / finding["path"]).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(source unavailable)"
    row = finding["row"]
    first, last = max(1, row - before), min(len(lines), row + after)
    return "\n".join(f"{'>' if n == row else ' '}{n:5d}  {lines[n - 1]}" for n in range(first, last + 1))


def read_triage(path: Path) -> dict[str, tuple[str, str]]:
    verdicts: dict[str, tuple[str, str]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.reader(handle):
            if not row or row[0].startswith("#") or row[0] == "key":
                continue
            verdict = row[1].strip().upper() if len(row) > 1 else ""
            if verdict not in ("TP", "FP"):
                raise SystemExit(f"{path}: verdict for {row[0]!r} must be TP or FP, got {verdict!r}")
            verdicts[row[0].strip()] = (verdict, row[2].strip() if len(row) > 2 else "")
    return verdicts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--select", required=True, help="rule codes, comma-separated (as memlint --select)")
    parser.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA), help="default: all four")
    parser.add_argument("--sample", type=int, default=30, help="findings per rule in the triage sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--option", action="append", default=[], help="config KEY=VALUE, e.g. gpu-memory=24GiB")
    parser.add_argument("--triage", type=Path, help="CSV of verdicts (key,verdict,note) to compute precision")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--reuse", action="store_true", help="re-read the last findings file instead of running memlint")
    args = parser.parse_args(argv)

    codes = sorted({c.strip().upper() for c in args.select.split(",") if c.strip()})
    tag = "-".join(codes) if len(codes) <= 4 else f"{codes[0]}-{codes[-1]}"
    OUT.mkdir(parents=True, exist_ok=True)
    config = write_config(args.option, OUT / f"config-{tag}.toml")

    findings: list[dict] = []
    roots: dict[str, Path] = {}
    timings: dict[str, float] = {}
    findings_file = OUT / f"findings-{tag}.jsonl"
    if args.reuse and not findings_file.exists():
        raise SystemExit(f"--reuse: {findings_file} does not exist yet")
    for name in args.corpus or list(corpora.CORPORA):
        root = corpora.fetch(name)
        roots[name] = root
        if args.reuse:
            with findings_file.open(encoding="utf-8") as handle:
                findings += [f for f in map(json.loads, handle) if f["corpus"] == name]
            continue
        started = time.perf_counter()
        print(f"memlint over {name} ...", file=sys.stderr)
        for item in run_memlint(root, ",".join(codes), config, args.jobs):
            path = Path(item["filename"]).resolve().relative_to(root.resolve()).as_posix()
            findings.append(
                {
                    "corpus": name, "path": path, "row": item["location"]["row"],
                    "column": item["location"]["column"], "code": item["code"], "message": item["message"],
                    "fix": (item.get("fix") or {}).get("applicability"),
                }
            )  # fmt: skip
        timings[name] = time.perf_counter() - started

    if not args.reuse:
        with findings_file.open("w", encoding="utf-8") as handle:
            for finding in findings:
                handle.write(json.dumps({"key": finding_key(finding), **finding}) + "\n")
    for finding in findings:
        finding.pop("key", None)

    by_rule: dict[str, list[dict]] = defaultdict(list)
    for finding in findings:
        by_rule[finding["code"]].append(finding)
    rng = random.Random(args.seed)
    sample = {
        code: (items if len(items) <= args.sample else rng.sample(items, args.sample))
        for code, items in sorted(by_rule.items())
    }

    with (OUT / f"sample-{tag}.md").open("w", encoding="utf-8") as handle:
        for code, items in sample.items():
            handle.write(f"# {code}: {len(items)} of {len(by_rule[code])} findings\n\n")
            for finding in sorted(items, key=finding_key):
                handle.write(f"## {finding_key(finding)}\n\n{finding['message']}\n\n```\n")
                handle.write(source_lines(roots[finding["corpus"]], finding) + "\n```\n\n")

    verdicts = read_triage(args.triage) if args.triage else {}
    counts = Counter((f["code"], f["corpus"]) for f in findings)
    lines = [f"# Findings of {', '.join(codes)}", "", f"Command: `python bench/precision.py {' '.join(argv)}`", ""]
    lines += ["| rule | " + " | ".join(roots) + " | total | sampled | TP | FP | untriaged | precision |"]
    lines += ["|---" * (len(roots) + 7) + "|"]
    untriaged: list[str] = []
    for code in codes + sorted({f["code"] for f in findings} - set(codes)):  # ML000 / ML900 too
        per_corpus = [counts[(code, name)] for name in roots]
        items = sample.get(code, [])
        judged = [verdicts.get(finding_key(f), ("", ""))[0] for f in items]
        tp, fp = judged.count("TP"), judged.count("FP")
        untriaged += [finding_key(f) for f, v in zip(items, judged) if not v]
        precision = f"{tp / (tp + fp):.0%}" if tp + fp else "n/a"
        lines.append(
            f"| {code} | " + " | ".join(map(str, per_corpus))
            + f" | {sum(per_corpus)} | {len(items)} | {tp} | {fp} | {len(items) - tp - fp} | {precision} |"
        )  # fmt: skip
    if timings:
        lines += ["", "Seconds per corpus: " + ", ".join(f"{n} {t:.0f}" for n, t in timings.items())]
    if args.triage:
        lines += ["", f"Untriaged sampled findings: {len(untriaged)}"] + [f"- {key}" for key in untriaged]
    (OUT / f"summary-{tag}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"\nwrote {OUT}/findings-{tag}.jsonl, sample-{tag}.md, summary-{tag}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
