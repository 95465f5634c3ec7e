"""`memlint confirm` reports: a text table, markdown (docs/measured-savings.md) and JSON."""

from __future__ import annotations

import json
from typing import Optional, Sequence

from memlint.confirm.runner import Measurement
from memlint.units import format_bytes

PUBLIC_KEYS = (
    "ok", "error", "peak_bytes", "peak_bytes_rounded", "peak_bytes_requested", "baseline_bytes", "seconds",
    "cpu_seconds", "method", "gpu", "host_growth_per_step", "backward_calls", "other_devices",
)  # fmt: skip

# What the numbers can and cannot show, printed under them.
LIMITS = {
    "cpu": (
        "CPU peaks: live tensor storage, counted by a TorchDispatchMode. Two limits: running under a "
        "dispatch mode can change what an operator does (nn.Linear on a non-contiguous 3-D input adds "
        "its bias out of place), and scratch a kernel allocates and frees inside itself (oneDNN, MKL) "
        "is not seen."
    ),
    "cuda": (
        "CUDA peaks: torch.cuda.max_memory_allocated() after a warm-up run, baseline subtracted; the "
        "CUDA context and the allocator's reserved-but-unused memory are not included."
    ),
    "host": (
        "host/step: growth of the C heap in use (glibc mallinfo2) per backward pass, the median "
        "after the first quarter of them (needs at least 4 backward calls): the autograd graphs an accumulator keeps live there."
    ),
}


def _side(report: Optional[dict]) -> Optional[dict]:
    if report is None:
        return None
    return {k: report[k] for k in PUBLIC_KEYS if k in report}


def as_json(measurements: Sequence[Measurement]) -> str:
    rows = []
    for m in measurements:
        rows.append(
            {
                "fixture": m.fixture.display,
                "codes": m.fixture.codes,
                "device": m.device,
                "torch": m.torch_version,
                "after_source": m.fixture.after_source,
                "before": _side(m.before),
                "after": _side(m.after) if m.after is not None else _side(m.before) if m.before.get("ok") else None,
                "saved_bytes": m.saved_bytes,
                "saved_fraction": None if m.saved_fraction is None else round(m.saved_fraction, 6),
                "equivalent": m.equivalent,
                "note": m.note,
            }
        )
    return json.dumps(rows, indent=2) + "\n"


def _peak(report: Optional[dict], rounded: bool = False) -> str:
    if report is None:
        return "—"
    if not report.get("ok"):
        return "error"
    value = report.get("peak_bytes_rounded" if rounded else "peak_bytes")
    return "—" if value is None else f"{value:,}"


def _saved(m: Measurement) -> str:
    if m.saved_bytes is None:
        return "—"
    return f"{format_bytes(m.saved_bytes)} ({m.saved_fraction:.1%})" if m.saved_fraction is not None else format_bytes(m.saved_bytes)


def _host(m: Measurement) -> str:
    """'+5,449 → +2' bytes of host growth per backward, before and after; '—' when not measured."""
    sides = [r.get("host_growth_per_step") if r and r.get("ok") else None for r in (m.before, m.after)]
    if sides[0] is None:
        return "—"
    shown = [f"{v:+,.0f}" if v is not None else "—" for v in sides]
    return shown[0] if m.after is None else f"{shown[0]} → {shown[1]}"


def _notes(measurements: Sequence[Measurement]) -> list[str]:
    lines = []
    for m in measurements:
        if m.note and m.note != "memlint changes nothing here":
            lines.append(f"{m.fixture.display}: {m.note}")
        for label, report in (("before", m.before), ("after", m.after)):
            for device, nbytes in ((report or {}).get("other_devices") or {}).items():
                lines.append(f"{m.fixture.display} ({label}): also put {nbytes:,} B of tensors on {device}, not measured")
    return lines


def _limits(measurements: Sequence[Measurement]) -> list[str]:
    devices = {m.device for m in measurements}
    shown = [LIMITS[d] for d in ("cpu", "cuda") if d in devices]
    if any(_host(m) != "—" for m in measurements):
        shown.append(LIMITS["host"])
    return shown


def _equivalent(m: Measurement) -> str:
    return {True: "yes", False: "NO", None: "—"}[m.equivalent]


def _errors(measurements: Sequence[Measurement]) -> list[str]:
    lines = []
    for m in measurements:
        for label, report in (("before", m.before), ("after", m.after)):
            if report is not None and not report.get("ok"):
                lines.append(f"{m.fixture.display} ({label}): {report.get('error', 'failed')}")
    return lines


