"""`--plot DIR`: one PNG per fixture of live tensor memory over time, before and after."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Sequence

from memlint.confirm.runner import Measurement


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def write_plots(measurements: Sequence[Measurement], directory: Path) -> list[tuple[Path, Optional[str]]]:
    """Each plot's path, with None when it was written, else why not (a symbolic link or a FIFO at
    its name is never written through: memlint/pipeline/writing.py)."""
    import io

    import matplotlib

    from memlint.pipeline.writing import write_output

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for m in measurements:
        curves = [(label, r.get("timeline")) for label, r in (("before", m.before), ("after", m.after)) if r]
        curves = [(label, points) for label, points in curves if points]
        if not curves:
            continue
        figure, axes = plt.subplots(figsize=(7, 3.5))
        for label, points in curves:
            axes.plot([p / 2**20 for p in points], label=label)
        axes.set_xlabel("operator (sampled)")
        axes.set_ylabel("live tensor memory (MiB)")
        axes.set_title(f"{m.fixture.display} ({m.device})")
        axes.legend()
        figure.tight_layout()
        target = directory / (re.sub(r"[^A-Za-z0-9_.-]", "_", Path(m.fixture.display).stem) + ".png")
        image = io.BytesIO()
        figure.savefig(image, format="png", dpi=100)
        plt.close(figure)
        try:
            write_output(target, image.getvalue())
        except OSError as error:
            written.append((target, str(error.strerror or error)))
        else:
            written.append((target, None))
    return written
