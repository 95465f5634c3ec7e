"""Running the variants: each in its own child process with a timeout and an address-space cap.

The children are forked from a multiprocessing "forkserver" that imports torch once: a fresh
`python -c "import torch"` takes seconds, which would dominate a run of many small fixtures. A
forked child still shares nothing with its siblings: no tensor was created in the server.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from memlint.confirm.variants import Fixture, VariantError, prepare

RTOL, ATOL = 1e-5, 1e-8
LOG_TAIL = 2_000


@dataclass
class Measurement:
    fixture: Fixture
    device: str
    before: dict
    after: Optional[dict]
    equivalent: Optional[bool] = None
    note: str = ""
    torch_version: str = ""

    @property
    def ok(self) -> bool:
        return self.before.get("ok", False) and (self.after is None or self.after.get("ok", False))

    @property
    def saved_bytes(self) -> Optional[int]:
        if not self.ok:
            return None
        if self.after is None:
            return 0
        return self.before["peak_bytes"] - self.after["peak_bytes"]

    @property
    def saved_fraction(self) -> Optional[float]:
        saved = self.saved_bytes
        if saved is None or not self.before.get("peak_bytes"):
            return None
        return saved / self.before["peak_bytes"]


@dataclass
class Options:
    device: str = "cpu"
    timeout: float = 60.0
    memory_limit: int = 4 * 2**30
    timeline: bool = False
    select: Optional[Sequence[str]] = None
    default_device: bool = False  # torch.set_default_device(device) in the script (--default-device)


_context = None


def _forkserver():
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["memlint.confirm.harness"])
        _start_server()
    return _context


def _start_server() -> None:
    """Start the server from the folder that holds the memlint this process runs.

    The server is `python -c ...`, whose sys.path starts with its working directory, and Python
    3.11's server imports its preload before taking this process's sys.path (and swallows the
    ImportError): started from a checkout after `pip install .`, or any folder holding a `memlint/`,
    it imported that one, and every child then failed (`ModuleNotFoundError: memlint.rules`). From
    the installed package's own parent folder, the first entry finds the same memlint as this process.
    """
    import memlint
    from multiprocessing import forkserver

    here = os.getcwd()
    os.chdir(Path(memlint.__file__).resolve().parent.parent)
    try:
        forkserver.ensure_running()
    finally:
        os.chdir(here)


def _tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL:].strip()
    except OSError:
        return ""


def probe(scratch: Path, timeout: float = 120.0) -> dict:
    """torch's version and CUDA availability, asked of a child so this process never imports torch."""
    job = {"probe": True, "device": "cpu", "report": str(scratch / "probe.json"), "log": str(scratch / "probe.log")}
    return _run_child(job, timeout)


def run_variant(script: Path, display: str, cwd: Path, options: Options, scratch: Path, line_map=None) -> dict:
    """Measure one script in a child; a report dict with "ok", and "error" when it failed."""
    report_path, log_path = scratch / "report.json", scratch / "output.log"
    job = {
        "script": str(script),
        "display": display,
        "cwd": str(cwd),
        "device": options.device,
        "memory_limit": options.memory_limit,
        "timeline": options.timeline,
        "default_device": options.default_device,
        "line_map": line_map or [],
        "report": str(report_path),
        "log": str(log_path),
    }
    return _run_child(job, options.timeout)


def run_outcome(script: Path, scratch: Path, timeout: float = 60.0, fake_cuda: bool = False) -> dict:
    """What a program does, for comparing two programs (harness.outcome): run in a child like a
    variant, with the same seed, but nothing measured."""
    job = {
        "outcome": True,
        "script": str(script),
        "display": script.name,
        "device": "cpu",
        "memory_limit": Options.memory_limit,
        "fake_cuda": fake_cuda,
        "report": str(scratch / f"{script.stem}.json"),
        "log": str(scratch / f"{script.stem}.log"),
    }
    return _run_child(job, timeout)


