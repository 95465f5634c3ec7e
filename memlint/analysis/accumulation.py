"""Accumulations: the shapes that keep a value beyond the statement that made it, and the life of the
accumulator that keeps it (how it started, when it is emptied, whether it outlives a call).  Facts
of the semantic model that ML001 (values with history kept across iterations) and ML014 (model
outputs kept on the device) both ask; each says the evidence it rests on.

**Shapes** (what is kept, and in what):

- a running sum: `total += v`, `total = total + v`, an exponential average `s = 0.98 * s + 0.02 * v`
  (the target once among the terms, possibly scaled, by a product too: `a * gamma * lam * mask`; a dict entry also read back as
  `stats.get("loss", 0)`): `running_sum_terms`; `total = torch.add(total, v)`, `total.add(v)`, a
  running maximum or minimum `worst = torch.max(worst, v)` / `torch.maximum` / `worst.min(v)`:
  `added_parts`; in place, `total.add_(v)`: `IN_PLACE_SUMS`;
- a list grown by concatenation: `losses += [v]`, `losses = losses + [v, acc]` (every other term a
  display): `added_values` gives the displays' elements;
- a running concatenation: `outs = torch.cat([outs, v])` (and `torch.stack` / `vstack` / `hstack`,
  resolved through the file's imports): `concatenated_parts`;
- a slot per iteration: `losses[i] = loss` with `i` bound by the loop (`stored_at_loop_index`);
- a display kept whole: `losses.append((loss, acc))`, `out.append({"preds": p})`: `elements`;
- the accumulator behind subscripts: `stats["loss"]` -> `stats`, `self.outputs[i]` -> `self.outputs`,
  also behind `stats.setdefault("loss", [])` -> `stats` (`holder`, `base_name`, `self_attribute`);
- a comprehension over a data loader, one value per batch: `comprehension_batch_source`.

**The accumulator's life**:

- started as a running statistic (`started_as_statistic`): bound before to a number, an empty
  container or a number-like tensor (`total = 0`, `losses = []`, `torch.tensor(0.0)`), as the
  valuation sees it (`ctx.initial_value`, `ctx.lookup_self_attribute`); a tensor updated by sums
  (`latents = latents + step`) is a computation, not a statistic;
- started in the loop only the first time (`only_started_in_loop`): every other binding in the loop
  is behind `if name is None:` / `if not name:`;
- emptied every iteration or every optimizer step (`reset_per_window`): `total = 0`, `losses = []`,
  `losses.clear()` in the loop's own body, unconditionally or in the branch that steps an optimizer
  (a gradient-accumulation window);
- made for each batch (`made_per_batch`, `bound_in_outer_batch_loop`): bound afresh inside a loop
  over batches, so what it collects is one batch's worth; unless optimizer steps run between two
  bindings (`steps_between_bindings`: an inner loop that calls backward and steps an optimizer on
  every turn), where the binding per batch bounds how long every step's graph is kept, and is no
  gradient-accumulation window;
- outliving the call (`outlives_the_call`): `self.<attr>` or a module-level name, still there when a
  per-batch function runs again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from memlint.analysis.iteration import Loop, iterates_batches, names_in
from memlint.analysis.naming import BATCH_SOURCE
from memlint.analysis.roles import steps_an_optimizer
from memlint.analysis.step_calls import is_optimizer_step
from memlint.analysis.tables import COMBINING_METHODS
from memlint.analysis.values import NONE, Kind
from memlint.analysis.walk import code_descendants, code_with_parents, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context

DISPLAYS = (cst.List, cst.Tuple, cst.Set, cst.Dict)
# Calls that return their arguments joined: `x = torch.cat([x, v])` keeps every `v`.
CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"})
# Calls that combine their two arguments element by element into a new tensor whose graph reaches
# both: `total = torch.add(total, loss)` is `total = total + loss`, and a running maximum
# `worst = torch.max(worst, loss)` keeps every `loss`'s graph as much (autograd records both inputs).
ADDITIONS = frozenset({"torch.add"})
EXTREMA = frozenset({"torch.max", "torch.min", "torch.maximum", "torch.minimum", "torch.fmax", "torch.fmin"})
COMBINATIONS = ADDITIONS | EXTREMA
# Tensor methods that add their argument into the receiver: `total.add_(loss)` is `total += loss`.
IN_PLACE_SUMS = frozenset({"add_", "sub_"})


# ---------------------------------------------------------------------------------------- shapes


def elements(display: cst.BaseExpression) -> list:
    """The values inside `(loss, acc)`, `[loss]`, `{"loss": loss, "out": out}` (one level of nesting
    more: `{"preds": [p]}`); `*xs` is left out, `**d` is kept whole."""
    found = []
    for element in getattr(display, "elements", ()):
        inner = element.value
        if isinstance(element, cst.StarredElement):
            continue
        found.extend(elements(inner) if isinstance(inner, DISPLAYS) else [inner])
    return found


def kept_values(value: cst.BaseExpression) -> list:
    """What `.append(value)` keeps: the elements of a display, or the value itself."""
    return elements(value) if isinstance(value, DISPLAYS) else [value]


def branches(value: cst.BaseExpression) -> list:
    """`a if c else b` -> [a, b] (either may be the accumulation: `avg = v if avg is None else ...`)."""
    return [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]


def concatenated_parts(value: cst.BaseExpression, target: cst.BaseExpression, ctx: "Context") -> list:
    """The other parts of `torch.cat([target, part, ...])` when `value` is one (resolved through the
    imports: CONCATENATIONS), else []."""
    if not (isinstance(value, cst.Call) and value.args and ctx.resolve(value.func) in CONCATENATIONS):
        return []
    parts = value.args[0].value
    if not isinstance(parts, (cst.List, cst.Tuple)):
        return []
    found = [e.value for e in parts.elements if not isinstance(e, cst.StarredElement)]
    if not any(e.deep_equals(target) for e in found):
        return []
    return [e for e in found if not e.deep_equals(target)]


def added_values(terms: list) -> tuple[list, bool]:
    """What a running sum's other terms keep, and whether the accumulator is a container: where every
    term is a list or tuple display (`losses += [loss]`, `losses = losses + [loss, acc]`), the list
    grows by concatenation and keeps the displays' elements; else the terms are added values."""
    if terms and all(isinstance(t, (cst.List, cst.Tuple)) for t in terms):
        return [e for t in terms for e in elements(t)], True
    return list(terms), False


