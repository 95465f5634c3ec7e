"""The result cache: a file's findings stored under a digest of everything that decides them.

The key covers the file's bytes, the name it is reported under, the effective configuration
(`Settings.fingerprint()`, which includes memlint's version) and a stamp of the code that produced
the findings (memlint's and the rules' source files, libcst's installed files), so any change to
any of them is a miss.  Only lint results are cached, never runs that fix.  An entry that cannot be
read or does not decode is a miss; entries are written to a temporary file and renamed into place, so
workers writing at the same time never leave a partial entry behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity

DEFAULT_DIRECTORY = ".memlint_cache"
ENVIRONMENT_VARIABLE = "MEMLINT_CACHE_DIR"
FORMAT = "v1"  # bump when the entry layout changes
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by memlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def cache_directory(option: Optional[Path], root: Path) -> Path:
    """--cache-dir, else $MEMLINT_CACHE_DIR, else .memlint_cache in the project root."""
    if option is not None:
        return Path(option)
    from_environment = os.environ.get(ENVIRONMENT_VARIABLE)
    if from_environment:
        return Path(from_environment)
    return root / DEFAULT_DIRECTORY


def open_cache(option: Optional[Path], settings) -> "Cache":
    """The cache a run uses, for these settings (`--cache-dir` given as `option`)."""
    return Cache.open(cache_directory(option, settings.root), settings.fingerprint())


def code_stamp() -> str:
    """A digest of the code that computes findings (memlint, its rules, third-party rule modules,
    libcst's installed files): edits to a rule invalidate the cache even when the version number
    did not change, as during development.  Nothing here imports libcst or a built-in rule module:
    a run answered from the cache (or by the prescreen) never needs them."""
    import memlint
    import memlint.rules
    from memlint.registry import third_party_rules  # loaded by the settings anyway

    parts = _libcst_stamp()
    for package in (memlint, memlint.rules):
        for directory in package.__path__:
            parts.extend(_source_stamps(directory))
    for module in sorted({rule.__module__ for rule in third_party_rules()}):
        path = getattr(sys.modules.get(module), "__file__", None)
        if path and os.path.exists(path):
            stat = os.stat(path)
            parts.append(f"{module}:{stat.st_size}:{stat.st_mtime_ns}")
        else:
            parts.append(module)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _source_stamps(directory: str, prefix: str = "") -> list[str]:
    """`relative/path:size:mtime` of the source and data files under `directory`, sorted."""
    stamps = []
    with os.scandir(directory) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir():
                if entry.name != "__pycache__":
                    stamps.extend(_source_stamps(entry.path, f"{prefix}{entry.name}/"))
            elif entry.name.endswith((".py", ".yaml", ".yml", ".json", ".toml")):
                stat = entry.stat()
                stamps.append(f"{prefix}{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return stamps


def _libcst_stamp() -> list[str]:
    """Name, size and mtime of the files at the top of the installed libcst package (its version
    file and native parser among them), found without importing it; an upgrade rewrites them."""
    from importlib.util import find_spec

    spec = find_spec("libcst")
    directories = spec.submodule_search_locations if spec is not None else None
    parts = ["libcst"]
    for directory in directories or ():
        with os.scandir(directory) as entries:
            for entry in sorted((e for e in entries if e.is_file()), key=lambda e: e.name):
                stat = entry.stat()
                parts.append(f"libcst/{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return parts


@dataclass(frozen=True)
class Cache:
    """Picklable, so that worker processes read and write entries themselves."""

    directory: Path
    salt: str  # settings fingerprint + code stamp

    @classmethod
    def open(cls, directory: Path, settings_fingerprint: str) -> "Cache":
        return cls(Path(directory), hashlib.sha256(f"{settings_fingerprint}\n{code_stamp()}".encode()).hexdigest())

    def key(self, data: bytes, filename: str) -> str:
        digest = hashlib.sha256()
        digest.update(self.salt.encode())
        digest.update(b"\0" + filename.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / FORMAT / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[list[Diagnostic]]:
        try:
            with open(self._path(key), "rb") as handle:
                entry = json.loads(handle.read())
            return [_decode(item) for item in entry["diagnostics"]]
        except Exception:  # missing, unreadable, truncated or from another layout: recompute
            return None

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        """Store an entry; a cache that cannot be written only costs speed, never the run."""
        import tempfile  # only runs that write entries need it

        path = self._path(key)
        try:
            self.prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = json.dumps({"diagnostics": [_encode(d) for d in diagnostics]}, separators=(",", ":"))
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(payload)
                os.replace(temporary, path)
            except BaseException:
                _remove_quietly(temporary)
                raise
        except OSError:
            pass

    def prepare(self) -> None:
        """Create the directory with its CACHEDIR.TAG and a .gitignore that ignores everything."""
        if (self.directory / ".gitignore").exists():
            return
        import tempfile

        self.directory.mkdir(parents=True, exist_ok=True)
        for name, content in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# Created by memlint.\n*\n")):
            target = self.directory / name
            if not target.exists():
                handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(content)
                os.replace(temporary, target)


class NotACache(Exception):
    """`memlint clean` was pointed at something memlint did not create."""


def clean(directory: Path) -> bool:
    """Remove a cache directory; False when there was none.  Refuses a directory that is not
    empty and has no memlint CACHEDIR.TAG (a mistyped --cache-dir must not delete a project)."""
    if not directory.exists() and not directory.is_symlink():
        return False
    if directory.is_symlink() or not directory.is_dir():
        raise NotACache(f"{directory} is not a directory memlint created")
    tag = directory / "CACHEDIR.TAG"
    ours = tag.is_file() and "created by memlint" in tag.read_text(errors="replace")
    if not ours and any(directory.iterdir()):
        raise NotACache(f"{directory} has no memlint CACHEDIR.TAG; not removing it")
    import shutil  # `memlint clean` only

    shutil.rmtree(directory)
    return True


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# ---------------------------------------------------------------------------- entry encoding


def _location(value: Location) -> list[int]:
    return [value.row, value.column]


def _encode(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "message": d.fix.message,
            "applicability": d.fix.applicability.value,
            "edits": [[e.start, e.end, e.content, _location(e.location), _location(e.end_location)] for e in d.fix.edits],
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "severity": d.severity.value,
        "filename": d.filename,
        "location": _location(d.location),
        "end_location": _location(d.end_location),
        "fix": fix,
        "url": d.url,
        "cell": d.cell,
        "frame": [[row, text] for row, text in d.frame],
    }


def _decode(item: dict) -> Diagnostic:
    fix = None
    if item["fix"] is not None:
        raw = item["fix"]
        edits = tuple(
            Edit(int(start), int(end), str(content), Location(*start_at), Location(*end_at))
            for start, end, content, start_at, end_at in raw["edits"]
        )
        fix = Fix(str(raw["message"]), Applicability(raw["applicability"]), edits)
    return Diagnostic(
        code=str(item["code"]),
        name=str(item["name"]),
        message=str(item["message"]),
        severity=Severity(item["severity"]),
        filename=str(item["filename"]),
        location=Location(*item["location"]),
        end_location=Location(*item["end_location"]),
        fix=fix,
        url=item["url"],
        cell=item["cell"],
        frame=tuple((int(row), str(text)) for row, text in item["frame"]),
    )
