"""Per-rule precision and recall of a memlint run on the real-code corpus, from the committed labels.

    python bench/realcode_score.py [--findings FILE] [--labels FILE] [--sample 25] [--markdown]
        [--show-missed]

Reads the findings JSON that `python bench/realcode.py lint` writes (default
bench/out/realcode-findings.json) and the verdicts in bench/labels/realcode.csv (`repo, commit, path,
line, rule, verdict, why`; `line` is `ROW`, or `CELL:ROW` in a notebook, as memlint reports them).

A label is a fact about a place in the code: `TP` and `FN` say the rule's pattern is really there (`FN`:
it was there and the rule missed it when it was labelled), `FP` says it is not.  So, per rule, for the
findings of this run:

- precision = found places labelled TP/FN / found places labelled at all;
- missed = places labelled TP/FN that this run does not report (earlier misses, or regressions);
- recall = estimated true findings / (estimated true findings + missed), where the estimate is
  precision x number of findings (exact when every finding is judged; when a rule has more findings
  than --sample, only a deterministic sample of them is judged);
- unjudged = findings in the rule's sample that have no label yet: what a rule change needs a verdict
  for.  The sample is the first --sample findings ordered by the SHA-1 of `CODE owner__name/path:line`.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_FINDINGS = HERE / "out" / "realcode-findings.json"
DEFAULT_LABELS = HERE / "labels" / "realcode.csv"
COLUMNS = ["repo", "commit", "path", "line", "rule", "verdict", "why"]
VERDICTS = ("TP", "FP", "FN")


def folder_name(repo: str) -> str:
    return repo.replace("/", "__")


def sample_order(code: str, repo: str, path: str, line: str) -> str:
    """The sort key that picks a rule's sample: a hash, so the sample does not follow file order."""
    return hashlib.sha1(f"{code} {folder_name(repo)}/{path}:{line}".encode()).hexdigest()


def read_labels(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path}: columns must be {','.join(COLUMNS)}, found {reader.fieldnames}")
        return list(reader)


def finding_place(finding: dict) -> tuple[str, str, str, str]:
    """(code, repo, path inside the repository, line) of one finding of `realcode.py lint`."""
    folder, _, path = finding["filename"].partition("/")
    repo = folder.replace("__", "/", 1)
    row = str(finding["location"]["row"])
    line = f"{finding['cell']}:{row}" if finding.get("cell") else row
    return finding["code"], repo, path, line


@dataclass
class RuleScore:
    findings: list[tuple[str, str, str, str]] = field(default_factory=list)
    tp: int = 0
    fp: int = 0
    missed: list[tuple[str, str, str, str]] = field(default_factory=list)
    unjudged: list[tuple[str, str, str, str]] = field(default_factory=list)
    not_sampled: int = 0

    @property
    def precision(self) -> float | None:
        judged = self.tp + self.fp
        return self.tp / judged if judged else None

    @property
    def recall(self) -> float | None:
        precision = self.precision
        estimated_true = precision * len(self.findings) if precision is not None else 0.0
        if estimated_true + len(self.missed) == 0:
            return None
        return estimated_true / (estimated_true + len(self.missed))


def catalogue_codes() -> list[str]:
    """Every built-in rule's code, so that rules without findings show in the table too."""
    try:
        from memlint.pipeline.registry import rule_entries
    except ImportError:  # run by an interpreter without memlint: only the codes seen are listed
        return []
    return [rule.code for rule in rule_entries()]


def score(findings: list[dict], labels: list[dict], sample: int) -> dict[str, RuleScore]:
    verdicts: dict[tuple[str, str, str, str], str] = {}
    for label in labels:
        verdicts[(label["rule"], label["repo"], label["path"], label["line"])] = label["verdict"]
    scores: dict[str, RuleScore] = defaultdict(RuleScore)
    for code in catalogue_codes():
        scores[code] = RuleScore()
    found = set()
    for finding in findings:
        place = finding_place(finding)
        if place in found:  # two findings of one rule on one line are one place
            continue
        found.add(place)
        scores[place[0]].findings.append(place)
    for code, rule in scores.items():
        rule.findings.sort(key=lambda place: sample_order(*place))
        for index, place in enumerate(rule.findings):
            verdict = verdicts.get(place)
            if verdict in ("TP", "FN"):
                rule.tp += 1
            elif verdict == "FP":
                rule.fp += 1
            elif index < sample:
                rule.unjudged.append(place)
            else:
                rule.not_sampled += 1
    for place, verdict in verdicts.items():
        if verdict in ("TP", "FN") and place not in found:
            scores[place[0]].missed.append(place)
    return dict(sorted(scores.items()))


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _place(place: tuple[str, str, str, str]) -> str:
    code, repo, path, line = place
    return f"{code} {repo} {path}:{line}"


def render(scores: dict[str, RuleScore], markdown: bool, show_missed: bool) -> str:
    header = ["rule", "findings", "judged", "TP", "FP", "precision", "missed (FN)", "recall", "unjudged"]
    rows = []
    for code, rule in scores.items():
        rows.append([
            code, len(rule.findings), rule.tp + rule.fp, rule.tp, rule.fp, _percent(rule.precision),
            len(rule.missed), _percent(rule.recall), len(rule.unjudged),
        ])  # fmt: skip
    lines = []
    if markdown:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    else:
        widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
        for row in [header, *rows]:
            lines.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    unjudged = [place for rule in scores.values() for place in rule.unjudged]
    if unjudged:
        lines += ["", f"unjudged ({len(unjudged)}: findings in a rule's sample without a label):"]
        lines += [f"  {_place(place)}" for place in unjudged]
    if show_missed:
        missed = [place for rule in scores.values() for place in rule.missed]
        lines += ["", f"missed ({len(missed)}: labelled TP/FN, not reported by this run):"]
        lines += [f"  {_place(place)}" for place in missed]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", default=str(DEFAULT_FINDINGS), help="JSON from `realcode.py lint`")
    parser.add_argument("--labels", default=str(DEFAULT_LABELS))
    parser.add_argument("--sample", type=int, default=25, help="findings judged per rule (default 25)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--show-missed", action="store_true", help="list the labelled places not reported")
    args = parser.parse_args(argv)
    try:
        findings = json.loads(Path(args.findings).read_text(encoding="utf-8"))
        labels = read_labels(Path(args.labels))
    except (OSError, ValueError) as error:
        print(f"realcode_score: {error}", file=sys.stderr)
        return 2
    print(render(score(findings, labels, args.sample), args.markdown, args.show_missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