def added_parts(value: cst.BaseExpression, target: cst.BaseExpression, ctx: "Context") -> list:
    """The other operand of `torch.add(target, v)` / `torch.add(v, target)`, `torch.max(target, v)`
    and the other element-wise combinations (resolved through the imports: COMBINATIONS) or of
    `target.add(v)` / `target.maximum(v)` (tables.COMBINING_METHODS), when `value` is one; else []."""
    if not isinstance(value, cst.Call) or any(a.keyword is not None or a.star for a in value.args):
        return []
    args = [a.value for a in value.args]
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in COMBINING_METHODS and func.value.deep_equals(target) and len(args) == 1:
        return args
    if len(args) == 2 and ctx.resolve(func) in COMBINATIONS:
        own = [a for a in args if a.deep_equals(target)]
        if len(own) == 1:
            return [a for a in args if a is not own[0]]
    return []


def running_extremum(value: cst.BaseExpression, ctx: "Context") -> bool:
    """`torch.max(worst, loss)`, `torch.minimum(best, v)`, `worst.maximum(loss)`: a combination that
    keeps a bound per element (EXTREMA, tables.COMBINING_METHODS but `add`), not a sum."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in COMBINING_METHODS and func.attr.value != "add":
        return ctx.resolve(func) is None or ctx.resolve(func) in EXTREMA
    return ctx.resolve(func) in EXTREMA


def running_sum_terms(value: cst.BaseExpression, target: cst.BaseExpression) -> list:
    """The terms of `target = <sum>` other than the target's own, when the sum holds the target once
    (possibly scaled: `0.98 * s`, `s * momentum`, `s / 2`): `total + loss`, `0.98 * s + 0.02 * loss`;
    [] for anything else."""
    if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, (cst.Add, cst.Subtract)):
        return []
    terms: list = []

    def flatten(expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)) and not expr.lpar:
            flatten(expr.left)
            flatten(expr.right)
        else:
            terms.append(expr)

    flatten(value)
    own = [t for t in terms if _is_scaled(t, target)]
    if len(own) != 1:
        return []
    return [t for t in terms if t is not own[0]]


def _is_scaled(term: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    if _reads_target(term, target):
        return True
    if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, (cst.Multiply, cst.Divide)):
        # scaled by any product of factors: `s * gamma * lam * mask[t]` (a discounted running sum)
        if _is_scaled(term.left, target):
            return not _mentions(term.right, target)
        if _is_scaled(term.right, target) and isinstance(term.operator, cst.Multiply):
            return not _mentions(term.left, target)
    return False


def _reads_target(term: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """`total` for `total`; for a dict entry `stats["loss"]` also `stats.get("loss")` /
    `stats.get("loss", 0)` (the entry's value, or its start the first time)."""
    if term.deep_equals(target):
        return True
    if not (isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)):
        return False
    if not (isinstance(term, cst.Call) and isinstance(term.func, cst.Attribute) and term.func.attr.value == "get"):
        return False
    return (
        1 <= len(term.args) <= 2
        and all(a.keyword is None and not a.star for a in term.args)
        and term.func.value.deep_equals(target.value)
        and term.args[0].value.deep_equals(target.slice[0].slice.value)
    )