def _rows(measurements: Sequence[Measurement]) -> list[list[str]]:
    rows = []
    for m in measurements:
        after = m.after if m.after is not None else None
        rows.append(
            [
                m.fixture.display,
                ",".join(m.fixture.codes) or "—",
                m.device,
                _peak(m.before),
                _peak(after) if after is not None else ("same" if m.before.get("ok") else "—"),
                _saved(m),
                _host(m),
                _equivalent(m),
                {"after-file": ".after.py", "memlint-fix": "memlint fix", "none": "none"}[m.fixture.after_source],
            ]
        )
    return rows


HEADER = ["fixture", "codes", "device", "before (B)", "after (B)", "saved", "host/step (B)", "same result", "after variant"]


def as_text(measurements: Sequence[Measurement]) -> str:
    rows = [HEADER, *_rows(measurements)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    numeric = {3, 4}
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.rjust(w) if i in numeric and index else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    errors = _errors(measurements)
    if errors:
        lines += ["", "Failures:", *(f"  {e}" for e in errors)]
    notes = _notes(measurements)
    if notes:
        lines += ["", "Notes:", *(f"  {n}" for n in notes)]
    for text in _limits(measurements):
        lines += ["", text]
    return "\n".join(lines) + "\n"


def as_markdown(measurements: Sequence[Measurement], command: str = "memlint confirm --output-format markdown") -> str:
    devices = sorted({m.device for m in measurements})
    versions = sorted({m.torch_version for m in measurements if m.torch_version})
    gpus = sorted({m.before.get("gpu") for m in measurements if m.before.get("gpu")})
    lines = [
        "# Measured savings of memlint's fixes",
        "",
        f"Generated by `{command}`; edit the fixtures, not this file.",
        "",
        f"Device: {', '.join(devices) or 'n/a'}{' (' + ', '.join(gpus) + ')' if gpus else ''}; "
        f"PyTorch {', '.join(versions) or 'n/a'}.",
        "",
        "Each fixture runs twice, each time in a fresh process: as written (before) and after memlint's",
        "fixes (safe and unsafe, applied to a temporary copy) or, for rules without an automatic fix,",
        "as its hand-written `<name>.after.py`. Peaks are of the whole script, model and data included.",
        "\"same result\" compares the scripts' `result` (relative tolerance 1e-5); \"—\" means the",
        "fixture sets none (the change alters the model or the optimizer by design).",
        "",
    ]
    if "cpu" in devices:
        lines += [
            "CPU peaks come from the exact tensor-storage tracker (every storage counted once, from the",
            "operator that creates it until it is freed); the 512-rounded columns round each storage up",
            "to a multiple of 512 bytes as CUDA's caching allocator does: that is the figure to compare",
            "with `torch.cuda.max_memory_allocated()`. Memory made without an operator (`torch.from_numpy`,",
            "storages unpickled by `torch.load`) is counted only once an operator returns it or a view of it.",
            "",
        ]
    header = [
        "fixture", "codes", "before (B)", "after (B)", "before, 512-rounded (B)", "after, 512-rounded (B)", "saved",
        "host/step (B)", "same result", "after variant",
    ]  # fmt: skip
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for m, row in zip(measurements, _rows(measurements)):
        after = m.after if m.after is not None else (m.before if m.before.get("ok") else None)
        cells = [f"`{row[0]}`", row[1], row[3], row[4], _peak(m.before, True), _peak(after, True), row[5], row[6], row[7], row[8]]
        lines.append("| " + " | ".join(cells) + " |")
    errors = _errors(measurements)
    if errors:
        lines += ["", "Failures:", "", *(f"- {e}" for e in errors)]
    notes = _notes(measurements)
    if notes:
        lines += ["", "Notes:", "", *(f"- {n}" for n in notes)]
    for text in _limits(measurements):
        lines += ["", text]
    if "cuda" not in devices:
        lines += [
            "",
            "## CUDA",
            "",
            "This run measured on CPU only, so there are no CUDA figures beside these. On a machine with",
            "a GPU, `memlint confirm fixtures --device cuda --default-device --output-format markdown`",
            "gives the CUDA table (`max_memory_allocated` after a warm-up run, baseline subtracted) to",
            "compare with the 512-rounded columns; the fixtures never choose a device, so",
            "`--default-device` puts them on the GPU. Expect one honest difference: `.cpu()` is a no-op on",
            "CPU, so fixtures whose fix moves tensors to the host (ML014) save nothing here and device",
            "memory on CUDA.",
        ]
    summaries = [(m.fixture.display, m.fixture.summary) for m in measurements if m.fixture.summary]
    if summaries:
        lines += ["", "## What each fixture shows", ""]
        lines += [f"- `{display}`: {summary}" for display, summary in summaries]
    return "\n".join(lines) + "\n"


RENDERERS = {"text": as_text, "json": as_json, "markdown": as_markdown}
