"""The prescreen: does a file need the full analysis at all?

libcst's parse costs several times CPython's, and most files of a large code base (the modelling
code of a model zoo, utilities) cannot have a finding.  Before parsing with libcst the engine asks,
for every rule that runs on the file, a necessary condition of that rule reporting: its screen.
A built-in rule's screen is its trigger words (`Meta.words` in its meta.py: the text must mention
one word of every group) and, where those are not the whole condition, its folder's `screen.py`,
which looks at CPython's AST.  When no rule's screen holds, the file has no finding and libcst
never sees it (nor is it imported, for a single clean file).  The answer is an over-approximation
by construction: a screen may say "maybe" for a file without findings, never "no" for a file with
one.  A rule without a screen (a third-party rule) always runs.

This package holds what the screens share: `Source` (the file's words and its AST, indexed once)
and `History` (could an expression carry autograd history, by the rules of analysis/values.py).
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Callable, Collection, Mapping, Optional

from memlint.pipeline import registry
from memlint.prescreen.source import Source
from memlint.rule import Meta

__all__ = ["Source", "may_use_torch", "mentioned_codes", "needs_analysis", "screen_holds", "screened_codes"]

Screen = Callable[[Source, Mapping[str, Any]], bool]


def may_use_torch(text: str) -> bool:
    """Could the file use torch at all?  It mentions torch, or it imports every name of a module
    (`from utils import *`, where utils imports torch and nn: `class G(nn.Module)` then never
    writes the word).  The first and cheapest test of every file."""
    return "torch" in text or "import *" in text


def needs_analysis(source: Source, codes: Collection[str], options: Mapping[str, Any]) -> bool:
    """Could any of the rules `codes` report in `source`?  (True for a rule without a screen.)"""
    metas = _metas()
    if any(code not in metas for code in codes):
        return True
    # The trigger words first: they are the cheapest, and most rules need nothing else.
    candidates = [code for code in codes if _mentions_words(source, metas[code].words)]
    if not candidates:
        return False
    if any(_screen(code) is None for code in candidates):
        return True
    if not source.structure_is_reliable:
        return True
    options = _with_defaults(options)
    try:
        return any(_screen(code)(source, options) for code in candidates)  # type: ignore[misc]
    except RecursionError:  # code nested deeper than a screen can follow (memlint/pipeline/depth.py): "maybe"
        return True


def screened_codes(source: Source, codes: Collection[str], options: Mapping[str, Any]) -> frozenset[str]:
    """The rules of `codes` that could report in `source`: those without a screen, and those whose
    trigger words and screen hold.  Empty where `needs_analysis` says no.  The full analysis runs
    only these rules: one rule's screen letting a file through to libcst does not make every other
    rule's visitors walk it (each screen is a necessary condition of its own rule reporting, which
    bench/prescreen_check.py checks rule by rule)."""
    metas = _metas()
    candidates = mentioned_codes(source, codes)
    if not source.structure_is_reliable:
        return candidates
    options = _with_defaults(options)
    needed = set()
    for code in candidates:
        screen = _screen(code) if code in metas else None
        try:
            if screen is None or screen(source, options):
                needed.add(code)
        except RecursionError:  # as in needs_analysis: "maybe"
            needed.add(code)
    return frozenset(needed)


def mentioned_codes(source: Source, codes: Collection[str]) -> frozenset[str]:
    """The rules of `codes` whose trigger words `source`'s text mentions (a rule without a screen
    always): the words alone, which need no syntax tree."""
    metas = _metas()
    return frozenset(code for code in codes if code not in metas or _mentions_words(source, metas[code].words))


def following_other_files_steps(codes: Collection[str]) -> frozenset[str]:
    """The rules of `codes` that may report in a file that never mentions torch, when it runs another
    file's training step (`Meta.follows_other_files_steps`)."""
    metas = _metas()
    return frozenset(code for code in codes if code in metas and metas[code].follows_other_files_steps)


def following_other_files_models(codes: Collection[str]) -> frozenset[str]:
    """The rules of `codes` that may report in a file that never mentions torch, when it runs another
    file's models (`Meta.follows_other_files_models`)."""
    metas = _metas()
    return frozenset(code for code in codes if code in metas and metas[code].follows_other_files_models)


def screen_holds(source: Source, code: str, options: Mapping[str, Any]) -> bool:
    """Could rule `code` alone report in `source`?  (The question `needs_analysis` asks per rule.)"""
    return needs_analysis(source, (code,), options)


def _mentions_words(source: Source, words: tuple[tuple[str, ...], ...]) -> bool:
    return all(source.mentions(*group) for group in words)


@functools.lru_cache(maxsize=1)
def _metas() -> dict[str, Meta]:
    return {builtin.meta.code: builtin.meta for builtin in registry.builtin_rules()}


@functools.lru_cache(maxsize=None)
def _screen(code: str) -> Optional[Screen]:
    """The `screen` function of a built-in rule's screen.py, imported on first use; None without one."""
    folder = next(b.folder for b in registry.builtin_rules() if b.meta.code == code)
    name = f"memlint.rules.{folder}.screen"
    try:
        return importlib.import_module(name).screen
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        return None


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    return {option.key: option.default for option in registry.rule_options()}


def _with_defaults(options: Mapping[str, Any]) -> Mapping[str, Any]:
    """The rules' option defaults under the given values (settings built from a configuration
    hold every option; a caller may give only some)."""
    defaults = _defaults()
    if defaults.keys() <= options.keys():
        return options
    return {**defaults, **options}
