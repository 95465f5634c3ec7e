"""The result cache: a file's findings stored under a digest of everything that decides them.

The key covers the file's bytes, the name it is reported under, the effective configuration
(`Settings.fingerprint()`, which includes memlint's version) and a stamp of the code that produced
the findings (memlint's and the rules' source files, libcst's installed files), so any change to
any of them is a miss.  Only lint results are cached, never runs that fix.  An entry that cannot be
read or does not decode is a miss; entries are written to a temporary file and renamed into place, so
workers writing at the same time never leave a partial entry behind.

The cache directory is the user's disk, so memlint is careful with it (docs/reliability.md):
- it never adopts a directory it did not create: an existing directory that is neither empty nor
  marked as a memlint cache (our CACHEDIR.TAG and MARKER) is not used, and the run goes on without a
  cache (a cache only costs or saves time; it must never be the reason a lint fails);
- it reads only regular files of bounded size, without following a symbolic link or waiting on a
  FIFO, and treats an entry whose fields have the wrong types as a miss;
- `clean` removes only the names memlint writes and never follows a symbolic link.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from memlint import DOCS_URL_VARIABLE
from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Related, Severity
from memlint.pipeline.reading import read_regular

DEFAULT_DIRECTORY = ".memlint_cache"
ENVIRONMENT_VARIABLE = "MEMLINT_CACHE_DIR"
FORMAT = "v1"  # bump when the entry layout changes
CACHEDIR_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
CACHEDIR_TAG = (
    f"{CACHEDIR_SIGNATURE}\n"
    "# This file is a cache directory tag created by memlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
GITIGNORE = "# Created by memlint.\n*\n"
# The file that says "memlint made this directory": with our CACHEDIR.TAG, it is what lets memlint
# use a non-empty directory as its cache, and what lets `memlint clean` empty it.
MARKER = ".memlint-cache"
MARKER_TEXT = "memlint result cache: `memlint clean` removes it.\n"
ENTRY_LIMIT = 64 * 1024 * 1024  # an entry larger than this is not read (nor written)
_SMALL_FILE_LIMIT = 4096  # the tag, the marker, .gitignore

# The names memlint writes, by level; `clean` removes these and nothing else.  Temporary files come
# from tempfile.mkstemp (random part of [a-z0-9_]); `.tmp-*` are those of memlint before the marker.
_TOP_FILES = re.compile(r"(CACHEDIR\.TAG|\.gitignore|\.memlint-cache|\.(CACHEDIR\.TAG|gitignore|memlint-cache)\.[a-z0-9_]+\.tmp|\.tmp-[a-z0-9_]+)")
_FORMAT_DIRECTORY = re.compile(r"v[0-9]+")
_SHARD_DIRECTORY = re.compile(r"[0-9a-f]{2}")
_ENTRY_FILES = re.compile(r"([0-9a-f]{64}\.json|\.[0-9a-f]{64}\.[a-z0-9_]+\.tmp|\.tmp-[a-z0-9_]+\.json)")


def cache_directory(option: Optional[Path], root: Path) -> Path:
    """--cache-dir, else $MEMLINT_CACHE_DIR, else .memlint_cache in the project root."""
    if option is not None:
        return Path(option)
    from_environment = os.environ.get(ENVIRONMENT_VARIABLE)
    if from_environment:
        return Path(from_environment)
    return root / DEFAULT_DIRECTORY


def open_cache(option: Optional[Path], settings, warn: Callable[[str], None]) -> Optional["Cache"]:
    """The cache a run uses, for these settings (`--cache-dir` given as `option`); None, after one
    warning, when that directory is not one memlint may use."""
    directory = cache_directory(option, settings.root)
    problem = unusable(directory)
    if problem is not None:
        warn(f"not using {directory} as the cache: {problem}; running without a cache (name another --cache-dir, or pass --no-cache)")
        return None
    return Cache.open(directory, settings.fingerprint())


def unusable(directory: Path) -> Optional[str]:
    """Why memlint may not keep its cache in `directory`, or None if it may: the directory does not
    exist yet, is empty, or is a cache memlint made (our tag and marker, or, from memlint versions
    before the marker, our tag with only names memlint writes beside it)."""
    try:
        if not os.path.lexists(directory):
            return None
        if os.path.islink(directory):  # memlint writes through no link it did not make (docs/reliability.md)
            return f"it is a symbolic link (to {os.readlink(directory)})"
        if not os.path.isdir(directory):
            return "it is not a directory"
        empty = not os.listdir(directory)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    if empty or _is_marked(directory) or (_is_ours(directory, "CACHEDIR.TAG") and _only_our_names(directory)):
        return None
    return "it is not empty and memlint did not create it"


def _only_our_names(directory: Path) -> bool:
    """Does `directory` hold nothing but names memlint writes at the top of its cache?"""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return all(_TOP_FILES.fullmatch(name) or _FORMAT_DIRECTORY.fullmatch(name) for name in names)


_IDENTITY = (".gitignore", "CACHEDIR.TAG", MARKER)  # the order `clean` removes them in


def _is_ours(directory: Path, name: str) -> bool:
    """Is `directory/name` (one of _IDENTITY) a regular file with the content memlint writes?"""
    content = read_regular_file(directory / name, _SMALL_FILE_LIMIT)
    if content is None:
        return False
    text = content.decode("utf-8", "replace")
    if name == "CACHEDIR.TAG":
        return text.startswith(CACHEDIR_SIGNATURE) and "created by memlint" in text
    return text == (MARKER_TEXT if name == MARKER else GITIGNORE)


def _is_marked(directory: Path) -> bool:
    return _is_ours(directory, MARKER) and _is_ours(directory, "CACHEDIR.TAG")


def read_regular_file(path: Path, limit: int) -> Optional[bytes]:
    """The bytes of `path` if it is a regular file of at most `limit` bytes, else None (also when it
    cannot be read).  A symbolic link is not followed (an entry linked to /dev/zero would be read
    forever), and a FIFO is never opened for a blocking read (it would wait for a writer forever)."""
    try:
        return read_regular(path, limit, follow_links=False)
    except OSError:  # absent, unreadable, not a regular file (ReadRefused) or too large: a miss
        return None


def code_stamp() -> str:
    """A digest of the code that computes findings (memlint, its rules, third-party rule modules,
    libcst's installed files): edits to a rule invalidate the cache even when the version number
    did not change, as during development.  Nothing here imports libcst or a built-in rule module:
    a run answered from the cache (or by the prescreen) never needs them."""
    import memlint
    import memlint.rules
    from memlint.pipeline.registry import third_party_rules  # loaded by the settings anyway

    parts = _libcst_stamp()
    for package in (memlint, memlint.rules):
        for directory in package.__path__:
            parts.extend(_source_stamps(directory))
    for module in sorted({rule.__module__ for rule in third_party_rules()}):
        path = getattr(sys.modules.get(module), "__file__", None)
        if path and os.path.exists(path):
            status = os.stat(path)
            parts.append(f"{module}:{status.st_size}:{status.st_mtime_ns}")
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
                status = entry.stat()
                stamps.append(f"{prefix}{entry.name}:{status.st_size}:{status.st_mtime_ns}")
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
                status = entry.stat()
                parts.append(f"libcst/{entry.name}:{status.st_size}:{status.st_mtime_ns}")
    return parts


@dataclass(frozen=True)
class Cache:
    """Picklable, so that worker processes read and write entries themselves."""

    directory: Path
    salt: str  # settings fingerprint + code stamp

    @classmethod
    def open(cls, directory: Path, settings_fingerprint: str) -> "Cache":
        # the help links findings carry come from the environment (memlint.rule.rule_url)
        links = os.environ.get(DOCS_URL_VARIABLE, "")
        return cls(Path(directory), hashlib.sha256(f"{settings_fingerprint}\n{code_stamp()}\n{links}".encode()).hexdigest())

    def key(self, data: bytes, filename: str, facts: str = "") -> str:
        """The key of a file's findings: its bytes, its name and the digest of the project facts
        its findings depend on (memlint.pipeline.project.FileView.digest)."""
        return self.key_for(content_digest(data), filename, facts)

    def key_for(self, content: str, filename: str, facts: str = "", kind: str = "findings") -> str:
        """As `key`, from the bytes' `content_digest`; `kind` "summary" for a file's summary entry."""
        digest = hashlib.sha256()
        digest.update(f"{self.salt}\0{kind}\0{content}\0{facts}\0".encode())
        digest.update(filename.encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / FORMAT / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[list[Diagnostic]]:
        data = read_regular_file(self._path(key), ENTRY_LIMIT)
        if data is None:  # missing, unreadable, too large, or not a regular file: recompute
            return None
        try:
            entry = json.loads(data)
            if not isinstance(entry, dict) or not isinstance(entry.get("diagnostics"), list):
                return None
            return [_decode(item) for item in entry["diagnostics"]]
        except Exception:  # truncated, from another layout, or crafted with fields of the wrong types
            return None

    def get_summary(self, key: str) -> Optional[dict]:
        """A stored summary entry ({"summary": ..., "screened": ..., "rules": ...}, memlint/pipeline/prepare.py), checked
        field by field: what it holds goes into the project pass, so a damaged or crafted entry must
        be a miss, not a crash there."""
        from memlint.analysis.summaries import is_valid

        data = read_regular_file(self._path(key), ENTRY_LIMIT)
        if data is None:
            return None
        try:
            entry = json.loads(data)
        except Exception:
            return None
        if not isinstance(entry, dict) or set(entry) != {"summary", "screened", "rules"}:
            return None
        if not (entry["screened"] is None or type(entry["screened"]) is bool):
            return None
        rules = entry["rules"]
        if not (rules is None or (type(rules) is list and all(type(code) is str for code in rules))):
            return None
        if not (entry["summary"] is None or is_valid(entry["summary"])):
            return None
        return entry

    def put_summary(self, key: str, entry: dict) -> None:
        self._store(key, json.dumps(entry, separators=(",", ":")))

    def get_pass(self, key: str) -> Optional[list]:
        """A stored project pass ({"files": [[screened, view, rules], ...]}, memlint/pipeline/prepare.py): the
        list, whose items the caller checks (memlint.pipeline.project.FileView.from_data)."""
        data = read_regular_file(self._path(key), ENTRY_LIMIT)
        if data is None:
            return None
        try:
            entry = json.loads(data)
        except Exception:
            return None
        if not isinstance(entry, dict) or set(entry) != {"files"} or type(entry["files"]) is not list:
            return None
        if not all(type(item) is list and len(item) == 3 for item in entry["files"]):
            return None
        return entry["files"]

    def put_pass(self, key: str, entry: dict) -> None:
        self._store(key, json.dumps(entry, separators=(",", ":")))

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        """Store an entry; a cache that cannot be written only costs speed, never the run."""
        self._store(key, json.dumps({"diagnostics": [_encode(d) for d in diagnostics]}, separators=(",", ":")))

    def _store(self, key: str, payload: str) -> None:
        path = self._path(key)
        try:
            if not self.prepare():
                return
            if len(payload) > ENTRY_LIMIT:  # it would never be read back
                return
            if _through_a_link(path):
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            if _through_a_link(path):
                return
            _write_atomically(path, f".{key}.", payload)
        except OSError:
            pass

    def prepare(self) -> bool:
        """Make the directory memlint's cache: the marker first, then CACHEDIR.TAG and a .gitignore
        that ignores everything.  False, writing nothing, when it holds anything else (`open_cache`
        checked the directory before the run; this is for what appeared since).  Names memlint
        writes are accepted without the tag: workers starting together see each other's
        temporary files while the first of them writes the marker."""
        if os.path.islink(self.directory):  # made a link since `open_cache` looked
            return False
        if stat.S_ISREG(_lstat_mode(self.directory / MARKER)):
            return True
        if os.path.lexists(self.directory) and not (os.path.isdir(self.directory) and _only_our_names(self.directory)):
            return False
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, content in ((MARKER, MARKER_TEXT), ("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", GITIGNORE)):
            target = self.directory / name
            if not os.path.lexists(target):
                _write_atomically(target, f".{name.lstrip('.')}.", content)
        return True


def _write_atomically(target: Path, prefix: str, text: str) -> None:
    """Write `text` to `target` through a temporary file beside it (`<prefix><random>.tmp`, the
    names `_only_our_names` accepts) renamed over it: a reader, or a worker writing the same entry,
    sees the whole old file or the whole new one, never a part; the temporary goes on any failure."""
    import tempfile  # only runs that write entries need it

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException:
        _remove_quietly(temporary)
        raise


def _through_a_link(entry: Path) -> bool:
    """Is the entry's format or shard directory a symbolic link (a committed cache can hold one)?
    Nothing is created or written through it."""
    return os.path.islink(entry.parent.parent) or os.path.islink(entry.parent)


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


class NotACache(Exception):
    """`memlint clean` was pointed at something memlint did not create."""


@dataclass
class Cleaned:
    """What `clean` did: how many of memlint's files it removed, whether the directory itself went
    (only when nothing else was left in it) and what it left there because memlint did not write it."""

    removed: int = 0
    directory_removed: bool = False
    kept: list[str] = field(default_factory=list)


def clean(directory: Path) -> Optional[Cleaned]:
    """Remove memlint's cache from `directory`: the entries, the marker, the tag and the .gitignore
    memlint wrote, then the directory if nothing else is left; None when there is no such directory.
    Only those names are removed, never other files, and no symbolic link is followed (a link is
    left where it is).  Refuses a directory that is not empty and has neither our tag nor our marker:
    a mistyped --cache-dir must not touch a project."""
    if not os.path.lexists(directory):
        return None
    if os.path.islink(directory):
        raise NotACache(f"{directory} is a symbolic link; memlint clean does not follow it (name the directory it points to)")
    if not os.path.isdir(directory):
        raise NotACache(f"{directory} is not a directory memlint created")
    if os.listdir(directory) and not (_is_ours(directory, MARKER) or _is_ours(directory, "CACHEDIR.TAG")):
        raise NotACache(f"{directory} has no memlint CACHEDIR.TAG; not removing anything from it")
    result = Cleaned()
    for entry in _scan(directory):
        if entry.name in _IDENTITY:
            continue  # last, below
        if _FORMAT_DIRECTORY.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            _clean_format_directory(Path(entry.path), result)
        elif _TOP_FILES.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            _remove_file(entry.path, result)
        else:
            result.kept.append(entry.name)
    # The files that say "this is memlint's cache" go last, so that an interrupted clean can be run
    # again; each only when it is memlint's (a .gitignore of the user's stays).
    for name in _IDENTITY:
        if not os.path.lexists(directory / name):
            continue
        if _is_ours(directory, name):
            _remove_file(str(directory / name), result)
        else:
            result.kept.append(name)
    result.kept.sort()
    if not result.kept and not os.listdir(directory):
        os.rmdir(os.path.abspath(directory))  # abspath: `--cache-dir .` cannot be removed by that name
        result.directory_removed = True
    return result


def _scan(directory: Path) -> list[os.DirEntry]:
    with os.scandir(directory) as entries:
        return sorted(entries, key=lambda entry: entry.name)


def _clean_format_directory(directory: Path, result: Cleaned) -> None:
    for shard in _scan(directory):
        relative = f"{directory.name}/{shard.name}"
        if not (_SHARD_DIRECTORY.fullmatch(shard.name) and shard.is_dir(follow_symlinks=False)):
            result.kept.append(relative)
            continue
        for entry in _scan(Path(shard.path)):
            if _ENTRY_FILES.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                _remove_file(entry.path, result)
            else:
                result.kept.append(f"{relative}/{entry.name}")
        _remove_empty_directory(shard.path)
    _remove_empty_directory(str(directory))


def _remove_file(path: str, result: Cleaned) -> None:
    os.unlink(path)
    result.removed += 1


def _remove_empty_directory(path: str) -> None:
    if not os.listdir(path):
        os.rmdir(path)


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
        "related": [[r.message, _location(r.location), _location(r.end_location), r.cell] for r in d.related],
    }


def _decode(item: dict) -> Diagnostic:
    """The Diagnostic an entry stores; ValueError when a field is missing or has the wrong type (an
    entry written by hand must be a miss here, not a TypeError later when findings are sorted)."""
    fix = None
    if _field(item, "fix", (dict, type(None))) is not None:
        raw = item["fix"]
        edits = []
        for edit in _field(raw, "edits", list):
            if not isinstance(edit, list) or len(edit) != 5:
                raise ValueError("an edit is not a list of five fields")
            start, end, content, start_at, end_at = edit
            edits.append(Edit(_count(start), _count(end), _text(content), _decode_location(start_at), _decode_location(end_at)))
        fix = Fix(_text(_field(raw, "message", str)), Applicability(_field(raw, "applicability", str)), tuple(edits))
    frame = []
    for line in _field(item, "frame", list):
        if not isinstance(line, list) or len(line) != 2:
            raise ValueError("a frame line is not a [row, text] pair")
        frame.append((_count(line[0]), _text(line[1])))
    cell = _field(item, "cell", (int, type(None)))
    related = []
    for entry in _field(item, "related", list):
        if not isinstance(entry, list) or len(entry) != 4 or not isinstance(entry[3], (int, type(None))):
            raise ValueError("a related place is not [message, location, end, cell]")
        message, start_at, end_at, in_cell = entry
        related.append(Related(_text(message), _decode_location(start_at), _decode_location(end_at),
                               None if in_cell is None else _count(in_cell)))  # fmt: skip
    return Diagnostic(
        code=_field(item, "code", str),
        name=_field(item, "name", str),
        message=_field(item, "message", str),
        severity=Severity(_field(item, "severity", str)),
        filename=_field(item, "filename", str),
        location=_decode_location(_field(item, "location", list)),
        end_location=_decode_location(_field(item, "end_location", list)),
        fix=fix,
        url=_field(item, "url", (str, type(None))),
        cell=None if cell is None else _count(cell),
        frame=tuple(frame),
        related=tuple(related),
    )


def _field(record, name: str, types):
    if not isinstance(record, dict) or name not in record:
        raise ValueError(f"no field {name!r}")
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, types):  # JSON's true is not a number here
        raise ValueError(f"field {name!r} has the wrong type")
    return value


def _count(value) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("not a count")
    return value


def _text(value) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def _decode_location(value) -> Location:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError("a location is not a [row, column] pair")
    return Location(_count(value[0]), _count(value[1]))
