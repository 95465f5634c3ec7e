"""Live memory through the simulated step, split by kind, for `memlint estimate --plot`.

The tracker records every change as (entry, bytes, phase) while the step runs; what a storage is
(a gradient, optimizer state) is often known only later (`mark` after backward), so the split is
computed at the end from each entry's final role. torch-free.
"""

from __future__ import annotations

KINDS = ("parameters", "optimizer_state", "gradients", "activations", "temporaries")
MAX_POINTS = 4000
RESIDENT = "model and optimizer state"  # the tracker's phase while they are counted (simulate.py)


def _kind(entry) -> str:
    kind = entry.role or entry.category
    return kind if kind in KINDS else "temporaries"


def build(events: list) -> dict:
    """{"kinds": {kind: [bytes per point]}, "phases": [[first point, phase]...], "peak_index": i}."""
    totals = dict.fromkeys(KINDS, 0)
    points: list[tuple[str, dict]] = []
    for entry, delta, phase in events:
        totals[_kind(entry)] += delta
        if points and phase == RESIDENT and points[-1][0] == RESIDENT:
            points.pop()  # the model and the optimizer state, before the step: one point
        points.append((phase, dict(totals)))
    if len(points) > MAX_POINTS:  # keep each bucket's highest point, so the peak survives
        size = len(points) / MAX_POINTS
        buckets = [points[int(i * size) : max(int((i + 1) * size), int(i * size) + 1)] for i in range(MAX_POINTS)]
        points = [max(bucket, key=lambda point: sum(point[1].values())) for bucket in buckets]
    phases: list[list] = []
    for index, (phase, _) in enumerate(points):
        if phase and (not phases or phases[-1][1] != phase):
            phases.append([index, phase])
    sums = [sum(values.values()) for _, values in points]
    return {
        "kinds": {kind: [values[kind] for _, values in points] for kind in KINDS},
        "phases": phases,
        "peak_index": max(range(len(sums)), key=sums.__getitem__) if sums else 0,
    }
