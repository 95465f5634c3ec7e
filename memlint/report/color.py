"""Whether to colour the report: `--color auto|always|never`, then the environment conventions of
no-color.org (`NO_COLOR` set and not empty: no colour) and force-color.org (`FORCE_COLOR` set and
not empty: colour), then whether the output is a terminal. `--color` beats both variables; when
both are set, NO_COLOR wins (asking for no colour is the safer reading)."""

from __future__ import annotations

import os
from typing import Mapping, Optional, TextIO

CHOICES = ("auto", "always", "never")


def use_color(choice: str, stream: Optional[TextIO], environ: Mapping[str, str] = os.environ) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()
