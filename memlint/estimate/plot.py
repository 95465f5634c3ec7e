"""`memlint estimate --plot FILE`: live memory through the simulated step, stacked by kind, with
the phases (forward, backward, optimizer step), the peak and the budget marked. The same style as
`memlint confirm --plot` (memlint/confirm/plot.py); matplotlib is the `plot` extra."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Optional

from memlint.pipeline.writing import write_output
from memlint.units import format_bytes

COLOURS = {
    "parameters": "#4c72b0",
    "optimizer_state": "#8172b2",
    "gradients": "#dd8452",
    "activations": "#55a868",
    "temporaries": "#c44e52",
}


def write_plot(result: dict, timeline: dict, target: Path) -> Path:
    """Draw `timeline` (memlint.estimate.timeline.build) for the estimate `result` into `target`."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    kinds = timeline["kinds"]
    points = len(next(iter(kinds.values()), []))
    mib = 2**20
    figure, axes = plt.subplots(figsize=(9, 4.5))
    x = list(range(points))
    axes.stackplot(
        x, *[[v / mib for v in kinds[kind]] for kind in COLOURS],
        labels=[kind.replace("_", " ") for kind in COLOURS], colors=list(COLOURS.values()), alpha=0.85,
    )  # fmt: skip
    top = result["peak_bytes"]
    for start, phase in timeline["phases"][1:]:  # the first is the model and the optimizer state
        axes.axvline(start, color="grey", linewidth=0.6, linestyle=":")
        axes.text(start, 0, f" {phase}", rotation=90, va="bottom", ha="left", fontsize=7, color="dimgrey")
    peak_at = timeline["peak_index"]
    axes.plot([peak_at], [top / mib], marker="v", color="black")
    axes.annotate(
        f"peak {format_bytes(top)} ({result.get('peak_phase') or '?'})", (peak_at, top / mib),
        textcoords="offset points", xytext=(4, 6), fontsize=8,
    )  # fmt: skip
    budget: Optional[int] = result.get("budget_bytes")
    if budget:
        axes.axhline(budget / mib, color="black", linestyle="--", linewidth=1)
        axes.text(points - 1, budget / mib, f"budget {format_bytes(budget)} ", va="bottom", ha="right", fontsize=8)
        usable = budget - result["reserve_bytes"]
        if 0 < usable < budget:
            axes.axhline(usable / mib, color="black", linestyle=":", linewidth=1)
            axes.text(points - 1, usable / mib, f"budget less the {format_bytes(result['reserve_bytes'])} reserve ", va="top", ha="right", fontsize=7)
        top = max(top, budget)
    axes.set_ylim(0, top / mib * 1.12)
    axes.set_xlim(0, max(points - 1, 1))
    axes.set_xlabel("operator (sampled), through the simulated step")
    axes.set_ylabel("live tensor memory (MiB)")
    config = result["config"]
    axes.set_title(f"{Path(result['model'].rsplit(':', 1)[0]).name}:{result['model'].rsplit(':', 1)[-1]} ({config['optimizer']}, {config['dtype']}, --step {config['step']})", fontsize=9)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=100)
    plt.close(figure)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_output(target, image.getvalue())  # atomically, never through a symlink (OSError otherwise)
    return target