def _mentions(expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    return any(node.deep_equals(target) for node in (expr, *code_descendants(expr)) if type(node) is type(target))


def graph_leaf(value: cst.BaseExpression, ctx: "Context") -> cst.BaseExpression:
    """The part of `value` that carries the history, through arithmetic with values that carry none
    (`0.02 * loss` -> `loss`, `loss * x.size(0)` -> `loss`, `-loss` -> `loss`): what a fix detaches."""
    while True:
        if isinstance(value, cst.BinaryOperation) and not value.lpar:
            left, right = ctx.holds_graph(value.left), ctx.holds_graph(value.right)
            if left is True and right is False:
                value = value.left
                continue
            if right is True and left is False:
                value = value.right
                continue
        elif isinstance(value, cst.UnaryOperation) and not value.lpar and not isinstance(value.operator, cst.Not):
            value = value.expression
            continue
        return value


def stored_at_loop_index(target: cst.BaseExpression, loop: Optional[cst.CSTNode]) -> bool:
    """`losses[i] = loss` where `i` is the loop's position (`for i in range(n)`, `for i, (x, y) in
    enumerate(loader)`: `loop_position`): every iteration stores into a slot of its own, so the
    container keeps every iteration's value, as `.append` would."""
    if not (isinstance(loop, cst.For) and isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)):
        return False
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return False
    index = target.slice[0].slice.value
    return isinstance(index, cst.Name) and index.value == loop_position(loop)


def loop_position(loop: cst.For) -> Optional[str]:
    """The name a loop binds to its iteration's position: `i` of `for i in range(n)` / `trange(n)`
    or of `for i, batch in enumerate(loader)` (a key of `.items()` is no position)."""
    iterable, target = loop.iter, loop.target
    callee = iterable.func.value if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) else None
    if callee in ("range", "trange") and isinstance(target, cst.Name):
        return target.value
    if callee == "enumerate" and isinstance(target, (cst.Tuple, cst.List)) and target.elements and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value.value
    return None


def holder(accumulator: cst.BaseExpression) -> cst.BaseExpression:
    """The object behind subscripts: `preds` in `preds`, `out["logits"]`, `self.outputs[idx]`,
    `stats.setdefault("loss", [])`."""
    while True:
        if isinstance(accumulator, cst.Subscript):
            accumulator = accumulator.value
        elif _entry_of(accumulator) is not None:
            accumulator = _entry_of(accumulator)  # type: ignore[assignment]
        else:
            return accumulator


