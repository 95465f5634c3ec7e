"""The top-level module names of Python's standard library (`io`, `os`, `json`, ...).

Python 3.10+ lists them as `sys.stdlib_module_names`.  On 3.9 (the oldest Python memlint runs on)
the list is read once from the interpreter's own standard library folder and `lib-dynload`, with
the modules built into it: the same names for every module that ships with CPython there.
"""

from __future__ import annotations

import os
import sys
import sysconfig


def _listed_on_disk() -> frozenset[str]:
    names = set(sys.builtin_module_names)
    stdlib = sysconfig.get_paths()["stdlib"]
    for folder in (stdlib, os.path.join(stdlib, "lib-dynload")):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry == "site-packages" or entry.startswith("."):
                continue
            if entry.endswith(".py"):
                names.add(entry[: -len(".py")])
            elif "." in entry and entry.rsplit(".", 1)[1] in ("so", "pyd"):
                names.add(entry.split(".", 1)[0])  # `_ssl.cpython-39-x86_64-linux-gnu.so`
            elif os.path.isdir(os.path.join(folder, entry)) and entry.isidentifier():
                names.add(entry)
    return frozenset(names)


STDLIB_MODULE_NAMES: frozenset[str] = frozenset(getattr(sys, "stdlib_module_names", ())) or _listed_on_disk()
