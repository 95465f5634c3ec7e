"""Models run in a helper's own loop, and what a helper does as a call site sees it.

A function of the file may run a model in a loop of its own that neither backpropagates nor steps
(a meta-learner's loss summed over the tasks of a batch: `for task in tasks: loss += model(task)`).
That run is not a training loop of the helper's: it is work of the loop that calls the helper, where
the call records a graph (under `torch.no_grad()` at the call site the helper only extracts
features, and its run counts for nothing).

The work is kept in an evidence table the asker fills as the traversal goes: id(loop) or a function's
key -> the kinds of work seen there ("backward", "step", "model"); a function's key holds what the
function does outside its own loops.  This module adds the helpers' looped runs to it and reads it
through the file's call sites (`FileFacts.call_sites`):

- `LoopedModels.note(ctx, for_closure)`: a model run at the current node, inside a loop of the current
  function (not detached at once: `model(x).detach()` keeps features without their graph).
- `LoopedModels.settle(evidence, def_evidence, facts)`, once the file is seen: a run none of whose
  loops backpropagates or steps, in its own statements or through the helpers it calls there, is its
  function's `LOOPED_MODEL` work (and a model run of the def, for a closure handed to a step).
- `helper_work(evidence, facts)`: what each function does outside its own loops, with what the
  functions it calls there do (a fixed point over the call sites outside loops).
- `work_at_site(work, site)`: a helper's work as the call `site` sees it: its looped model runs count
  as "model" only where the call records a graph.

Asked by ML017 (a training loop calls backward, steps an optimizer and runs a model, in its own body
or through the helpers it calls).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from memlint.analysis.context import CallSite, Context, FileFacts

# A model run in a helper's own loop: counts as "model" for a loop that calls the helper with
# gradients on, and for nothing where the call is under `torch.no_grad()`.
LOOPED_MODEL = "model in the helper's loop"


class LoopedModels:
    """The model runs in the file's functions' own loops, kept until the file is seen."""

    def __init__(self) -> None:
        # (the function's key, id of its def, the ids of the loops around the run, whether a
        # closure of that def counts the run)
        self._runs: list[tuple[tuple, Optional[int], tuple[int, ...], bool]] = []

    def __bool__(self) -> bool:
        return bool(self._runs)

    def note(self, ctx: "Context", for_closure: bool) -> None:
        """A model run at the current node, in a loop of the current function."""
        function = ctx.function_node
        self._runs.append((ctx.function_key, None if function is None else id(function), tuple(id(loop) for loop in ctx.loops), for_closure))  # type: ignore[arg-type]

    def settle(self, evidence: dict, def_evidence: dict, facts: "FileFacts") -> None:
        """Add to `evidence` (and `def_evidence`, by def) the runs that are their helper's work: in
        loops none of which backpropagates or steps, itself or through a helper it calls (one that
        does is a training loop of its own, decided where it is)."""
        if not self._runs:
            return
        # what the helpers each loop calls do (`update(loss, opt)` that backpropagates and steps)
        helpers = helper_work(evidence, facts)
        reached: dict[int, set[str]] = {}  # id(loop) -> what the helpers it calls do
        for key, sites in facts.call_sites.items():
            for site in sites:
                if site.loop is not None and key in helpers:
                    reached.setdefault(id(site.loop), set()).update(helpers[key])
        for function, definition, loops, for_closure in self._runs:
            if any((evidence.get(loop, set()) | reached.get(loop, set())) & {"backward", "step"} for loop in loops):
                continue  # (the run is that training loop's own work, written there or reached by a call)
            # counted where a caller runs the helper with gradients on (`work_at_site`): under
            # `torch.no_grad()` its loop only extracts features
            evidence.setdefault(function, set()).add(LOOPED_MODEL)
            if for_closure:
                def_evidence.setdefault(definition, set()).add("model")


def helper_work(evidence: dict, facts: "FileFacts") -> dict[tuple, set[str]]:
    """What each function of the file does outside its own loops (the function keys of `evidence`),
    with what the functions it calls there do."""
    result = {key: set(value) for key, value in evidence.items() if isinstance(key, tuple)}
    changed = True
    while changed:
        changed = False
        for key, sites in facts.call_sites.items():
            found = result.get(key)
            if not found:
                continue
            for site in sites:
                caller = site.callers[-1] if site.callers else None
                if caller is None or site.loop is not None:
                    continue
                known = result.setdefault(caller, set())
                passed = work_at_site(found, site, keep=True)
                if not passed <= known:
                    known |= passed
                    changed = True
    return result


def work_at_site(work: set[str], site: "CallSite", keep: bool = False) -> set[str]:
    """What a helper does, as the call `site` sees it: its looped model runs count only where the
    call records a graph (as "model" at a loop, `keep` as they are for a calling function)."""
    if LOOPED_MODEL not in work:
        return work
    work = work - {LOOPED_MODEL}
    if site.grad.records_graph is False:
        return work
    return work | {LOOPED_MODEL if keep else "model"}