def _entry_of(accumulator: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`stats` for `stats.setdefault("loss", [])`: the entry the call returns lives in `stats`."""
    if isinstance(accumulator, cst.Call) and isinstance(accumulator.func, cst.Attribute) and accumulator.func.attr.value == "setdefault":
        return accumulator.func.value
    return None


def base_name(accumulator: cst.BaseExpression) -> Optional[str]:
    """The variable of `total`, `stats["loss"]` or `stats.setdefault("loss", [])` (one subscript at
    most); None for attributes."""
    entry = _entry_of(accumulator)
    if entry is not None:
        accumulator = entry
    if isinstance(accumulator, cst.Name):
        return accumulator.value
    if isinstance(accumulator, cst.Subscript) and isinstance(accumulator.value, cst.Name):
        return accumulator.value.value
    return None


def self_attribute(accumulator: cst.BaseExpression) -> Optional[str]:
    """`self.losses` / `self.stats["loss"]` -> "losses" / "stats": kept as long as the object."""
    return self_attr(holder(accumulator))  # type: ignore[arg-type]


def comprehension_batch_source(node: cst.BaseExpression) -> Optional[str]:
    """The loader a comprehension iterates (`[f(x) for x, y in val_loader]` -> "val_loader"): a name
    like a data loader's in any of its `for` clauses (naming.BATCH_SOURCE); None otherwise."""
    comp = getattr(node, "for_in", None)
    while comp is not None:
        for name in names_in(comp.iter):
            if BATCH_SOURCE.search(name):
                return name
        comp = comp.inner_for_in
    return None


# ------------------------------------------------------------------------- the accumulator's life


def started_as_statistic(
    accumulator: cst.BaseExpression, ctx: "Context", may_start_empty: bool = False, container: bool = False, extremum: bool = False
) -> bool:
    """Was the accumulator started as a number or an empty container (`total = 0`, `losses = []`,
    `running_loss, seen = 0.0, 0`), or, for a sum, a number-like tensor (`torch.tensor(0.0)`,
    `torch.zeros(1, device=device)`), or, for a running maximum or minimum (`extremum`), any tensor
    without history (`worst = torch.zeros(n)`: a bound per sample)?  With `may_start_empty` (an assigned sum or concatenation),
    also `None` or, for a concatenation, an empty tensor (`avg = None`, `feats = torch.empty(0)`).

    Evidence: the value the name (or `self.<attr>`) had before, as the valuation saw it.  Running
    statistics start that way; a tensor updated in a loop (`latents = latents + step`,
    `embeddings += table(ids)`) is a computation.
    """
    accumulator = holder(accumulator)
    if isinstance(accumulator, cst.Name):
        start = ctx.initial_value(accumulator.value)
    elif isinstance(accumulator, cst.Attribute) and isinstance(accumulator.value, cst.Name) and accumulator.value.value == "self":
        start = ctx.lookup_self_attribute(accumulator.attr.value)
    else:
        return False
    if start.kind in (Kind.NUMBER, Kind.CONTAINER):
        return True
    if start.kind is Kind.TENSOR and start.graph is False and (start.scalar or extremum) and not container:
        # `total = torch.tensor(0.0)`, `torch.zeros(1, device=device)`: a number on the device; a
        # running maximum's per-sample start (`worst = torch.zeros(n)`)
        return True
    if not may_start_empty:
        return False
    # `avg = None` before a sum; `feats = None` or `torch.empty(0)` before a concatenation (a tensor
    # updated by sums, `latents = latents + step`, is a computation)
    return start is NONE or (container and start.kind is Kind.TENSOR and start.graph is False)


def only_started_in_loop(loop: cst.CSTNode, name: str, node: cst.CSTNode) -> bool:
    """Is every binding of `name` in the loop other than `node` a first-time start (`if avg is None:
    avg = loss`, `if not avg: ...`), not a reset?  Then the accumulation still runs across iterations."""
    found = False
    for current, parents in code_with_parents(loop.body):  # type: ignore[attr-defined]
        if current is node or not (isinstance(current, cst.Assign) and _binds_name(current, name)):
            continue
        found = True
        tests = [p.test for p in parents if isinstance(p, cst.If)]
        if not any(_asks_if_unset(test, name) for test in tests):
            return False
    return found


def _binds_name(node: cst.Assign, name: str) -> bool:
    return any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets)


