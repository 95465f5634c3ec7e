"""`github`: GitHub Actions workflow commands, one annotation per finding.

    ::warning file=train.py,line=15,col=5,endLine=15,endColumn=18,title=memlint (ML001)::ML001 ...

Values are escaped as the Actions runner expects: `%`, CR and LF in the message; additionally `:`
and `,` in properties. GitHub only honours columns on single-line annotations, so a finding that
spans lines gets `line`/`endLine` only.

GitHub places an annotation by the file's path from the workspace (`GITHUB_WORKSPACE`, the
checkout); memlint names files from the directory it runs in, which differs when a workflow step (or
the action's `working-directory`) runs it in a subdirectory: inside the workspace, paths are given
from the workspace.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Sequence

from memlint.diagnostics import Diagnostic, Severity
from memlint.report import ReportOptions
from memlint.report.common import located_message

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(filename: str) -> str:
    """The file's path from GITHUB_WORKSPACE when it is inside it; otherwise its name as given."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if not workspace:
        return filename
    for resolve in (os.path.abspath, os.path.realpath):  # a workspace reached through a symlink
        try:
            relative = os.path.relpath(resolve(filename), resolve(workspace))
        except ValueError:  # another drive (Windows)
            continue
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return PurePath(relative).as_posix()
    return filename


def annotation(d: Diagnostic) -> str:
    properties = [("file", workspace_path(d.filename)), ("line", str(d.location.row))]
    if d.location.row == d.end_location.row:
        properties.append(("col", str(d.location.column)))
    properties.append(("endLine", str(d.end_location.row)))
    if d.location.row == d.end_location.row:
        properties.append(("endColumn", str(d.end_location.column)))
    properties.append(("title", f"memlint ({d.code})"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMANDS[d.severity]} {joined}::{escape_data(f'{d.code} {located_message(d)}')}\n"


class GithubReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return "".join(annotation(d) for d in diagnostics)


def reporter(name: str) -> GithubReporter:
    return GithubReporter()
