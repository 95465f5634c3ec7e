"""The performance benchmark: one command measures memlint against the libcst parse floor, its own
cache and TorchFix, and writes the results into docs/benchmarks.md.

    .venv/bin/python bench/perf.py                 # 3 runs each, --jobs 2, timm + transformers
    .venv/bin/python bench/perf.py --runs 5 --torchfix-runs 3

Every timing is the wall time of a fresh process (what a user waits for), taken in one sitting and
interleaved (floor, cold, warm, TorchFix in each round), so that the ratios compare numbers taken
under the same machine load.  Peak RSS is the largest resident set of any one process of the run.
TorchFix lives in its own environment, bench/.venv-torchfix (git-ignored), created on first use.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

import corpora  # noqa: E402  (bench/corpora.py)

TORCHFIX = "torchfix==0.7.0"
TORCHFIX_ENV = BENCH / ".venv-torchfix"
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench/perf.py:begin -->", "<!-- bench/perf.py:end -->"
# A mid-sized model file that uses torch: what a pre-commit hook typically sees (it has no finding).
SINGLE_FILE = "timm/layers/mlp.py"
# A file with a finding (relative to the repository): the full libcst analysis runs and reports.
FINDING_FILE = "fixtures/ml001_eval_loop.py"

FLOOR_SCRIPT = """
import sys, libcst
from concurrent.futures import ProcessPoolExecutor
def parse(path):
    with open(path, "rb") as handle:
        libcst.parse_module(handle.read())
    return 0
if __name__ == "__main__":
    files = open(sys.argv[1]).read().split("\\n")
    jobs = int(sys.argv[2])
    if jobs == 1:
        for f in files: parse(f)
    else:
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(parse, files, chunksize=max(1, len(files) // (jobs * 8))))
"""


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds of one fresh process, and the completed process (with `.peak_rss_mib`: the
    largest resident set of the process or any worker it waited for, from wait4)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env={**os.environ, **SNAPSHOT}, cwd=_cwd())
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        completed = subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())
    completed.peak_rss_mib = round(usage.ru_maxrss / 1024)
    return wall, completed


def check_ok(completed: subprocess.CompletedProcess, allowed=(0, 1)) -> None:
    if completed.returncode not in allowed:
        sys.stderr.write(completed.stderr.decode(errors="replace")[-3000:])
        raise SystemExit(f"benchmark command failed ({completed.returncode}): {' '.join(completed.args)}")


SNAPSHOT: dict[str, str] = {}


def snapshot_source() -> Path:
    """Copy memlint/ and rules/ (as memlint/rules) to a temporary directory that the measured
    commands import from: edits made to the working tree during the run (the cache keys on the
    code's files) cannot change the code under test or empty the cache half-way."""
    target = Path(tempfile.mkdtemp(prefix="memlint-snapshot-"))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "memlint", target / "memlint", ignore=ignore)
    shutil.copytree(REPO / "rules", target / "memlint" / "rules", ignore=ignore, dirs_exist_ok=True)
    # Bytecode, as an installed package has it (pip compiles on install; this environment may
    # set PYTHONDONTWRITEBYTECODE, which would make every measured start compile memlint again).
    compileall.compile_dir(str(target), quiet=1)
    SNAPSHOT["PYTHONPATH"] = str(target)
    return target


def _cwd() -> str:
    # `python -m` puts the working directory first on sys.path: run from the snapshot, not the repo.
    return SNAPSHOT.get("PYTHONPATH", str(REPO))


def memlint_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "memlint", "check", "--exit-zero", "--output-format", "concise", *args]


def python_files(root: Path) -> list[str]:
    """The files memlint itself checks under `root` (its discovery and default excludes)."""
    from memlint.config import Selection, build_settings, discover
    from memlint.pipeline.files import discover_files

    settings = build_settings(discover(root), Selection())
    return [str(p) for p in discover_files([root], settings).files]


def ensure_torchfix() -> Path:
    executable = TORCHFIX_ENV / "bin" / "torchfix"
    if executable.exists():
        return executable
    subprocess.run([sys.executable, "-m", "venv", str(TORCHFIX_ENV)], check=True)
    subprocess.run([str(TORCHFIX_ENV / "bin" / "pip"), "install", "--quiet", TORCHFIX], check=True)
    listed = subprocess.run([str(TORCHFIX_ENV / "bin" / "pip"), "list"], capture_output=True, text=True).stdout
    if any(line.split()[:1] == ["torch"] for line in listed.splitlines()):
        raise SystemExit("the TorchFix environment pulled in torch; it should not need it")
    return executable


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


class Measurements:
    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}
        self.rss: dict[str, int] = {}
        self.notes: dict[str, str] = {}  # for a render from a run that was cut short

    def add(self, key: str, seconds: float) -> None:
        self.samples.setdefault(key, []).append(seconds)
        print(f"  {key}: {seconds:.2f} s", flush=True)

    def peak(self, key: str, completed: subprocess.CompletedProcess) -> None:
        self.rss[key] = max(self.rss.get(key, 0), completed.peak_rss_mib)

    def med(self, key: str) -> float:
        return median(self.samples.get(key, []))


