"""Registry dicts (memlint/analysis/registries.py): which module-level dicts' entries are known."""

from __future__ import annotations

import textwrap

from memlint.analysis.registries import filled_imports, registry_dicts
from memlint.prescreen.source import Source


def _source(text: str) -> Source:
    return Source(textwrap.dedent(text).lstrip("\n"))


def test_a_display_and_module_level_entries_are_the_registry():
    source = _source("""
        from .a import A
        from . import b
        MODELS = {"a": A}
        MODELS["b"] = b.B
        def build(name, cfg):
            if name not in MODELS:
                raise KeyError(name)
            return MODELS[name](cfg), list(MODELS.keys())
    """)
    assert registry_dicts(source) == {"MODELS": ["A", "b.B"]}


def test_a_dict_filled_otherwise_is_no_registry():
    cases = [
        "R = {}\ndef register(cls):\n    R[cls.__name__] = cls\n    return cls\n",  # by a decorator
        "R = {'a': A}\nR.update(extra)\n",  # updated
        "R = {'a': A}\nR = {'b': B}\n",  # bound twice
        "R = {'a': A}\nR[key] = B\n",  # a key not literal
        "R = {'a': A}\nR['b'] = make()\n",  # an entry that is no name
        "R = {'a': A}\nuse(R)\n",  # handed on
        "R = {'a': A}\ndef f():\n    global R\n    R = {}\n",  # rebound through `global`
        "R = {}\n",  # empty
    ]
    for text in cases:
        assert registry_dicts(_source(text)) == {}, text


def test_an_imported_dict_the_file_fills_is_noted():
    source = _source("""
        from models import MODELS, LOSSES, helper
        MODELS["extra"] = helper
        LOSSES.update({"l1": helper})
        print(helper.value)
    """)
    imports = {"MODELS": ["models", "MODELS", 0], "LOSSES": ["models", "LOSSES", 0], "helper": ["models", "helper", 0]}
    # (helper is used as a value too: the project pass finds no registry behind it)
    assert filled_imports(source, imports) == ["LOSSES", "MODELS", "helper", "helper.value"]


def test_any_use_of_an_imported_dict_but_reading_an_entry_is_noted():
    source = _source("""
        import models
        import losses as L
        from tables import TABLE, OTHER, READ
        models.MODELS["extra"] = object
        L.LOSSES.update(l1=object)
        TABLE |= {"x": object}
        register(OTHER, "y", object)
        net = READ["a"](3)
        models.build(READ["b"])
    """)
    imports = {
        "models": ["models", None, 0], "L": ["losses", None, 0],
        "TABLE": ["tables", "TABLE", 0], "OTHER": ["tables", "OTHER", 0], "READ": ["tables", "READ", 0],
    }  # fmt: skip
    found = filled_imports(source, imports)
    assert {"models.MODELS", "L.LOSSES", "TABLE", "OTHER"} <= set(found)
    assert "READ" not in found and "models.build" not in found
