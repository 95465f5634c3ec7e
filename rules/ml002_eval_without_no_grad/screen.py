"""ML002's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

A call that could run a model inside an evaluation region: in a function named as an evaluation,
in a function (or the module) that calls `.eval()` / `.train(False)` or enters a project context
manager that does (`with utils.eval_mode(agent):`, the project pass's `eval_contexts`), or calls a
project method that does for the models its object holds (`model.val_start()`: `mode_methods`), or in a loop over validation
/ test data (there also a method fed data of anything that is not an import: `D.feature_extraction(x)`),
or torchnet's `engine.test(network, iterator)` (frameworks.torchnet_engine_run; loosened: the text
names `Engine` or `torchnet`, and `test`).
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.naming import dotted, is_evaluation_function_name, is_sampling_function_name, method_runs_module, names_evaluation_data
from memlint.prescreen.history import History
from memlint.prescreen.source import FUNCTIONS, LOOPS, Source, argument_count, subtree, words_in


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    if source.mentions("Engine", "torchnet") and source.mentions("test"):
        return True
    mode_calls = [call for call in source.nodes(ast.Call) if _sets_eval_mode(call)]  # type: ignore[arg-type]
    # `model.val_start()`, a project method that only puts the models its object holds in eval mode
    # (FileView.mode_methods: mode_wrappers.wrapper_eval_call; loosened: any receiver)
    wrappers = source.project.eval_methods if source.project is not None else frozenset()
    if wrappers:
        mode_calls += [call for call in source.nodes(ast.Call) if isinstance(call.func, ast.Attribute) and call.func.attr in wrappers]  # type: ignore[attr-defined]
    # `with utils.eval_mode(agent):` of a project class whose `__enter__` calls `agent.train(False)`
    contexts = _eval_contexts(source)
    mode_calls += contexts
    eval_scopes = {id(_scope_of(source, call)) for call in mode_calls}
    named = any(_named_as_evaluation(f.name) for f in source.nodes(*FUNCTIONS))  # type: ignore[attr-defined]
    draws = source.mentions("next", "__next__")
    evaluation_loops = {id(loop) for loop in source.nodes(*LOOPS) if _over_evaluation_data(loop, draws)}  # once per loop
    loops = bool(evaluation_loops)
    if not (eval_scopes or named or loops):
        return False  # no evaluation region at all (a mode helper's own `.eval()` is one)
    calls = list(source.nodes(ast.Call))
    # `self.net_mode(train=False)`: a function of the file that sets a mode (loosened: any function so
    # named) puts a model in eval mode for its caller
    mode_helpers = _names_of_scopes(source, mode_calls)
    # (also a function of the file that returns a model it put in eval mode, `net = load_net(path)`:
    # eval_returns; loosened: a call of any function so named, by name or on self)
    helper_calls = [call for call in calls if _self_call_of(call, mode_helpers) or _name_call_of(call, mode_helpers)]  # type: ignore[arg-type]
    eval_scopes |= {id(_scope_of(source, call)) for call in helper_calls}
    history = source.memo("history", lambda: History(source))
    runs = [call for call in calls if history.may_run_model(call) or _self_method_fed_data(call, source)]  # type: ignore[arg-type]
    # `self._process_one_batch(x)`: a function of the file that may run a model runs it for its caller
    runners = _names_of_scopes(source, runs)
    # what was put in eval mode: calling it, or a method of it, may run it (`model.get_action(obs)`)
    # (`self`: the rule asks of self's calls what `may_run_model` already answers)
    evaluated = frozenset({dotted(_module_of_chain(call.func.value)) for call in mode_calls if call not in contexts} - {None, "self"})  # type: ignore[attr-defined]
    evaluated |= frozenset({dotted(a) for call in contexts for a in call.args} - {None, "self"})  # type: ignore[attr-defined]
    evaluated |= _bound_in_eval_mode(source, mode_calls)  # `model = Generator(4).eval()`: `model`
    evaluated |= _bound_in_eval_mode(source, helper_calls)  # `self.net = self._load_native(...)`: `self.net`
    evaluated_or_self = {dotted(_module_of_chain(call.func.value)) for call in mode_calls if call not in contexts}  # type: ignore[attr-defined]
    evaluated_or_self |= {dotted(a) for call in contexts for a in call.args}  # type: ignore[attr-defined]  # `with eval_mode(self):`
    model_calls = [
        call for call in calls
        if _self_call_of(call, runners) or (evaluated and _on_evaluated(call, evaluated, source))  # type: ignore[arg-type]
    ]  # fmt: skip
    model_calls = [*runs, *model_calls]
    if "self" in evaluated_or_self:
        # `self.gen_a.encode(x)` after `self.eval()`: a method of a submodule (evaluation.py's
        # `_runs_submodule_method`; loosened: any attribute of self)
        model_calls += [call for call in calls if _submodule_method_fed_data(call, source)]  # type: ignore[arg-type]
    if model_calls and id(source.tree) in eval_scopes:
        return True  # `.eval()` at module level: the region may reach any call
    for call in model_calls:
        for ancestor in source.ancestors(call):
            if isinstance(ancestor, FUNCTIONS) and (id(ancestor) in eval_scopes or _named_as_evaluation(ancestor.name)):
                return True
            if id(ancestor) in evaluation_loops:
                return True
    if loops:
        # a method fed data of a model, in a loop over evaluation data (`D.feature_extraction(x)` over
        # `test_loader`: evaluation.runs_model_method; loosened: any receiver that is not an import)
        for call in calls:
            func = call.func  # type: ignore[attr-defined]
            if not (isinstance(func, ast.Attribute) and method_runs_module(func.attr, _model_methods(source)) and call.args):  # type: ignore[attr-defined]
                continue
            receiver = dotted(func.value)
            if receiver is None or history.only_imported(receiver.partition(".")[0]):
                continue  # `np.random.sample(x)`, `torch.distributions.Normal(...).sample(...)`
            for ancestor in source.ancestors(call):
                if isinstance(ancestor, FUNCTIONS):
                    break
                if id(ancestor) in evaluation_loops:
                    return True
    return False


def _named_as_evaluation(name: str) -> bool:
    """evaluation.py's "function-name" region: named as evaluation, or as drawing samples to look at."""
    return is_evaluation_function_name(name) or is_sampling_function_name(name)


