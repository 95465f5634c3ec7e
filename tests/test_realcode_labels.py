"""The real-code corpus list and its labels are well formed (no corpus download needed), and the scoring
script computes precision and recall from them as documented."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import tomllib

from memlint.pipeline.registry import RESERVED_CODES, rule_entries

REPO = Path(__file__).resolve().parent.parent
REPOS_FILE = REPO / "bench" / "realcode_repos.toml"
LABELS_FILE = REPO / "bench" / "labels" / "realcode.csv"
# The second part, judged after the fixes (bench/realcode_heldout.toml's header says what that means).
HELDOUT_REPOS_FILE = REPO / "bench" / "realcode_heldout.toml"
HELDOUT_LABELS_FILE = REPO / "bench" / "labels" / "realcode_heldout.csv"
# The third part (issue 27): code outside the first two, read by two helpers (bench/realcode_third.toml's header).
THIRD_REPOS_FILE = REPO / "bench" / "realcode_third.toml"
THIRD_LABELS_FILE = REPO / "bench" / "labels" / "realcode_third.csv"
# The fourth part: issue 27's first sealed set, judged at d3c13d4 and then joined to the corpus.
FOURTH_REPOS_FILE = REPO / "bench" / "realcode_fourth.toml"
FOURTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_fourth.csv"
# The fifth part: ten repositories chosen and judged by the scout before the session's final rules.
FIFTH_REPOS_FILE = REPO / "bench" / "realcode_fifth.toml"
FIFTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_fifth.csv"
# The sixth part: eight more repositories chosen and judged by a second scout (2026-11-26, third session).
SIXTH_REPOS_FILE = REPO / "bench" / "realcode_sixth.toml"
SIXTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_sixth.csv"
# The seventh part: issue 27's second sealed set, judged at 4390475 and then joined to the corpus.
SEVENTH_REPOS_FILE = REPO / "bench" / "realcode_seventh.toml"
SEVENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_seventh.csv"
# The eighth part: issue 27's third sealed set, judged at b307722 and then joined to the corpus.
EIGHTH_REPOS_FILE = REPO / "bench" / "realcode_eighth.toml"
EIGHTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_eighth.csv"
# The ninth part: issue 27's fourth sealed set, judged at cb766cb and then joined to the corpus.
NINTH_REPOS_FILE = REPO / "bench" / "realcode_ninth.toml"
NINTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_ninth.csv"
# The tenth part: issue 27's fifth sealed set, judged at 6856a98 and then joined to the corpus.
TENTH_REPOS_FILE = REPO / "bench" / "realcode_tenth.toml"
TENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_tenth.csv"
# The eleventh part: issue 27's sixth sealed set, judged at bade002 and then joined to the corpus.
ELEVENTH_REPOS_FILE = REPO / "bench" / "realcode_eleventh.toml"
ELEVENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_eleventh.csv"
# The twelfth part: repositories scouted by the recall helpers of issue 27's seventh session, labelled
# for their rules only (bench/realcode_twelfth.toml's header).
TWELFTH_REPOS_FILE = REPO / "bench" / "realcode_twelfth.toml"
TWELFTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_twelfth.csv"
# The thirteenth part: issue 27's seventh sealed set, judged at d397d45 and then joined to the corpus.
THIRTEENTH_REPOS_FILE = REPO / "bench" / "realcode_thirteenth.toml"
THIRTEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_thirteenth.csv"
# The fourteenth part: issue 27's eighth sealed set, judged at d122e58 and then joined to the corpus.
FOURTEENTH_REPOS_FILE = REPO / "bench" / "realcode_fourteenth.toml"
FOURTEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_fourteenth.csv"
# The fifteenth part: issue 27's ninth sealed set, judged at 9215b3e and then joined to the corpus.
FIFTEENTH_REPOS_FILE = REPO / "bench" / "realcode_fifteenth.toml"
FIFTEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_fifteenth.csv"
# The sixteenth part: issue 27's tenth sealed set, judged at 8d7d689 and then joined to the corpus.
SIXTEENTH_REPOS_FILE = REPO / "bench" / "realcode_sixteenth.toml"
SIXTEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_sixteenth.csv"
# The seventeenth part: issue 27's eleventh sealed set, judged at f5b9bcc and then joined to the corpus.
SEVENTEENTH_REPOS_FILE = REPO / "bench" / "realcode_seventeenth.toml"
SEVENTEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_seventeenth.csv"
# The eighteenth part: issue 27's twelfth sealed set, judged at 9aba4ff and then joined to the corpus.
EIGHTEENTH_REPOS_FILE = REPO / "bench" / "realcode_eighteenth.toml"
EIGHTEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_eighteenth.csv"
# The nineteenth part: issue 27's thirteenth sealed set, judged at 668ad26 and then joined to the corpus.
NINETEENTH_REPOS_FILE = REPO / "bench" / "realcode_nineteenth.toml"
NINETEENTH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_nineteenth.csv"
# The twentieth part: issue 27's fourteenth sealed set, judged at 3d9dd93 and then joined to the corpus.
TWENTIETH_REPOS_FILE = REPO / "bench" / "realcode_twentieth.toml"
TWENTIETH_LABELS_FILE = REPO / "bench" / "labels" / "realcode_twentieth.csv"
# The twenty-first part: issue 27's fifteenth sealed set, judged at 8cf48e7 and then joined to the corpus.
TWENTYFIRST_REPOS_FILE = REPO / "bench" / "realcode_twentyfirst.toml"
TWENTYFIRST_LABELS_FILE = REPO / "bench" / "labels" / "realcode_twentyfirst.csv"
# The twenty-second part: issue 27's sixteenth sealed set, judged at 58db6de and then joined to the corpus.
TWENTYSECOND_REPOS_FILE = REPO / "bench" / "realcode_twentysecond.toml"
TWENTYSECOND_LABELS_FILE = REPO / "bench" / "labels" / "realcode_twentysecond.csv"
PARTS = [
    (REPOS_FILE, LABELS_FILE),
    (HELDOUT_REPOS_FILE, HELDOUT_LABELS_FILE),
    (THIRD_REPOS_FILE, THIRD_LABELS_FILE),
    (FOURTH_REPOS_FILE, FOURTH_LABELS_FILE),
    (FIFTH_REPOS_FILE, FIFTH_LABELS_FILE),
    (SIXTH_REPOS_FILE, SIXTH_LABELS_FILE),
    (SEVENTH_REPOS_FILE, SEVENTH_LABELS_FILE),
    (EIGHTH_REPOS_FILE, EIGHTH_LABELS_FILE),
    (NINTH_REPOS_FILE, NINTH_LABELS_FILE),
    (TENTH_REPOS_FILE, TENTH_LABELS_FILE),
    (ELEVENTH_REPOS_FILE, ELEVENTH_LABELS_FILE),
    (TWELFTH_REPOS_FILE, TWELFTH_LABELS_FILE),
    (THIRTEENTH_REPOS_FILE, THIRTEENTH_LABELS_FILE),
    (FOURTEENTH_REPOS_FILE, FOURTEENTH_LABELS_FILE),
    (FIFTEENTH_REPOS_FILE, FIFTEENTH_LABELS_FILE),
    (SIXTEENTH_REPOS_FILE, SIXTEENTH_LABELS_FILE),
    (SEVENTEENTH_REPOS_FILE, SEVENTEENTH_LABELS_FILE),
    (EIGHTEENTH_REPOS_FILE, EIGHTEENTH_LABELS_FILE),
    (NINETEENTH_REPOS_FILE, NINETEENTH_LABELS_FILE),
    (TWENTIETH_REPOS_FILE, TWENTIETH_LABELS_FILE),
    (TWENTYFIRST_REPOS_FILE, TWENTYFIRST_LABELS_FILE),
    (TWENTYSECOND_REPOS_FILE, TWENTYSECOND_LABELS_FILE),
]
PART_IDS = [
    "development", "heldout", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth",
    "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
    "twentieth", "twentyfirst", "twentysecond",
]
MIN_REPOSITORIES = {
    REPOS_FILE: 18, HELDOUT_REPOS_FILE: 18, THIRD_REPOS_FILE: 8, FOURTH_REPOS_FILE: 10, FIFTH_REPOS_FILE: 10,
    SIXTH_REPOS_FILE: 8, SEVENTH_REPOS_FILE: 10, EIGHTH_REPOS_FILE: 10, NINTH_REPOS_FILE: 10,
    TENTH_REPOS_FILE: 10, ELEVENTH_REPOS_FILE: 10, TWELFTH_REPOS_FILE: 15,
    THIRTEENTH_REPOS_FILE: 10, FOURTEENTH_REPOS_FILE: 10, FIFTEENTH_REPOS_FILE: 10,
    SIXTEENTH_REPOS_FILE: 10, SEVENTEENTH_REPOS_FILE: 10, EIGHTEENTH_REPOS_FILE: 10,
    NINETEENTH_REPOS_FILE: 10, TWENTIETH_REPOS_FILE: 10, TWENTYFIRST_REPOS_FILE: 10,
    TWENTYSECOND_REPOS_FILE: 10,
}
# The sealed set for the next change: pinned by name and commit only, no labels until it is judged.
SEALED_REPOS_FILE = REPO / "bench" / "realcode_sealed.toml"
SCORE = REPO / "bench" / "realcode_score.py"
# The evaluation exclusions live beside the checkout in this workplace (../shared); elsewhere the
# check that needs them is skipped.
EXCLUSIONS_FILE = REPO.parent / "shared" / "eval-exclusions.md"

COLUMNS = ["repo", "commit", "path", "line", "rule", "verdict", "why"]
LINE = re.compile(r"^(\d+:)?\d+$")  # ROW, or CELL:ROW in a notebook


def corpus(repos_file: Path = REPOS_FILE) -> list[dict]:
    with open(repos_file, "rb") as handle:
        return tomllib.load(handle)["repo"]


def labels(labels_file: Path = LABELS_FILE) -> list[dict]:
    with open(labels_file, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == COLUMNS
        return list(reader)


@pytest.mark.parametrize("repos_file, labels_file", PARTS, ids=PART_IDS)
def test_corpus_repositories_are_pinned_and_distinct(repos_file, labels_file):
    entries = corpus(repos_file)
    assert len(entries) >= MIN_REPOSITORIES[repos_file]
    names = [entry["name"] for entry in entries]
    assert len({name.lower() for name in names}) == len(names)
    for entry in entries:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+", entry["name"]), entry
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry
        assert entry.get("style"), f"{entry['name']}: say what kind of code it is"
        for sub in entry.get("paths", []):
            assert not sub.startswith("/") and ".." not in Path(sub).parts, sub


def test_no_repository_is_in_two_parts():
    """Every part is new code: no repository of a part is in an earlier part or in the sealed set."""
    sealed = {entry["name"].lower() for entry in corpus(SEALED_REPOS_FILE)}
    earlier: set[str] = set()
    for repos_file, _labels in PARTS:
        names = {entry["name"].lower() for entry in corpus(repos_file)}
        assert names, repos_file.name
        assert not names & (earlier | sealed), repos_file.name
        earlier |= names


def test_sealed_set_is_pinned_new_and_not_excluded():
    sealed = corpus(SEALED_REPOS_FILE)
    assert len(sealed) >= 10  # issue 27: at least 10 repositories nobody tuned on
    for entry in sealed:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+", entry["name"]), entry
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry
        assert entry.get("style"), f"{entry['name']}: say what kind of code it is"
    names = {entry["name"].lower() for entry in sealed}
    assert len(names) == len(sealed)
    for part, _labels in PARTS:
        assert not names & {entry["name"].lower() for entry in corpus(part)}, part.name
    if EXCLUSIONS_FILE.is_file():
        excluded = {
            line[2:].strip().lower()
            for line in EXCLUSIONS_FILE.read_text(encoding="utf-8").splitlines()
            if line.startswith("- ") and "/" in line
        }
        assert len(excluded) > 10 and not names & excluded


@pytest.mark.parametrize("repos_file, labels_file", PARTS, ids=PART_IDS)
def test_corpus_leaves_out_the_evaluation_repositories(repos_file, labels_file):
    if not EXCLUSIONS_FILE.is_file():
        pytest.skip("the evaluation exclusion list is not beside this checkout")
    excluded = {
        line[2:].strip().lower()
        for line in EXCLUSIONS_FILE.read_text(encoding="utf-8").splitlines()
        if line.startswith("- ") and "/" in line
    }
    assert len(excluded) > 10  # the list was read, not an empty match
    used = {entry["name"].lower() for entry in corpus(repos_file)} | {row["repo"].lower() for row in labels(labels_file)}
    assert not used & excluded


@pytest.mark.parametrize("repos_file, labels_file", PARTS, ids=PART_IDS)
def test_labels_are_facts_about_pinned_places(repos_file, labels_file):
    pinned = {entry["name"]: entry["commit"] for entry in corpus(repos_file)}
    codes = {rule.code for rule in rule_entries()} | set(RESERVED_CODES)
    rows = labels(labels_file)
    assert rows
    # One line ending everywhere, so that appending rows never rewrites a file's others in a diff:
    # append with csv.writer(handle, lineterminator="\n") (csv's default is CRLF).
    assert b"\r" not in labels_file.read_bytes(), f"{labels_file.name}: LF line endings only"
    for number, row in enumerate(rows, start=2):
        where = f"{labels_file.name}:{number}"
        assert row["repo"] in pinned, f"{where}: {row['repo']} is not in {repos_file.name}"
        assert row["commit"] == pinned[row["repo"]], f"{where}: commit differs from the pinned one"
        assert row["rule"] in codes, f"{where}: unknown rule {row['rule']}"
        assert row["verdict"] in ("TP", "FP", "FN"), f"{where}: verdict {row['verdict']!r}"
        path = Path(row["path"])
        assert path.suffix in (".py", ".ipynb") and not path.is_absolute() and ".." not in path.parts, where
        assert LINE.match(row["line"]), f"{where}: line {row['line']!r}"
        assert (":" in row["line"]) == (path.suffix == ".ipynb"), f"{where}: notebooks use CELL:ROW"
        why = row["why"].strip()
        assert why and len(why) <= 240 and "\n" not in why, f"{where}: one short line of why"
    places = Counter((row["repo"], row["path"], row["line"], row["rule"]) for row in rows)
    assert not [place for place, count in places.items() if count > 1], "one verdict per place and rule"


def run_score(tmp_path: Path, findings: list[dict], rows: list[list[str]], *args: str) -> str:
    findings_file = tmp_path / "findings.json"
    findings_file.write_text(json.dumps(findings))
    labels_file = tmp_path / "labels.csv"
    with open(labels_file, "w", newline="") as handle:
        csv.writer(handle).writerows([COLUMNS, *rows])
    done = subprocess.run(
        [sys.executable, str(SCORE), "--findings", str(findings_file), "--labels", str(labels_file), *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def finding(code: str, filename: str, row: int, cell: int | None = None) -> dict:
    return {"code": code, "filename": filename, "location": {"row": row, "column": 1}, "cell": cell}


def table_row(output: str, code: str) -> list[str]:
    return next(line.split() for line in output.splitlines() if line.startswith(code + " "))


def test_score_counts_verdicts_misses_and_unjudged(tmp_path):
    sha = "0" * 40
    findings = [
        finding("ML001", "a__b/train.py", 10),
        finding("ML001", "a__b/train.py", 20),
        finding("ML001", "a__b/nb.ipynb", 3, cell=4),
        finding("ML001", "a__b/new.py", 5),  # no label yet
        finding("ML013", "a__b/train.py", 7),
    ]
    rows = [
        ["a/b", sha, "train.py", "10", "ML001", "TP", "x"],
        ["a/b", sha, "train.py", "20", "ML001", "FP", "x"],
        ["a/b", sha, "nb.ipynb", "4:3", "ML001", "FN", "found now: counts as a true finding"],
        ["a/b", sha, "other.py", "9", "ML001", "FN", "still missed"],
        ["a/b", sha, "train.py", "7", "ML013", "TP", "x"],
        ["a/b", sha, "gone.py", "1", "ML013", "TP", "no longer reported: a miss"],
    ]
    output = run_score(tmp_path, findings, rows, "--show-missed")
    # rule findings judged TP FP precision missed recall unjudged
    assert table_row(output, "ML001") == ["ML001", "4", "3", "2", "1", "67%", "1", "73%", "1"]
    assert table_row(output, "ML013") == ["ML013", "1", "1", "1", "0", "100%", "1", "50%", "0"]
    assert "ML001 a/b new.py:5" in output.split("\nunjudged (")[1]
    missed = output.split("\nmissed (")[1]
    assert "other.py:9" in missed and "gone.py:1" in missed and "nb.ipynb" not in missed


def test_score_judges_only_a_sample_of_large_rules(tmp_path):
    findings = [finding("ML003", "a__b/m.py", row) for row in range(1, 31)]
    output = run_score(tmp_path, findings, [], "--sample", "4")
    assert table_row(output, "ML003")[-1] == "4"  # four unjudged in the sample, the other 26 not sampled


def test_score_refuses_a_label_file_with_other_columns(tmp_path):
    (tmp_path / "labels.csv").write_text("repo,verdict\na/b,TP\n")
    (tmp_path / "findings.json").write_text("[]")
    done = subprocess.run(
        [sys.executable, str(SCORE), "--findings", str(tmp_path / "findings.json"), "--labels",
         str(tmp_path / "labels.csv")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "columns" in done.stderr and "Traceback" not in done.stderr
