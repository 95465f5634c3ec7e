"""Byte sizes as people write them ("24GiB", "80GB") and as memlint prints them."""

from __future__ import annotations

import re

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
}  # fmt: skip
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value: object) -> int:
    """Bytes from an int or a string such as "16GiB", "80GB", "512 MiB"; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as \"24GiB\" or \"80GB\"")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("a size must be positive")
        return value
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match and match.group(2).lower() in _UNITS:
            size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
            if size > 0:
                return size
    raise ValueError(f"expected a size such as \"24GiB\" or \"80GB\", got {value!r}")


def format_bytes(size: float) -> str:
    """1.53 GiB, 392 MiB, 12.0 KiB, 100 B."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(size) >= scale:
            value = size / scale
            return f"{value:.2f} {unit}" if value < 10 else f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{int(size)} B"


# What parse_size accepts, as JSON Schema (docs/memlint.schema.json).
parse_size.json_schema = {  # type: ignore[attr-defined]
    "anyOf": [{"type": "string", "description": 'a size such as "24GiB" or "80GB"'}, {"type": "integer", "minimum": 0}]
}