def measure_corpus(name: str, root: Path, args, results: Measurements, torchfix: Path | None) -> dict:
    files = python_files(root)
    file_list = Path(tempfile.mkstemp(prefix="memlint-bench-", suffix=".txt")[1])
    file_list.write_text("\n".join(files))
    floor_script = Path(tempfile.mkstemp(prefix="memlint-floor-", suffix=".py")[1])
    floor_script.write_text(FLOOR_SCRIPT)
    cache_dir = Path(tempfile.mkdtemp(prefix="memlint-cache-"))
    jobs = str(args.jobs)
    try:
        runs = args.runs if name == "timm" else args.large_runs
        for round_number in range(runs):
            print(f"{name} round {round_number + 1}/{runs}", flush=True)
            wall, done = timed([sys.executable, str(floor_script), str(file_list), jobs])
            check_ok(done, (0,))
            results.add(f"{name}.floor", wall)
            results.peak(f"{name}.floor", done)
            wall, done = timed(memlint_command("--no-cache", "--jobs", jobs, str(root)))
            check_ok(done)
            results.add(f"{name}.cold", wall)
            results.peak(f"{name}.cold", done)
            if name == "timm":
                if round_number == 0:  # fill the cache once; every round then measures a warm run
                    wall, done = timed(memlint_command("--cache-dir", str(cache_dir), "--jobs", jobs, str(root)))
                    check_ok(done)
                    results.add(f"{name}.fill", wall)
                wall, done = timed(memlint_command("--cache-dir", str(cache_dir), "--jobs", jobs, str(root)))
                check_ok(done)
                results.add(f"{name}.warm", wall)
                if torchfix is not None and round_number < args.torchfix_runs:
                    wall, done = timed([str(torchfix), "--jobs", jobs, str(root)])
                    check_ok(done)
                    results.add(f"{name}.torchfix", wall)
                    results.peak(f"{name}.torchfix", done)
        findings = subprocess.run(
            memlint_command("--no-cache", "--jobs", jobs, "--output-format", "json", str(root)),
            capture_output=True, env={**os.environ, **SNAPSHOT}, cwd=_cwd(),
        )  # fmt: skip
        count = len(json.loads(findings.stdout or b"[]"))
    finally:
        file_list.unlink(missing_ok=True)
        floor_script.unlink(missing_ok=True)
        shutil.rmtree(cache_dir, ignore_errors=True)
    size = sum(os.path.getsize(f) for f in files)
    mentions_torch = sum(b"torch" in Path(f).read_bytes() for f in files)
    return {"files": len(files), "bytes": size, "torch_files": mentions_torch, "findings": count}


def measure_single_file(root: Path, args, results: Measurements) -> Path:
    """`memlint check FILE` on the file without findings (cold and with its cache entry), on a file
    with a finding, and a bare interpreter start, interleaved."""
    target = root / SINGLE_FILE
    cache_dir = Path(tempfile.mkdtemp(prefix="memlint-cache-"))
    try:
        check_ok(timed(memlint_command("--cache-dir", str(cache_dir), str(target)))[1])  # fill the cache
        for _ in range(max(5, args.runs)):
            wall, done = timed(memlint_command("--no-cache", str(target)))
            check_ok(done)
            results.add("single.check", wall)
            wall, done = timed(memlint_command("--cache-dir", str(cache_dir), str(target)))
            check_ok(done)
            results.add("single.warm", wall)
            wall, done = timed(memlint_command("--no-cache", str(REPO / FINDING_FILE)))
            check_ok(done)
            if b": ML" not in done.stdout:
                raise SystemExit(f"{FINDING_FILE} was expected to have a finding: {done.stdout!r}")
            results.add("single.finding", wall)
            wall, done = timed([sys.executable, "-c", "pass"])
            results.add("single.python", wall)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return target


