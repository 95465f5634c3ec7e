"""Settings the editor gives the server, over the workspace's configuration files: what a user sets
in the editor rather than in `pyproject.toml`, as Ruff's server reads `ruff.lint.select` & co.

They come in `initializationOptions` and again in `workspace/didChangeConfiguration`, either as the
keys themselves or under a `memlint` (or `settings`) key, which is how most clients nest a server's
section:

    {"memlint": {"select": ["ML001"], "extendSelect": [], "ignore": ["ML003"],
                 "configuration": "tools/memlint.toml", "unsafeFixes": false}}

They act as the command line's options do: `select`, `extendSelect` and `ignore` over every file's
closest configuration, `configuration` one file for every document (relative to the workspace root),
`unsafeFixes` for the quick fixes offered.  A key with a value of the wrong type is reported and
left out, so that one mistake in an editor's settings does not silence the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

_CODE_LISTS = {"select": "select", "extendSelect": "extend_select", "ignore": "ignore"}
_KNOWN = {*_CODE_LISTS, "configuration", "unsafeFixes"}


@dataclass(frozen=True)
class ClientSettings:
    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    configuration: Optional[Path] = None
    unsafe_fixes: Optional[bool] = None


def read(options: Any, root: Optional[Path]) -> tuple[ClientSettings, list[str]]:
    """The settings in `options` (as the client sent them), and a message for each key left out.
    `root`: the workspace's root, for a relative `configuration`."""
    section = _section(options)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in section.items():
        if key in _CODE_LISTS:
            if isinstance(value, list) and all(isinstance(code, str) for code in value):
                values[_CODE_LISTS[key]] = tuple(value)
            elif value is not None:
                problems.append(f"setting `{key}` must be a list of rule codes, not {value!r}")
        elif key == "configuration":
            if isinstance(value, str) and value:
                path = Path(value).expanduser()
                values["configuration"] = path if path.is_absolute() or root is None else root / path
            elif value is not None:
                problems.append(f"setting `configuration` must be the path of a memlint.toml or pyproject.toml, not {value!r}")
        elif key == "unsafeFixes":
            if isinstance(value, bool):
                values["unsafe_fixes"] = value
            elif value is not None:
                problems.append(f"setting `unsafeFixes` must be true or false, not {value!r}")
        else:
            problems.append(f"unknown setting `{key}` (memlint's are {', '.join(sorted(_KNOWN))})")
    return ClientSettings(**values), problems


def _section(options: Any) -> dict:
    """memlint's part of what the client sent: the value under `memlint` or `settings`, or the
    options themselves when they hold memlint's keys."""
    if not isinstance(options, dict):
        return {}
    for name in ("memlint", "settings"):
        nested = options.get(name)
        if isinstance(nested, dict):
            return _section(nested) if name == "settings" and "memlint" in nested else nested
    return options if _KNOWN & options.keys() else {}  # another server's settings, or none
