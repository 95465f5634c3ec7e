"""Loading `PATH.py:NAME` targets for `memlint estimate` (the file is imported as a module)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Callable


class LoadError(Exception):
    """The target cannot be loaded; the message names it and why."""


def load_callable(target: str, what: str) -> Callable:
    path_text, separator, name = target.rpartition(":")
    if not separator or not path_text or not name:
        raise LoadError(f"{target!r}: expected PATH.py:{what}")
    path = Path(path_text)
    if not path.is_file():
        raise LoadError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"_memlint_target_{abs(hash(str(path.resolve())))}", path)
    if spec is None or spec.loader is None:
        raise LoadError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise LoadError(f"{path}: importing it failed: {type(error).__name__}: {error}") from None
    finally:
        sys.path.remove(str(path.resolve().parent))
    value = getattr(module, name, None)
    if value is None:
        raise LoadError(f"{path} defines no {name!r}")
    if not callable(value):
        raise LoadError(f"{path}:{name} is not callable")
    return value