def machine() -> dict:
    from importlib.metadata import version

    return {
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "libcst": version("libcst"),
        "memlint": version("memlint") if _installed("memlint") else "source tree",
        "os": f"{platform.system()} {platform.release()}",
        "load": os.getloadavg(),
    }


def _installed(name: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(name)
        return True
    except PackageNotFoundError:
        return False


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def render(args, info: dict, corpora_info: dict, results: Measurements, single: Path, load_end) -> str:
    m = results.med
    floor, cold, warm, fill = m("timm.floor"), m("timm.cold"), m("timm.warm"), m("timm.fill")
    tf = m("timm.torchfix")
    rows = [
        ("libcst parse floor (all files, same processes)", floor, "timm.floor"),
        ("memlint cold (`--no-cache`)", cold, "timm.cold"),
        ("memlint filling the cache (first run)", fill, "timm.fill"),
        ("memlint warm (cache filled, nothing changed)", warm, "timm.warm"),
        ("TorchFix 0.7.0 (its own venv, same files, same jobs)", tf, "timm.torchfix"),
    ]

    def samples(key: str) -> str:
        return ", ".join(f"{v:.2f}" for v in results.samples.get(key, [])) or "not run"

    def verdict(ok: bool) -> str:
        return "met" if ok else "**missed**"

    t = corpora_info.get("timm", {})
    lines = [
        BEGIN,
        "## Measured results",
        "",
        f"Command: `.venv/bin/python bench/perf.py {' '.join(args.argv)}`".rstrip() + f" (run {info['when']}).",
        "",
        f"Machine: {info['cores']} cores available ({info['cpu']}), {info['os']}, Python {info['python']}, "
        f"libcst {info['libcst']}, memlint {info['memlint']}. "
        f"**The machine was shared** with other engineers' test runs: load average "
        f"{info['load'][0]:.1f} at the start and {load_end[0]:.1f} at the end (on {info['cores']} cores), so absolute "
        "times are inflated and noisy; the ratios compare timings taken interleaved in the same rounds.",
        "",
        f"Every figure is the median wall time of {args.runs} fresh process runs (`--jobs {args.jobs}`; "
        f"TorchFix: {len(results.samples.get('timm.torchfix', []))} run(s); "
        f"transformers: {len(results.samples.get('transformers.cold', [])) or 'not'} run(s)).",
        "",
        f"### timm 1.0.31 ({t.get('files')} files, {t.get('bytes', 0) / 1e6:.1f} MB, "
        f"{t.get('torch_files')} mention torch"
        + (f"; {t['findings']} findings)" if t.get("findings") is not None else ")"),
        "",
        "| what | median s | runs (s) |",
        "|---|---:|---|",
    ]
    for label, value, key in rows:
        lines.append(f"| {label} | {value:.2f} | {samples(key)} |")
    single_check, python_start = m("single.check"), m("single.python")
    lines += [
        "",
        "| target | measured | |",
        "|---|---|---|",
        f"| cold ≤ 2.0× parse floor | {cold / floor:.2f}× | {verdict(cold / floor <= 2.0)} |",
        f"| warm ≤ 10% of cold | {100 * warm / cold:.1f}% | {verdict(warm / cold <= 0.10)} |",
    ]
    if tf == tf:  # not NaN
        lines.append(f"| ≥ 10× faster than TorchFix | {tf / cold:.1f}× | {verdict(tf / cold >= 10)} |")
    elif results.notes.get("torchfix"):
        lines.append(f"| ≥ 10× faster than TorchFix | {results.notes['torchfix']} | **not shown** |")
    lines.append(
        f"| single file ≤ 0.3 s (`memlint check --no-cache {SINGLE_FILE}`, {single.stat().st_size // 1024} KiB) | "
        f"{single_check:.2f} s (bare `python -c pass`: {python_start:.2f} s) | {verdict(single_check <= 0.3)} |"
    )
    single_warm, single_finding = m("single.warm"), m("single.finding")
    if single_warm == single_warm:  # not NaN (older saved runs did not measure it)
        lines.append(f"| the same file, cache warm | {single_warm:.2f} s | {verdict(single_warm <= 0.3)} |")
    if single_finding == single_finding:
        lines.append(
            f"| a file with a finding (`memlint check --no-cache {FINDING_FILE}`) | {single_finding:.2f} s | "
            f"{verdict(single_finding <= 0.3)} |"
        )
    x = corpora_info.get("transformers")
    if not x:
        lines.append("| transformers 5.23.0 cold < 60 s | not measured in this run | — |")
    if x:
        xc, xf = m("transformers.cold"), m("transformers.floor")
        lines.append(
            f"| transformers 5.23.0 cold < 60 s ({x['files']} files, {x['bytes'] / 1e6:.1f} MB, "
            f"{x['torch_files']} mention torch; {x['findings']} findings) | {xc:.1f} s "
            f"(parse floor {xf:.1f} s, {xc / xf:.2f}×) | {verdict(xc < 60)} |"
        )
    lines += [
        "",
        "Peak RSS (largest single process, from wait4): "
        + (", ".join(f"{key} {value} MiB" for key, value in sorted(results.rss.items())) or "not recorded")
        + ".",
        "",
        "Raw samples (seconds): `" + json.dumps(results.samples) + "`",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_doc(section: str) -> None:
    DOC.parent.mkdir(exist_ok=True)
    if DOC.exists() and BEGIN in DOC.read_text():
        text = DOC.read_text()
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1] if END in rest else ""
        DOC.write_text(head + section.rstrip("\n") + tail)
    else:
        DOC.write_text("# Benchmarks\n\n" + section)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds on timm (median reported)")
    parser.add_argument("--large-runs", type=int, default=1, help="rounds on transformers")
    parser.add_argument("--torchfix-runs", type=int, default=3, help="TorchFix rounds (it is slow)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip-transformers", action="store_true")
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="print the section instead of writing the doc")
    parser.add_argument("--render", type=Path, help="only rewrite the doc from a saved bench/out/perf.json")
    args = parser.parse_args(argv)
    args.argv = argv
    if args.render:
        raw = json.loads(args.render.read_text())
        results = Measurements()
        results.samples, results.rss, results.notes = raw["samples"], raw["rss"], raw.get("notes", {})
        args.argv = raw.get("argv", [])
        for key in ("runs", "jobs"):
            setattr(args, key, raw.get(key, getattr(args, key)))
        section = render(args, raw["info"], raw["corpora"], results, corpora.fetch("timm") / SINGLE_FILE, raw.get("load_end", raw["info"]["load"]))
        write_doc(section)
        return 0
    info = machine()
    info["when"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    torchfix = None if args.no_torchfix else ensure_torchfix()
    snapshot = snapshot_source()
    results = Measurements()
    corpora_info = {}
    timm = corpora.fetch("timm")
    corpora_info["timm"] = measure_corpus("timm", timm, args, results, torchfix)
    single = measure_single_file(timm, args, results)
    if not args.skip_transformers:
        transformers = corpora.fetch("transformers")
        corpora_info["transformers"] = measure_corpus("transformers", transformers, args, results, None)
    raw = {
        "info": info, "corpora": corpora_info, "samples": results.samples, "rss": results.rss,
        "argv": argv, "runs": args.runs, "jobs": args.jobs, "load_end": os.getloadavg(),
    }  # fmt: skip
    (BENCH / "out").mkdir(exist_ok=True)
    (BENCH / "out" / "perf.json").write_text(json.dumps(raw, indent=1, default=str))  # git-ignored
    shutil.rmtree(snapshot, ignore_errors=True)
    section = render(args, info, corpora_info, results, single, os.getloadavg())
    if args.no_write:
        print(section)
    else:
        write_doc(section)
        print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