def _run_child(job: dict, timeout: float) -> dict:
    report_path, log_path = Path(job["report"]), Path(job["log"])
    process = _forkserver().Process(target=_child, args=(job,), daemon=False)
    process.start()
    process.join(timeout)
    if process.is_alive():
        _kill_group(process.pid)
        process.join(5)
        return {"ok": False, "error": f"timed out after {timeout:g} s"}
    if report_path.is_file():
        try:
            return json.loads(report_path.read_text())
        except ValueError:
            pass
    code = process.exitcode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        why = " (probably out of memory)" if -code == signal.SIGKILL else ""
        error = f"killed by {name}{why}"
    else:
        error = f"exited with status {code} before reporting"
    tail = _tail(log_path)
    return {"ok": False, "error": error + (f"; last output: {tail.splitlines()[-1]}" if tail else "")}


def _child(job: dict) -> None:
    from memlint.confirm.harness import child_main

    child_main(job)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the child made itself a process-group leader
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= ATOL + RTOL * abs(b)


def same_result(before, after) -> Optional[bool]:
    """True/False when both runs set a comparable `result`, None otherwise (tolerance as allclose)."""
    if before is None or after is None:
        return None
    if isinstance(before, dict) and "unsupported" in before or isinstance(after, dict) and "unsupported" in after:
        return None
    if isinstance(before, dict) != isinstance(after, dict):
        return False
    if isinstance(before, dict):
        if set(before) != set(after):
            return False
        if "items" in before:
            if len(before["items"]) != len(after["items"]):
                return False
            return _all_same(same_result(b, a) for b, a in zip(before["items"], after["items"]))
        if "keys" in before:
            if set(before["keys"]) != set(after["keys"]):
                return False
            return _all_same(same_result(before["keys"][k], after["keys"][k]) for k in before["keys"])
        if before["shape"] != after["shape"]:
            return False
        return all(_close(a, b) for a, b in zip(after["values"], before["values"]))
    if isinstance(before, str) or isinstance(after, str):  # nan / inf
        return str(before) == str(after)
    return _close(float(after), float(before))


def _all_same(answers) -> Optional[bool]:
    answers = list(answers)
    if False in answers:
        return False
    return None if None in answers else True


def result_note(before: dict, after: Optional[dict]) -> str:
    """Why the results could not be compared, when a script set one that memlint cannot read."""
    for report in (before, after):
        value = (report or {}).get("result")
        if isinstance(value, dict) and "unsupported" in value:
            return f"result not compared: {value['unsupported']}"
    return ""


def confirm(
    paths: Sequence[tuple[Path, str]], options: Options, progress: Callable[[str], None] = lambda _: None
) -> list[Measurement]:
    """Prepare and measure each fixture (path, display name); one failing does not stop the rest."""
    results = []
    with tempfile.TemporaryDirectory(prefix="memlint-confirm-") as temporary:
        root = Path(temporary)
        for index, (path, display) in enumerate(paths):
            scratch = root / str(index)
            (scratch / "before").mkdir(parents=True)
            (scratch / "after").mkdir()
            try:
                fixture = prepare(path, display, options.select, scratch / "fixed")
            except VariantError as error:
                results.append(Measurement(Fixture(path, display), options.device, {"ok": False, "error": str(error)}, None))
                continue
            if options.select and not fixture.codes:
                continue  # none of the selected rules applies to this fixture
            step = f"[{index + 1}/{len(paths)}] {display}"
            progress(f"{step}: measuring as written")
            cwd = path.resolve().parent
            before = run_variant(path, display, cwd, options, scratch / "before")
            measurement = Measurement(fixture, options.device, before, None, torch_version=before.get("torch", ""))
            if fixture.after_path is None:
                measurement.note = "memlint changes nothing here"
            else:
                progress(f"{step}: measuring after memlint's fixes ({fixture.after_source})")
                after_display = fixture.after_path.name if fixture.after_source == "after-file" else display
                measurement.after = run_variant(fixture.after_path, after_display, cwd, options, scratch / "after", fixture.line_map)
                measurement.equivalent = same_result(before.get("result"), measurement.after.get("result"))
                measurement.note = result_note(before, measurement.after)
            results.append(measurement)
    return results