def _module_of_chain(expr: ast.AST) -> ast.AST:
    """`model.cuda()` -> `model` (evaluation.py's `_module_of_chain`, loosened: any method chain)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        expr = expr.func.value
    return expr


def _bound_in_eval_mode(source: Source, mode_calls: list) -> frozenset:
    """The targets of assignments whose value is a method chain through a mode call (evaluation.py's
    `eval_receiver` of `model = Generator(4).cuda().eval()`), or through one of `mode_calls` itself
    (a helper returning a model in eval mode); loosened: any chain, any receiver."""
    if not mode_calls:
        return frozenset()
    given = {id(call) for call in mode_calls}
    found = set()
    for node in source.nodes(ast.Assign):
        if len(node.targets) != 1:  # type: ignore[attr-defined]
            continue
        value = node.value  # type: ignore[attr-defined]
        while isinstance(value, ast.Call):
            if id(value) in given or _sets_eval_mode(value):
                found.add(dotted(node.targets[0]))  # type: ignore[attr-defined]
                break
            if not isinstance(value.func, ast.Attribute):
                break
            value = value.func.value
    return frozenset(found - {None, "self"})


def _sets_eval_mode(call: ast.Call) -> bool:
    if not isinstance(call.func, ast.Attribute):
        return False
    count = argument_count(call)
    return (call.func.attr == "eval" and count == 0) or (call.func.attr == "train" and count == 1)


def _parameter_callers(source: Source, evaluated: frozenset) -> frozenset[str]:
    """Module-level functions of the file that call one of their parameters (`def f(G, n): G(z)`) or
    a global put in eval mode (`def get_sample_image(): G(z)`), or a method of one whose name says
    it runs a module (`model.encode(src)`: delegation's `helper_runs_through_methods`), or apply
    replicas of a module (delegation's `_replicates_and_applies`; loosened: any `parallel_apply` call)."""
    if source.tree is None:
        return frozenset()
    names_of = {
        id(node): {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]} | evaluated
        for node in source.tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }  # fmt: skip
    found = set()
    if not names_of:
        return frozenset()
    # each call of the file, with the module-level statement it is in (its outermost ancestor below
    # the module): the node index's parents, not a walk of every function
    for call in source.nodes(ast.Call):
        func = call.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (func.attr == "forward" or method_runs_module(func.attr, _model_methods(source))):
            func = func.value  # `model.encode(src)` runs the parameter `model`
        elif not isinstance(func, ast.Name) and not (isinstance(func, ast.Attribute) and func.attr == "parallel_apply"):
            continue  # (`_calls_name` says no whatever the names)
        outermost = None
        for ancestor in source.ancestors(call):
            if ancestor is source.tree:
                break
            outermost = ancestor
        names = names_of.get(id(outermost)) if outermost is not None else None
        if names is not None and _calls_name(func, names):
            found.add(outermost.name)  # type: ignore[union-attr]
    return frozenset(found)


def _calls_name(func: ast.AST, names: set) -> bool:
    if isinstance(func, ast.Name):
        return func.id in names or func.id == "parallel_apply"
    return isinstance(func, ast.Attribute) and func.attr == "parallel_apply"


def _names_of_scopes(source: Source, calls: list) -> frozenset[str]:
    """Names of the functions the calls are in (`self.<name>()` may be one of them)."""
    found = set()
    for call in calls:
        scope = _scope_of(source, call)
        if isinstance(scope, FUNCTIONS):
            found.add(scope.name)  # type: ignore[attr-defined]
    return frozenset(found)


def _name_call_of(call: ast.Call, functions: frozenset[str]) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in functions


def _self_call_of(call: ast.Call, methods: frozenset[str]) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in methods and isinstance(func.value, ast.Name) and func.value.id == "self"


def _on_evaluated(call: ast.Call, evaluated: frozenset, source: Source) -> bool:
    """Is `call` `X(...)` or `X.method(...)` for an X put in eval mode (compared as dotted names)?"""
    func = call.func
    if dotted(func) in evaluated:
        return True  # `X(x)`, `X.encoder(x)`
    if isinstance(func, ast.Attribute) and func.attr == "data_parallel" and call.args and dotted(call.args[0]) in evaluated:
        return True  # `nn.parallel.data_parallel(X, inputs, gpus)` runs X (model_wrappers.module_run_by_function)
    if isinstance(func, ast.Name):
        # `sample_images(X, n)`: a module-level function of the file that calls one of its
        # parameters (loosened: any argument position, any of them), or `sample_images()` calling
        # the global X
        # the key holds `evaluated`, what the answer depends on besides the file
        return func.id in source.memo(("ml002-parameter-callers", evaluated), lambda: _parameter_callers(source, evaluated))
    return isinstance(func, ast.Attribute) and method_runs_module(func.attr, _model_methods(source)) and dotted(func.value) in evaluated


def _self_method_fed_data(call: ast.Call, source: Source) -> bool:
    """`self.set_forward(x)`: a method of self whose name says it runs the module (delegation's
    `_runs_self_by_method`; loosened: in any class)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
        and bool(call.args or call.keywords) and method_runs_module(func.attr, _model_methods(source))
    )  # fmt: skip  # (data by keyword, `encode(inputs=x)`, or unpacked, `encode(**batch)`, too)


def _submodule_method_fed_data(call: ast.Call, source: Source) -> bool:
    """`self.gen_a.encode(x)`: a method fed data, whose name says it runs a module, of an attribute
    of self (evaluation.py's `_runs_submodule_method`; loosened: whatever the attribute holds)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
        and isinstance(func.value.value, ast.Name) and func.value.value.id == "self"
        and bool(call.args or call.keywords) and method_runs_module(func.attr, _model_methods(source))
    )  # fmt: skip  # (data by keyword, `encode(inputs=x)`, or unpacked, `encode(**batch)`, too)


def _model_methods(source: Source) -> frozenset[str]:
    """The project pass's FileView.model_methods (methods every project nn.Module so named runs a
    model in), where the engine has set the facts."""
    return source.project.model_methods if source.project is not None else frozenset()


def _eval_contexts(source: Source) -> list:
    """The calls of `with` items that the project pass knows put their arguments in eval mode
    (FileView.eval_contexts: `utils.eval_mode(self.agent)`)."""
    known = source.project.eval_contexts if source.project is not None else frozenset()
    if not known:
        return []
    return [
        item.context_expr for node in source.nodes(ast.With) for item in node.items  # type: ignore[attr-defined]
        if isinstance(item.context_expr, ast.Call) and dotted(item.context_expr.func) in known
    ]  # fmt: skip


def _scope_of(source: Source, node: ast.AST) -> ast.AST:
    """The innermost function around `node`, or the module."""
    return next((a for a in source.ancestors(node) if isinstance(a, FUNCTIONS)), source.tree)  # type: ignore[arg-type]


def _over_evaluation_data(loop: ast.AST, draws: bool) -> bool:
    """A loop over validation / test data, or one drawing its batches from such a loader by hand
    (`test_dataloader.__iter__().next()`; loosened from memlint.analysis.evaluation's
    `reads_evaluation_batches`: any `next` call in the loop with such a word; `draws`: the file
    mentions `next` at all)."""
    if isinstance(loop, (ast.For, ast.AsyncFor)) and any(names_evaluation_data(w) for w in words_in(loop.iter)):  # type: ignore[attr-defined]
        return True
    if not draws:
        return False
    for node in subtree(loop):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == "next") or (isinstance(func, ast.Attribute) and func.attr in ("next", "__next__")):
                if any(names_evaluation_data(w) for w in words_in(node)):
                    return True
    return False
