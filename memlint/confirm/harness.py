"""The measuring side of `memlint confirm`: runs in a child process, imports torch, executes one
script variant and writes what it measured as JSON.

Children are forked from a server process that has imported torch and nothing else (no tensor has
been created, no thread pool or device initialised), so each variant starts from the same clean
state without paying torch's import time again.
"""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import sys
import time
import traceback
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # e.g. "Failed to initialize NumPy" when numpy is absent
    import torch
    # Imported lazily by the first operator under a dispatch mode (torch._dynamo: seconds) or by
    # typical fixtures: load them once in the server rather than in every child.
    import torch._dynamo  # noqa: F401
    import torch.utils.checkpoint  # noqa: F401
    import torch.utils.data  # noqa: F401

from memlint.confirm.tracker import StorageTracker

# Everything imported so far lives as long as the process: keep the collector from rescanning it
# (gc.collect() in a fixture otherwise walks all of torch) and its pages shared after fork.
gc.freeze()

MAX_RESULT_ELEMENTS = 1_000_000
TIMELINE_POINTS = 2_000


def _cap_address_space(limit_bytes: int) -> None:
    """Cap this process's virtual address space at what it uses now plus `limit_bytes`."""
    try:
        with open("/proc/self/status") as status:
            current = next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:")), 0)
    except OSError:  # not Linux: cap the total instead
        current = 0
    cap = current + limit_bytes
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _plain_result(value):
    """A fixture's `result` as JSON: a number, or {"shape", "values"} for a tensor; None if absent."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        value = value.detach().to("cpu")
        if value.numel() > MAX_RESULT_ELEMENTS:
            return {"unsupported": f"tensor of {value.numel()} elements is too large to compare"}
        if value.is_complex():
            value = torch.view_as_real(value)
        return {"shape": list(value.shape), "values": value.double().flatten().tolist()}
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else str(value)
    return {"unsupported": f"result of type {type(value).__name__} cannot be compared"}


def _downsample(points: list[int], limit: int = TIMELINE_POINTS) -> list[int]:
    """Keep the shape of the curve, peaks included: the maximum of each bucket."""
    if len(points) <= limit:
        return points
    size = len(points) / limit
    return [max(points[int(i * size) : max(int((i + 1) * size), int(i * size) + 1)]) for i in range(limit)]


def _execute(code, path: str) -> dict:
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
    torch.manual_seed(0)
    try:
        exec(code, namespace)
    except SystemExit as stop:  # a script that ends with sys.exit(0) finished normally
        if stop.code not in (None, 0):
            raise
    return namespace


def _measure_cpu(code, path: str, timeline: bool) -> dict:
    tracker = StorageTracker(timeline=timeline)
    with tracker:
        namespace = _execute(code, path)
    points = list(tracker.timeline or [])  # the script's run, not the teardown of its globals after it
    measured = {
        "peak_bytes": tracker.usage.peak,
        "peak_bytes_rounded": tracker.usage.peak_rounded,
        "method": "tensor-storage tracker (TorchDispatchMode)",
    }
    if timeline:
        measured["timeline"] = _downsample(points)
    return measured | {"_namespace": namespace}


def _measure_cuda(code, path: str, timeline: bool) -> dict:
    torch.set_default_device("cuda")
    # Warm-up: cuBLAS/cuDNN workspaces and lazy module state go through the allocator once.
    warmup = _execute(code, path)
    del warmup
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    baseline = torch.cuda.memory_allocated()
    baseline_requested = torch.cuda.memory_stats().get("requested_bytes.all.current", 0)
    namespace = _execute(code, path)
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    measured = {
        "peak_bytes": torch.cuda.max_memory_allocated() - baseline,
        "peak_bytes_requested": stats.get("requested_bytes.all.peak", 0) - baseline_requested,
        "baseline_bytes": baseline,
        "method": "torch.cuda.max_memory_allocated after a warm-up run, baseline subtracted",
        "gpu": torch.cuda.get_device_name(),
    }
    return measured | {"_namespace": namespace}


def measure(job: dict) -> dict:
    """Run one variant. `job`: script, display, cwd, device, memory_limit, timeline."""
    path = job["script"]
    report: dict = {"torch": torch.__version__, "device": job["device"]}
    try:
        if job["device"] == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("CUDA was requested but torch.cuda.is_available() is False")
        with open(path, "rb") as handle:
            code = compile(handle.read(), job["display"], "exec", dont_inherit=True)
        sys.argv = [path]
        sys.path.insert(0, job["cwd"])
        os.chdir(job["cwd"])
        started, cpu_started = time.perf_counter(), time.process_time()
        measure_variant = _measure_cuda if job["device"] == "cuda" else _measure_cpu
        measured = measure_variant(code, path, job.get("timeline", False))
        namespace = measured.pop("_namespace")
        report |= measured
        report["seconds"] = round(time.perf_counter() - started, 3)
        report["cpu_seconds"] = round(time.process_time() - cpu_started, 3)
        report["result"] = _plain_result(namespace.get("result"))
        report["ok"] = True
    except MemoryError:
        report |= {"ok": False, "error": "out of memory (MemoryError under the address-space cap)"}
    except BaseException as error:  # the fixture's own failure is the finding; report it
        frames = traceback.extract_tb(error.__traceback__)
        inside = [f for f in frames if f.filename == job["display"]]
        where = f" (line {inside[-1].lineno})" if inside else ""
        report |= {"ok": False, "error": f"{type(error).__name__}: {error}{where}".strip()}
    return report


def probe() -> dict:
    """What this torch offers: its version and whether a CUDA device can be used."""
    return {"ok": True, "torch": torch.__version__, "cuda": bool(torch.cuda.is_available())}


def child_main(job: dict) -> None:
    """Entry point of a forked child: isolate, cap, measure, write the JSON report, exit."""
    os.setsid()  # its own process group, so a timeout kills anything it started too
    log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    if job["device"] != "cuda" and job.get("memory_limit"):
        # Not on CUDA: the driver reserves huge virtual ranges and fails under an address-space cap.
        _cap_address_space(job["memory_limit"])
    report = probe() if job.get("probe") else measure(job)
    with open(job["report"], "w") as handle:
        json.dump(report, handle)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: nothing of the fixture's needs cleaning up
