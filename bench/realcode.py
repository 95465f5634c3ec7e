"""The real-code development corpus (issue 16): public training code, pinned by commit, and memlint's
findings on it.

    python bench/realcode.py fetch [--mirror-root DIR] [REPO ...]   materialise the corpus
    python bench/realcode.py lint [--out FILE] [--jobs N]           all rules, JSON findings
    python bench/realcode.py paths                                   print each repository's folder

The repositories, their commits and optional sub-folders are listed in bench/realcode_repos.toml (the
development part: rules are tuned on it); `--list bench/realcode_heldout.toml` before the command works on
the second part instead (judged after the fixes, see that file's header), e.g. `python bench/realcode.py --list
bench/realcode_heldout.toml lint --out bench/out/realcode-heldout-findings.json`.  `--root DIR` materialises
and lints elsewhere: the sealed set of issue 27 (bench/realcode_sealed.toml) lived in bench/corpora/sealed
until it was judged, so that a lint of bench/corpora/realcode by a rule author could not see it.
`fetch` writes the `.py` and `.ipynb` files under 4 MiB of each repository at its pinned commit into
bench/corpora/realcode/<owner>__<name>/ (git-ignored: third-party code is never committed).  It
fetches the commit from https://github.com/<owner>/<name>, or, with --mirror-root DIR (or the
MEMLINT_REALCODE_MIRRORS environment variable), reads it from a local git directory found as
DIR/<owner>+<name>/repo, DIR/<owner>+<name>, DIR/<owner>__<name>, DIR/<owner>/<name> or their `.git`
(bare or not).  Files of 4 MiB or more are left out in both modes, so a corpus made from a mirror that
lacks large blobs is the same as one made from GitHub.

`lint` runs `memlint check` with every rule (each code selected, since `--select ML` leaves out the
rules that are off by default), `--no-cache`, `--output-format json` and a
configuration holding only `gpu-memory = "16GiB"` (so ML006 runs too) from inside the corpus folder,
so that each finding's path starts with `<owner>__<name>/`; bench/realcode_score.py reads the result.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
LIST = HERE / "realcode_repos.toml"
ROOT = HERE / "corpora" / "realcode"
DEFAULT_OUT = HERE / "out" / "realcode-findings.json"
SUFFIXES = (".py", ".ipynb")
MAX_BYTES = 4 * 1024 * 1024  # the fetch tool's mirrors lack blobs this large; GitHub has them
MIRROR_ENV = "MEMLINT_REALCODE_MIRRORS"


def load_repos(path: Path = LIST) -> list[dict]:
    """The repository entries of the list: name, commit, style and (optional) paths."""
    with open(path, "rb") as handle:
        entries = tomllib.load(handle).get("repo", [])
    for entry in entries:
        entry.setdefault("paths", [])
    return entries


def folder_name(repo: str) -> str:
    """`owner/name` -> `owner__name`, the repository's folder under the corpus root."""
    return repo.replace("/", "__")


def repo_of_folder(folder: str) -> str:
    return folder.replace("__", "/", 1)


def _git(git_dir: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, **kwargs)


def find_mirror(mirror_root: Path, repo: str) -> Path | None:
    owner, name = repo.split("/")
    for candidate in (
        mirror_root / f"{owner}+{name}" / "repo", mirror_root / f"{owner}+{name}",
        mirror_root / f"{owner}__{name}", mirror_root / owner / name,
    ):  # fmt: skip
        for git_dir in (candidate, candidate / ".git", candidate.with_name(candidate.name + ".git")):
            if (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir():
                return git_dir
    return None


def _selected_blobs(git_dir: Path, commit: str, paths: list[str]) -> list[tuple[str, str]]:
    """(blob sha, path) of the source files at `commit`, under `paths` when given, under 4 MiB."""
    listing = _git(git_dir, "ls-tree", "-r", "-l", "-z", commit, capture_output=True).stdout.decode()
    chosen = []
    for record in listing.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, sha, size = meta.split()
        if kind != "blob" or mode not in ("100644", "100755") or not path.endswith(SUFFIXES):
            continue
        if not size.isdigit() or int(size) >= MAX_BYTES:  # "BAD" / "-": the mirror lacks the blob
            continue
        if paths and not any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths):
            continue
        chosen.append((sha, path))
    return chosen


def _write_blobs(git_dir: Path, blobs: list[tuple[str, str]], target: Path) -> None:
    """Write each blob to target/path with one `git cat-file --batch` process."""
    with subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as batch:
        assert batch.stdin is not None and batch.stdout is not None
        for sha, path in blobs:
            batch.stdin.write(f"{sha}\n".encode())
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) != 3:
                raise SystemExit(f"git cat-file could not read {path} ({sha})")
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)  # the newline after the contents
            destination = target / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
        batch.stdin.close()