def _asks_if_unset(test: cst.BaseExpression, name: str) -> bool:
    """`name is None`, `name == None`, `not name`: true only before the first value."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, cst.Name) and test.expression.value == name
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        return (
            isinstance(test.left, cst.Name)
            and test.left.value == name
            and isinstance(comparison.operator, (cst.Is, cst.Equal))
            and isinstance(comparison.comparator, cst.Name)
            and comparison.comparator.value == "None"
        )
    return False


def reset_per_window(loop: cst.CSTNode, name: str) -> bool:
    """Is `name` emptied inside `loop` on every iteration, or in a branch that also steps the
    optimizer (`if (i + 1) % accum == 0: optimizer.step(); ...; total = 0`)?  Then what it holds is
    bounded by a gradient-accumulation window, not by the length of the loop.  Evidence: a reset
    (`total = 0`, `losses = []`, `losses.clear()`, not `total = total + v`) in the loop's body, outside
    nested loops and functions, either unconditional or in a branch with `<optimizer>.step()`."""
    for node, parents in code_with_parents(loop.body):  # type: ignore[attr-defined]
        if not _resets(node, name):
            continue
        inside = parents[parents.index(loop.body) + 1 :] if loop.body in parents else parents  # type: ignore[attr-defined]
        if any(isinstance(p, (cst.For, cst.While, cst.FunctionDef, cst.Lambda)) for p in inside):
            continue
        guards = [p for p in inside if isinstance(p, (cst.If, cst.Else, cst.ExceptHandler))]
        if not guards:
            return True  # emptied on every iteration
        if steps_an_optimizer(guards[-1]):
            return True
    return False


def _resets(node: cst.CSTNode, name: str) -> bool:
    """`total = 0`, `losses = []`, `losses.clear()`: the accumulator starts over (`total = total +
    loss` does not)."""
    if isinstance(node, cst.Assign):
        if any(type(n) is cst.Name and n.value == name for n in code_descendants(node.value)) or (
            type(node.value) is cst.Name and node.value.value == name
        ):
            return False
        return any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) or any(
            isinstance(t.target, (cst.Tuple, cst.List))
            and any(isinstance(e.value, cst.Name) and e.value.value == name for e in t.target.elements)
            for t in node.targets
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "clear":
        return isinstance(node.func.value, cst.Name) and node.func.value.value == name
    return False


def bound_in_outer_batch_loop(ctx: "Context", name: str) -> bool:
    """Is `name` bound afresh by a loop over batches that encloses the innermost loop (so what it
    collects in that inner, non-batch loop is one batch's worth: `for x in loader: steps = []; for t
    in range(T): steps.append(...)`)?"""
    bound = ctx.frame.bound_in_loop.get(name)
    return bound is not None and any(bound is loop and iterates_batches(loop) for loop in ctx.loops[:-1])


def steps_between_bindings(ctx: "Context", name: str) -> bool:
    """Do several optimizer steps run between two bindings of `name` (at the traversal's position)?
    A loop inside the one that last bound `name`, up to the innermost, that calls backward in its
    own statements (`ctx.model.backward_in_own_statements`) and steps an optimizer on every turn
    (`<optimizer>.step()` in its own statements, not behind a condition): `for x in loader: total =
    0.0; for _ in range(reps): loss.backward(); optim_d.step(); total += loss`.  Each turn frees its
    own graph by its own backward, so a sum over the turns is no one step's objective: the binding
    per outer turn bounds how long the graphs are kept, not a gradient-accumulation window."""
    bound = ctx.frame.bound_in_loop.get(name)
    loops = ctx.loops
    inside = next((i + 1 for i, loop in enumerate(loops) if loop is bound), None)
    if inside is None:
        return False
    return any(
        ctx.model.backward_in_own_statements(loop)
        and ctx.memo(("steps-every-turn", id(loop)), lambda loop=loop: _steps_every_turn(loop))
        for loop in loops[inside:]
    )


def _steps_every_turn(loop: cst.CSTNode) -> bool:
    """`<optimizer>.step()` in the loop's own statements, outside branches, handlers, nested loops
    and functions: it runs on every turn."""
    for node, parents in code_with_parents(loop.body):  # type: ignore[attr-defined]
        if not is_optimizer_step(node):
            continue
        inside = parents[parents.index(loop.body) + 1 :] if loop.body in parents else parents  # type: ignore[attr-defined]
        if not any(isinstance(p, _CONDITIONAL) for p in inside):
            return True
    return False


_CONDITIONAL = (cst.If, cst.Else, cst.ExceptHandler, cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.IfExp, cst.BooleanOperation)


def made_per_batch(
    ctx: "Context", name: str, innermost: bool = False, over_batches_test: Callable[[Loop], bool] = iterates_batches
) -> bool:
    """Was `name` last bound inside the outermost loop over batches around here, or in a loop nested
    in it (a list made for each batch: its glimpses, its decoding steps)?  With `innermost`, inside
    the innermost loop over batches: a tensor restarted for each support set of a few-shot evaluation
    still grows over the full pass of the loader inside it.  `over_batches_test`: what the asking
    rule takes for a loop over batches (ML014 adds `host_chunks`' loops)."""
    loops = ctx.loops
    over_batches = [i for i, loop in enumerate(loops) if over_batches_test(loop)]
    first = (over_batches[-1] if innermost else over_batches[0]) if over_batches else None
    bound = ctx.frame.bound_in_loop.get(name)
    return first is not None and bound is not None and any(bound is loop for loop in loops[first:])


def outlives_the_call(accumulator: cst.BaseExpression, ctx: "Context") -> bool:
    """`self.losses`, or a module-level name that is not a parameter here: still there when the
    function runs again."""
    if self_attribute(accumulator) is not None:
        return True
    name = base_name(accumulator)
    return name is not None and ctx.binds_at_module_level(name) and name not in ctx.frame.params
