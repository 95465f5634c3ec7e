"""The measuring side of `memlint confirm`: runs in a child process, imports torch, executes one
script variant and writes what it measured as JSON.

Children are forked from a server process that has imported torch and nothing else (no tensor has
been created, no thread pool or device initialised), so each variant starts from the same clean
state without paying torch's import time again.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import resource
import statistics
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
UNUSED_DEVICE_BYTES = 64 * 2**10  # a CUDA peak below this means the script did not use the GPU


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


def _plain_result(value, depth: int = 0):
    """A fixture's `result` as JSON: a number, {"shape", "values"} for a tensor, {"items": [...]} for
    a tuple or list and {"keys": {...}} for a dict of those; None if absent; {"unsupported": why}."""
    if value is None:
        return None
    if isinstance(value, (tuple, list, dict)) and depth < 4:
        if isinstance(value, dict):
            if not all(isinstance(k, (str, int, float, bool)) for k in value):
                return {"unsupported": "a dict with keys other than strings and numbers cannot be compared"}
            parts = {str(k): _plain_result(v, depth + 1) for k, v in value.items()}
            found = next((p for p in parts.values() if isinstance(p, dict) and "unsupported" in p), None)
            return found or {"keys": parts}
        parts = [_plain_result(v, depth + 1) for v in value]
        found = next((p for p in parts if isinstance(p, dict) and "unsupported" in p), None)
        return found or {"items": parts}
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


class _HostSampler:
    """Host heap in use after every backward pass, for the growth per training step that device
    peaks cannot show (ML001 in a loop with backward: every step's autograd graph stays reachable
    from the accumulator and lives on the host). glibc's mallinfo2: bytes handed out by malloc,
    which is where the C++ autograd nodes and CPU tensor storage live (Python's small objects come
    from its own arenas and are not counted)."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self._mallinfo = _mallinfo2()
        self._original = torch.autograd.backward

    def __enter__(self) -> "_HostSampler":
        if self._mallinfo is not None:
            original, samples, read = self._original, self.samples, self._mallinfo
            depth = [0]  # reentrant checkpointing calls backward inside backward: sample the outer one

            def backward(*args, **kwargs):
                depth[0] += 1
                try:
                    result = original(*args, **kwargs)
                finally:
                    depth[0] -= 1
                if depth[0] == 0:
                    samples.append(read())
                return result

            torch.autograd.backward = backward  # Tensor.backward calls torch.autograd.backward
        return self

    def __exit__(self, *exc) -> None:
        torch.autograd.backward = self._original

    def report(self) -> dict:
        """The median growth between backward passes after the first quarter of them (the first
        steps create the gradients, the optimizer's state and the tracker's own tables); the median
        keeps one-off allocations out."""
        if self._mallinfo is None:
            return {}
        found = {"backward_calls": len(self.samples)}
        if len(self.samples) >= 4:
            steady = self.samples[max(1, len(self.samples) // 4) :]
            found["host_growth_per_step"] = statistics.median(b - a for a, b in zip(steady, steady[1:]))
        return found


def _mallinfo2():
    """A function returning glibc's bytes in use (small blocks + mmapped), or None elsewhere."""
    import ctypes

    class Info(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        function = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    function.restype = Info

    def read() -> int:
        info = function()
        return info.uordblks + info.hblkhd

    return read


def _measure_cpu(code, path: str, timeline: bool, default_device: bool) -> dict:
    tracker = StorageTracker(timeline=timeline, device_type="cpu")
    with _HostSampler() as host, tracker:
        namespace = _execute(code, path)
    points = list(tracker.timeline or [])  # the script's run, not the teardown of its globals after it
    measured = {
        "peak_bytes": tracker.usage.peak,
        "peak_bytes_rounded": tracker.usage.peak_rounded,
        "method": "tensor-storage tracker (TorchDispatchMode)",
        **host.report(),
    }
    if tracker.other_devices:
        measured["other_devices"] = dict(tracker.other_devices)
    if timeline:
        measured["timeline"] = _downsample(points)
    return measured | {"_namespace": namespace}


def _measure_cuda(code, path: str, timeline: bool, default_device: bool) -> dict:
    if default_device:
        # Only on request (--default-device), for scripts that never choose a device: it changes
        # what the script does (DataLoader(shuffle=True) without a generator fails, pytorch#118084).
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
    with _HostSampler() as host:
        namespace = _execute(code, path)
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    peak = torch.cuda.max_memory_allocated() - baseline
    if peak < UNUSED_DEVICE_BYTES:
        raise _NotOnDevice(
            f"the script allocated only {peak:,} B on the GPU: it keeps its tensors elsewhere, so this is no "
            "measurement of it on CUDA (memlint confirm does not move tensors; the script chooses its "
            "device, e.g. from the MEMLINT_DEVICE environment variable, or pass --default-device)"
        )
    measured = {
        "peak_bytes": peak,
        "peak_bytes_requested": stats.get("requested_bytes.all.peak", 0) - baseline_requested,
        "baseline_bytes": baseline,
        "method": "torch.cuda.max_memory_allocated after a warm-up run, baseline subtracted",
        "gpu": torch.cuda.get_device_name(),
        **host.report(),
    }
    return measured | {"_namespace": namespace}


class _NotOnDevice(Exception):
    """The script did not use the device it is measured on."""


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
        os.environ["MEMLINT_DEVICE"] = job["device"]  # for scripts that follow the measured device
        started, cpu_started = time.perf_counter(), time.process_time()
        measure_variant = _measure_cuda if job["device"] == "cuda" else _measure_cpu
        measured = measure_variant(code, path, job.get("timeline", False), job.get("default_device", False))
        namespace = measured.pop("_namespace")
        report |= measured
        report["seconds"] = round(time.perf_counter() - started, 3)
        report["cpu_seconds"] = round(time.process_time() - cpu_started, 3)
        report["result"] = _plain_result(namespace.get("result"))
        report["ok"] = True
    except MemoryError:
        report |= {"ok": False, "error": "out of memory (MemoryError under the address-space cap)"}
    except _NotOnDevice as error:
        report |= {"ok": False, "error": str(error)}
    except BaseException as error:  # the fixture's own failure is the finding; report it
        frames = traceback.extract_tb(error.__traceback__)
        inside = [f for f in frames if f.filename == job["display"]]
        where = f" ({_where(inside[-1].lineno, job.get('line_map'))})" if inside else ""
        report |= {"ok": False, "error": f"{type(error).__name__}: {error}{where}".strip()}
    return report


def _where(line: int, line_map) -> str:
    """The line in the user's file; for memlint's fixed copy, with the copy's own line beside it."""
    if not line_map:
        return f"line {line}"
    original = line_map[line - 1] if 0 < line <= len(line_map) else None
    if original == line:
        return f"line {line}"
    if original is None:
        return f"line {line} of memlint's fixed copy"
    return f"line {original}, line {line} of memlint's fixed copy"


# ---------------------------------------------------------------------------- outcomes of fixes


def outcome(job: dict) -> dict:
    """Run one program only to compare what it does with another program's (a rule example before
    and after its fix, tests/test_fix_execution.py): no measurement; `result` as exact data
    (`_exact_result`), or the exception the program raised."""
    report: dict = {"torch": torch.__version__}
    try:
        with open(job["script"], "rb") as handle:
            code = compile(handle.read(), job["display"], "exec", dont_inherit=True)
        with _FakeCuda() if job.get("fake_cuda") else contextlib.nullcontext():
            namespace = _execute(code, job["script"])
            report["result"] = _exact_result(namespace.get("result"))
        report["ok"] = True
    except BaseException as error:  # the program's own failure is part of its outcome
        report |= {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return report


class _FakeCuda:
    """GPU code on a machine without one: torch's FakeTensorMode creates tensors on "cuda" without
    a device (no values, only shape, dtype and device); `Tensor.cuda`, which FakeTensorMode cannot
    run without CUDA, is replaced by its documented meaning: no argument or None is the current
    device (index 0 here), an index or a device must name a CUDA device; `Tensor.to("cuda")` gets
    that index too (without CUDA, torch cannot ask which device is current).  Autograd on fake GPU
    tensors aborts the process: harnesses leave out `requires_grad` and backward passes there."""

    def __enter__(self) -> None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        self._original = torch.Tensor.cuda

        def cuda(tensor, device=None, non_blocking=False, memory_format=torch.preserve_format):
            if device is None:
                target = torch.device("cuda", 0)
            elif isinstance(device, int) and not isinstance(device, bool):
                target = torch.device("cuda", device)
            else:
                target = torch.device(device)
            if target.type != "cuda":
                raise RuntimeError("Invalid device, must be cuda device")
            return tensor.to(target, non_blocking=non_blocking, memory_format=memory_format)

        original_to = self._original_to = torch.Tensor.to

        def to(tensor, *args, **kwargs):  # "cuda" without an index: the current device, 0 here
            return original_to(tensor, *[_indexed(a) for a in args], **{k: _indexed(v) for k, v in kwargs.items()})

        torch.Tensor.cuda = cuda
        torch.Tensor.to = to
        self._mode = FakeTensorMode(allow_non_fake_inputs=True)
        self._mode.__enter__()

    def __exit__(self, *exc) -> None:
        try:
            self._mode.__exit__(*exc)
        finally:
            torch.Tensor.cuda = self._original
            torch.Tensor.to = self._original_to


def _indexed(value):
    if isinstance(value, str) and value == "cuda":
        return torch.device("cuda", 0)
    if isinstance(value, torch.device) and value.type == "cuda" and value.index is None:
        return torch.device("cuda", 0)
    return value


def _exact_result(value, depth: int = 0):
    """`result` as JSON that two runs can compare for equality: tensors with their dtype, device,
    shape, `requires_grad` and values (none for a fake tensor); numbers, strings, None; tuples,
    lists and dicts of them; any other object by its type's name."""
    if depth > 8:
        return {"object": "too deep"}
    if isinstance(value, torch.Tensor):
        described = {"tensor": str(value.dtype), "device": str(value.device), "shape": list(value.shape),
                     "requires_grad": value.requires_grad}  # fmt: skip
        if not _is_fake(value):
            plain = value.detach().to("cpu")
            if plain.is_complex():
                plain = torch.view_as_real(plain)
            described["values"] = plain.tolist() if plain.numel() <= MAX_RESULT_ELEMENTS else "too large"
        return described
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [_exact_result(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[repr(k), _exact_result(v, depth + 1)] for k, v in value.items()]}
    return {"object": type(value).__qualname__}


def _is_fake(tensor) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(tensor, FakeTensor) or tensor.device.type == "meta"


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
    report = probe() if job.get("probe") else outcome(job) if job.get("outcome") else measure(job)
    with open(job["report"], "w") as handle:
        json.dump(report, handle)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: nothing of the fixture's needs cleaning up