def materialise(entry: dict, mirror_root: Path | None) -> Path:
    """The folder of one repository at its pinned commit, written the first time."""
    repo, commit = entry["name"], entry["commit"]
    target = ROOT / folder_name(repo)
    stamp = target / ".complete"
    if stamp.is_file() and stamp.read_text().strip() == commit:
        return target
    if target.exists():
        shutil.rmtree(target)
    with tempfile.TemporaryDirectory(prefix="realcode-") as scratch:
        git_dir = find_mirror(mirror_root, repo) if mirror_root else None
        if git_dir is None:
            if mirror_root:
                print(f"  {repo}: no mirror under {mirror_root}, fetching from GitHub", file=sys.stderr)
            git_dir = Path(scratch) / "git"
            subprocess.run(["git", "init", "--quiet", "--bare", str(git_dir)], check=True)
            _git(git_dir, "fetch", "--quiet", "--depth", "1", f"https://github.com/{repo}", commit)
        staging = ROOT / f".{folder_name(repo)}.partial"
        if staging.exists():
            shutil.rmtree(staging)
        _write_blobs(git_dir, _selected_blobs(git_dir, commit, entry["paths"]), staging)
        (staging / ".complete").write_text(commit + "\n")
        staging.rename(target)
    return target


def cmd_fetch(args: argparse.Namespace) -> int:
    mirror = args.mirror_root or os.environ.get(MIRROR_ENV)
    mirror_root = Path(mirror) if mirror else None
    entries = load_repos(args.list)
    wanted = set(args.repos)
    unknown = wanted - {e["name"] for e in entries}
    if unknown:
        print(f"not in {args.list.name}: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    ROOT.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        if wanted and entry["name"] not in wanted:
            continue
        target = materialise(entry, mirror_root)
        count = sum(1 for p in target.rglob("*") if p.suffix in SUFFIXES)
        print(f"{entry['name']:50} {entry['commit'][:12]} {count:5} files  {target}")
    return 0


def every_rule_code() -> list[str]:
    """Every built-in rule's code: `--select ML` leaves out the rules that are off by default."""
    from memlint.pipeline.registry import rule_entries  # the memlint of the interpreter that runs this script

    return sorted(rule.code for rule in rule_entries())


def cmd_lint(args: argparse.Namespace) -> int:
    entries = load_repos(args.list)
    missing = [e["name"] for e in entries if not (ROOT / folder_name(e["name"]) / ".complete").is_file()]
    if missing:
        print(f"not materialised yet (run `fetch` first): {', '.join(missing)}", file=sys.stderr)
        return 2
    folders = sorted(folder_name(e["name"]) for e in entries)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="realcode-config-") as scratch:
        config = Path(scratch) / "memlint.toml"
        config.write_text('gpu-memory = "16GiB"\n', encoding="utf-8")
        command = [
            sys.executable, "-m", "memlint", "check", *folders, "--select", ",".join(every_rule_code()),
            "--output-format", "json",
            "--exit-zero", "--no-cache", "--config", str(config), "--jobs", str(args.jobs),
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, cwd=ROOT)
        seconds = time.perf_counter() - started
    # exit 2 with a JSON report: internal errors (ML900) on some files, which stay in the report
    if done.returncode not in (0, 2) or not done.stdout.lstrip().startswith(b"["):
        sys.stderr.write(done.stderr.decode(errors="replace")[-4000:])
        print(f"memlint failed (exit {done.returncode})", file=sys.stderr)
        return 2
    out.write_bytes(done.stdout)
    sys.stderr.write(done.stderr.decode(errors="replace"))
    print(f"findings written to {out} ({seconds:.0f} s)")
    return 0


def cmd_paths(args: argparse.Namespace) -> int:
    for entry in load_repos(args.list):
        print(ROOT / folder_name(entry["name"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    global ROOT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", type=Path, default=LIST, help=f"the repository list (default: {LIST.name})")
    parser.add_argument(
        "--root", type=Path, default=ROOT,
        help="where the repositories are materialised (default: bench/corpora/realcode); a sealed set is kept "
        "in its own folder so that lints of the corpus folder never see it",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser("fetch", help="materialise the pinned repositories")
    fetch.add_argument("repos", nargs="*", help="only these owner/name entries")
    fetch.add_argument("--mirror-root", help=f"local git mirrors (default: ${MIRROR_ENV})")
    fetch.set_defaults(run=cmd_fetch)
    lint = commands.add_parser("lint", help="run memlint with every rule over the corpus")
    lint.add_argument("--out", default=str(DEFAULT_OUT))
    lint.add_argument("--jobs", type=int, default=2)
    lint.set_defaults(run=cmd_lint)
    paths = commands.add_parser("paths", help="print each repository's folder")
    paths.set_defaults(run=cmd_paths)
    args = parser.parse_args(argv)
    ROOT = args.root.resolve()
    try:
        return args.run(args)
    except subprocess.CalledProcessError as error:  # git could not fetch or read a pinned commit
        print(f"realcode: {' '.join(map(str, error.cmd))} failed (exit {error.returncode})", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
