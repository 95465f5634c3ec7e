"""Per-file summaries for the project pass (memlint/pipeline/project.py): what one file defines, imports and
calls, as plain data (JSON-serialisable), from CPython's AST.  No libcst here.

A summary says, for each module-level function and each method of a module-level class (keyed
"name" and "Class.name"; "" is the module's own code):

- `grad`: the grad mode its decorators or its framework give it ("off", "on", "?"; absent: none);
  `decorators`: the dotted names of its other decorators (a project's own no-grad decorator may
  be defined in another file); `wraps_no_grad`: it is such a decorator itself;
- `hook`: "no-grad" (Lightning evaluation hooks, HF pipelines' `_forward`), "per-batch" (hooks a
  framework calls once per batch), "training" (`training_step`: gradients are taken of its result);
- `model`: does it run a model (alternatives, see below); `trains`: does it call backward,
  `torch.autograd.grad` or an optimizer's `step()` (outside its loops); `grads`: does it compute
  gradients anywhere in its own body, loops included (any form of backward, `torch.autograd.grad`:
  a forward that adapts its weights at test time, MAML-style); `evals`: does it put something in
  eval mode (`X.eval()`, `X.train(False)`: a context manager's `__enter__`, `utils.eval_mode`);
  `mode`: a method that only puts the models its object holds in eval mode ("eval": SCAN's
  `val_start`, `self.img_enc.eval()`), or that may put one in training mode ("train");
  `model_grad`: one of its model runs, or of its calls on `self` or `self.<attr>` (`self.model.act(obs)`:
  maybe a model run), is outside a `no_grad` block of its own (curl's `sample_action` runs its
  actor only under `with torch.no_grad():`); `subs`: the attributes of `self` a method calls as
  modules (`self.attacker(x)`), where its class's `attrs` know their constructor, each [attr,
  guard]: guard [flag, position] where the call runs only inside `if flag:` of a parameter
  defaulting to False (`if make_adv:`), else None; `flush`: the flush it runs on every call
  (`torch.cuda.empty_cache()`, `gc.collect()`, not in a loop, behind an `if` or in a handler);
- `returns`: per `return` statement, the alternatives that would make its value carry autograd
  history (every return must have one); absent when it never returns such a value; ["g", position]:
  the argument at that position of a module-level function, where that parameter is never bound
  again (`return torch.div(x, norm)`: the caller's argument's history is the result's), and the
  function holds no form that ends it and every path returns (given_history.py);
- `keeps`: a method `update` / `add` that adds a parameter to `self` as it is (a running meter's:
  `self.sum += val * n`);
- a class's `forwards`: the attribute holding the module its constructor is given, where its
  `forward` only ever returns that module's call (SAGAN's `SpectralNorm`: `forwarded_attribute`);
- `makes`: a module-level function without `builds` that returns a model it builds alone or as
  the first item of a tuple, moved (`.cuda()`) or wrapped in `DataParallel` on the way
  (robustness's `make_and_restore_model`): the constructors, as in `builds`;
- `fresh`: a module-level function or a method whose every return is a tensor it has just made on the host
  (memlint.analysis.host_returns: `causal_mask(n)` returning `torch.triu(torch.ones(1, n, n)) == 0`);
- `unsaved`: a module-level function whose every return is a new tensor that its producer keeps
  nothing of for backward (a torch function of `tables.FRESH_RESULT_FUNCTIONS`: `batch_norm(x,
  params, base, mode)` returning `F.batch_norm(...)`); an activation may overwrite it (ML003);
- `flags`: a module-level function's parameters that default to False, each [name, position]
  (-1: keyword-only), and a class `__init__`'s, positioned as a construction passes them, and `passes`: its calls of a function of the project, [reference, positions,
  keywords], that turn some of the callee's arguments on (`True`, an accelerator test:
  memlint.analysis.flag_arguments), for the project pass's `flags_on`;
- `picks`: a module-level function that returns a class looked up by a name known only at run
  time: "globals" (`return globals()[name]`), "import" (`importlib.import_module(...)`, then
  `getattr(lib, name)` or an item of `lib.__dict__` returned); `abstract`: a method whose body only
  says it is to be overridden (`pass`, a docstring, `raise NotImplementedError`);
- the file's `registries`: module-level dicts of names only its own module-level statements fill
  (`REGISTRY["q_learner"] = QLearner`: memlint.analysis.registries), name -> entries as written;
  `fills`: the imported names (or `module.NAME` chains) the file uses other than reading an entry,
  `NAME[key]` (it may fill or hand on another file's registry, which is then not known);
- `calls`: its call sites of functions that may be the project's: the callee as written (a
  reference, below), the grad mode the code around the call sets, the loop around it and whether
  the call is behind an `if` or in an exception handler ("configured" where every such `if` picks
  among the run's configured alternatives: memlint.analysis.configured_choices); for a call of a
  module-level name, a fifth entry where some argument is a model the scope froze before the call
  ([slot, true]) or a `held` parameter passed on ([slot, name]), slot a position or a keyword
  (memlint.analysis.frozen_arguments); `held`: a module-level function's parameters, [name,
  position], that it runs (`model(L)`) or passes on and never binds again;
- `may`: its method calls on a receiver whose class it does not know, deduplicated, with the grad
  mode around them, whether the loop around them trains (None outside loops), that loop (as in
  `calls`) and whether the call is behind an `if`: ["u", method]
  (`obj.visualize_results()`: any method of the project so named) or ["k", constructors, method, receiver, alternatives]
  (`gan` bound to `GAN(args)` in one branch and `BEGAN(args)` in another: the method of any of
  those classes; `alternatives`: the bindings are one choice made before the call's loop).

References to other code, resolved by the project pass: ["n", name] (a module-level name),
["d", "pkg.mod.f"] (a dotted name whose root is a module-level import), ["s", method] (`self.m()`),
["i", "Class", method, "obj"] (`obj.m()` with `obj = Class(...)` earlier in the function; method
"__call__" for `obj(x)`, an nn.Module's forward; "factory()" as the class for an instance of the class a
call of the project function `factory` returns, `obj = cls(...)` with `cls = factory(name)`, as in a
factory's `builds`; "REGISTRY[]" for an instance of one of a registry dict's entries, `obj =
REGISTRY[key](cfg, ...)`; ["i", "pkg.Class", method] for `self.attr.m()` where the
class builds `self.attr = Class(...)`: its `attrs`, qualified), ["m", method]
(`model.loss()`: a method of any of the project's nn.Module classes, on a receiver named like a
model), ["c"] (`self`
is an nn.Module: `self(x)`), ["a", attr] (`self.attr` was built by a constructor that may be an
nn.Module class).  An alternative is `true` (certainly) or one of these references.

The history rules here are those of memlint.analysis.values, read as "certainly": model calls,
`self(x)` in an nn.Module, losses, and arithmetic, fields and graph-preserving methods of those.
"""

from __future__ import annotations

import ast
import builtins
import functools
from typing import Any, Callable, Iterator, Optional

from memlint.analysis import call_rules, evidence, tables
from memlint.analysis.ast_nodes import child_nodes, own_nodes, subtree
from memlint.analysis.configured_choices import configured_choice
from memlint.analysis.counted_loops import enumerate_start, first_bound
from memlint.analysis.deep_imports import imported_frameworks
from memlint.analysis.frozen_arguments import BINDING_NODES, binding_lines, freezes, positions, rebound, thawed_names
from memlint.analysis.flag_arguments import arguments_on, constructor_flags, default_false_flags
from memlint.analysis.given_history import given_history_ends, may_fall_through
from memlint.analysis.host_returns import reshaped_parameter, returns_fresh_host_tensor
from memlint.analysis.mode_setters import held_models, held_models_evaled, literal_false, only_puts_held_models_in_eval
from memlint.analysis.naming import BATCH_SOURCE, DRAWS_DATA, OPTIMIZER_NAME, dotted, is_forward_name, named_like_model, steps_each_optimizer
from memlint.analysis.optimizers import builds_optimizer
from memlint.analysis.registries import filled_imports, registry_callee, registry_dicts
from memlint.analysis.run_loops import reconfigures_run
from memlint.analysis.shared_branches_ast import done_in_every_branch_ast

# The summary format's version: summaries written under another are not read (`_require` below).
# A bump adds one line to the top of this history, newest first (a merge of two bumps gets its own).
# 61: no `typed` / `types` (the 57 of type_arguments backed out: a host tensor's `x.type()` was taken for the device's)
# 60: `unsaved` through torch.einsum only with two operands or more (one may return a view of it)
# 59: the 58 (two 57s merged) and another 57 merged
# 58: the two 57s merged
# 57: `unsaved` also through torch.addcmul / addmm / mul / div / einsum / where / F.interpolate ... (tables.FRESH_RESULT_FUNCTIONS grew)
# 57: `switches`, a module's `forward` whose `if` tests read `self.training` or a defaulted parameter
# 57: `typed` and `types` (type_arguments: a parameter cast to a tensor's type string every caller passes)
# 56: no `fresh` for a decorated function, nor one whose tensor a method (`scatter_`, `copy_`) writes data into
# 55: the two 54s merged
# 54: both 53s merged: the method `mode` and the wider `fresh` / `configured` below
# 54: `mode` "eval" only where the method evals every model its class holds, "train" through `self.m()`, never an `async def`
# 53: a method's `mode`: "eval" where its body only puts the models self holds in eval mode, "train" where it may train one
# 53: `fresh` also of methods, through straight-line rebindings, reshaping helpers and masked fills;
#     `configured` calls also behind a configuration dict's entry or key (`hyp['loss_ota'] == 1`, `'k' in hyp`)
# 52: 51 and the other 45 merged: the frozen arguments' narrowing below
# 51: 50 and the other 45 merged: the parameter history's narrowing below
# 50: 49 and the other 45 merged: the registries' uses below
# 49: 48 without the tiles and flag chains (h-f013 backed out after review: unsound)
# 48: 47 and the other 44 merged: the above and parameter history below
# 47: 46 and the other 44 merged: the above and registries below
# 46: 45 and the other 44 merged: the fresh functions, frozen arguments, tiles and flag chains below
# 45: 44 and the other 44 merged: both the fresh torch functions and the frozen arguments below
# 44: `fresh` also for torch.sub / neg / sin / cos / log1p / erf (tables.FRESH_RESULT_FUNCTIONS grew with KEEPS_*)
# 45: a `calls` site's frozen arguments only up to a later statement that does anything else with the
#     model (a new head, handing it to a call), nor from a parameter loop that breaks or sets True
# 44: a `calls` site's frozen arguments also where a nested block freezes the model before the call,
#     or a chain of module methods does (`X.eval().requires_grad_(False)`)
# 44: a function whose only step loops walk tiles of one input (`_tiles_one_input`) no longer has `pass`;
#     a call in an `if` / `elif` chain of configuration flags (`configured_choices.flag_chain`) is "configured"
# 45: `fills` holds every imported name or `module.NAME` chain the file uses other than reading an entry
# 44: `registries` (module-level dicts of the project's classes or functions: registries.py), `fills` (imported
#     names the file adds entries to), "REGISTRY[]" as an `i` constructor (an instance of one of its entries)
# 45: no ["g", position] in a helper that may end without a return or holds a form ending the history
#     (an index output, an integer cast, a grad switch: memlint/analysis/given_history.py)
# 44: ["g", position] among `returns` alternatives: a module-level function's parameter, never bound again,
#     whose history the return carries (the project pass's `_passes_history`)
# 43: 42 and the other 42 merged: neither `norms` nor `inplace_on`
# 42: no `inplace_on` (the in-place switch fact backed out: unsound); `reach` for every file that
#     imports no torch, with every module it imports that is not the standard library's or a framework's
# 42: no `norms` (the norm keywords given something else: the fact that a norm parameter's default
#     reaches a layer through forwarded `**kwargs`, which asked it, backed out as unsound across files)
# 41: 40 and the `held` 36 merged
# 36: `held` (a module-level function's parameters it runs or passes on, never rebound) and a `calls`
#     site's fifth entry, the arguments handed over frozen or a held parameter passed on
#     (frozen_arguments)
# 40: 39 and the `deep` 36 merged
# 36: `deep`, the frameworks a file imports, and `reach`, the modules a file of another framework imports
#     (deep_imports); `inplace_on`, the activation classes a loop over `.modules()` switches to in place
#     (inplace_switches)
# 39: 38 and the `places` 37 merged
# 37: `places` (the file's code puts work on an accelerator: `.cuda()`, `.to(device)`, `device="cuda"`),
#     `unimplemented` (a method that raises NotImplementedError or is an @abstractmethod), a class's
#     `binds` (names its body binds other than by `def`), `inner` (the bases of classes defined inside
#     functions)
# 38: 37 and the `norms` 36 merged
# 37: both 36s below, merged
# 36: `norms`, the keywords named like a norm parameter the file gives something other than a torch norm
#     class (ML003, analysis/norm_layers.py)
# 36: ["p", method] for `super().m()` in a method (its bases' `m`); `builds` through a name the factory
#     binds only by its own `from ... import`s, one target per import (KAIR's `define_Model`)
# 36: a call's loop fact ends in "runs" for a loop that sets the run's configuration per item (`for
#     opt.weights in ...`: run_loops)
# 35: a ["k", ...] reference's fifth entry, whether its bindings are alternatives of one choice made
#     before the call's loop
# 34: ["k", ...] also for a receiver bound to a conditional expression of constructors (`A(c) if a else
#     B(c)`)
# 33: no `settings` / `varies` (the settings-fixed-for-a-run fact backed out: unsound); a chain's shared
#     statements only in the prefix every branch agrees on
# 32: both 31s below, merged
# 31: `settings` and `varies` (flag_arguments); a call site is not conditional behind an
#     `if`/`elif`/`else` chain whose every branch holds an equal copy of its statement (shared_branches)
# 31: no `updates` / loop step evidence for a `.step()` on a name ending in a schedule
#     (`self.model_optimizer_scheduler`, naming.OPTIMIZER_NAME)
# 30: 29 and the scheduler 28 merged
# 29: 28 and the 26 of batch iterators merged
# 28: no `updates` "step" for a loop over schedulers named like optimizers (`for opt_sched in
#     opt_scheds`)
# 28: 27 and the 26 of attribute flags merged
# 27: both 26s below, merged
# 26: loops over `dataiterator` / `trainiter` count as loops over batches (naming.BATCH_SOURCE)
# 26: `flags` also of a class's `__init__` (positioned as a construction passes them); a call's condition
#     "configured" behind configured choices only
# 26: `updates` "step" also for `opt.step()` in a function's only loop, over its optimizers (`for opt in
#     opt_list`)
# 26: `grads` also for a gradient computation in a nested function (the defining function's), `subs` (the
#     attributes of `self` a method calls as modules, their constructor known, each with the flag
#     guarding it), `makes`
# 25: no `unsaved` for a decorated function, a name bound again, a return passing `**kw` / `*args`
# 24: both 23s below, merged
# 23: `may` entries also under no_grad, with their loop and condition; `picks` (a function returning a
#     class looked up by name: `globals()[name]`, `importlib`), `abstract` (a placeholder method),
#     "factory()" as an `i` constructor or in `builds` (an instance of the class a call of factory
#     returns)
# 23: `unsaved`, a module-level function whose every return is a new tensor nothing keeps for backward
#     (F.batch_norm)
# 22: `fresh` through torch's `exp2`, `tan`, `erf` of one host tensor (one ELEMENTWISE_FUNCTIONS, tables)
# 21: a loop's `.step()` evidence (trains) also by the receiver's construction in the file, as `updates`
# 20: `flags` and `passes` (flag_arguments); `fresh` through an index of a host tensor, torch's
#     elementwise functions of one and a parameter defaulting to a number (host_returns)
# 19: an optimizer's `step` also by the receiver's construction in the file (`Dopt = optim.Adam(...)`);
#     `builds` through a returned local name bound only to constructors (a `None` placeholder aside), a
#     constructor the function imports itself as its import target [module, name, level]
# 18: `keeps` again for `self.stats[k] += val` (a second `_on_self` had shadowed the meters' own)
# 17: no ["i", ...] for a known third-party callee, `builds` through `.to(device)`, `model_grad` for any
#     `self.<attr>(...)` / `self.<attr>.<m>(...)` outside no_grad
# 16: a function's `closure`, the inner function it returns (keyed "outer:inner"), ["r", name, factory
#     reference] for a call of a name bound to a project call's result
# 15: a class's `forwards`, the attribute its `forward` returns the call of
# 14: `grads`, `evals`, `model_grad`
# 13: `builds` (a factory's constructors), ["i", callee, m, obj] for `obj = callee(...)` of an
#     uncapitalised project callee, besides the call's other reference
# 12: ["n", f] for a call of a name only a star import can bind, `moves` through `if cuda: x = x.cuda()`
#     then `return Variable(x)`
# 11: a marimo cell's classes and functions, ["i", C, m] for `self.attr.m()` with `self.attr = C(...)`
# 10: `host` also for a file that names CUDA only to hide the GPUs, ["i", C, "__call__", obj] for
#     `obj(x)`
# 9: autograd calls and flushes through a star-imported `torch`, `keeps`
# 8: the receiver of `i` and `k` references, a class's `adam`
# 7: `fresh`
# 6: `pass`
# 5: `may`
# 4: `updates`, `moves`
# 3: `host`, a file that never mentions an accelerator
# 2: `stars`, the modules a file star-imports
FORMAT = 61

EMPTY_CACHE = frozenset(
    {"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache", "torch.mps.empty_cache",
     "torch.xpu.empty_cache", "torch.xpu.memory.empty_cache"}
)  # fmt: skip
GC_COLLECT = "gc.collect"
_FLUSHES = EMPTY_CACHE | {GC_COLLECT}
# Tensor methods: a call of one through an attribute chain (`self.x.view()`) is nothing of the project's.
_TENSOR_METHODS = frozenset({*tables.GRAPH_PRESERVING_METHODS, *tables.GRAPH_FREE_METHODS, *tables.VIEW_METHODS})
# Functions whose result a framework backpropagates (Lightning, HF Trainer).
TRAINING_HOOKS = frozenset({"training_step"})
_STEP_NAMES = frozenset({"training_step", "train_step", "validation_step", "eval_step", "test_step", "predict_step"})
# Modules whose functions are never the project's: calls through them are not recorded.
_FOREIGN_ROOTS = frozenset(
    {"torch", "numpy", "math", "os", "sys", "re", "json", "time", "random", "logging", "warnings", "typing",
     "collections", "functools", "itertools", "copy", "inspect", "dataclasses", "abc", "pathlib", "shutil",
     "subprocess", "gc", "pickle", "argparse", "builtins", "contextlib", "enum", "string", "io", "glob"}
)  # fmt: skip
# Third-party packages whose uncapitalised calls (`gym.make(...)`, `AutoTokenizer.from_pretrained(...)`)
# build no instance of the project's classes: `_may_build` / `_built_by` record no ["i", ...] for them.
_THIRD_PARTY_ROOTS = frozenset(
    {"gym", "gymnasium", "transformers", "diffusers", "accelerate", "datasets", "tokenizers", "timm",
     "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning", "sklearn", "scipy", "pandas",
     "matplotlib", "PIL", "cv2", "tqdm", "wandb", "tensorboardX", "yaml", "h5py", "einops", "apex",
     "deepspeed", "fairseq", "huggingface_hub", "peft", "omegaconf", "hydra", "jax", "tensorflow", "keras",
     "skimage", "imageio", "librosa", "soundfile", "networkx", "dgl", "torch_geometric", "mmcv", "detectron2",
     "seaborn", "requests", "nltk", "spacy", "gensim", "ray", "optuna", "safetensors", "sentencepiece",
     "open_clip", "kornia", "albumentations", "lpips", "mujoco", "dm_control", "d4rl", "baselines",
     "stable_baselines3", "numba", "visdom", "tensorboard", "absl", "easydict", "xformers", "bitsandbytes",
     "triton", "pycocotools", "evaluate", "nibabel", "open3d", "joblib", "psutil", "pynvml", "fire", "click"}
)  # fmt: skip
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Expressions `_alternatives` may find history in.
_MAY_CARRY = frozenset({ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Attribute, ast.Name, ast.Tuple})
_SCOPE_ENDS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Module)


def summarize(source) -> Optional[dict]:
    """The summary of a `memlint.prescreen.Source` (its AST and node index are shared with the
    screens); None when CPython cannot compile it."""
    if source.tree is None:
        return None
    return _Summary(source).run()


class _Summary:
    def __init__(self, source) -> None:
        self.source = source
        self.tree: ast.Module = source.tree
        self.imports: dict[str, list] = {}  # local name -> [module, name or None, level]
        self.stars: list[list] = []  # `from module import *`: [module, level]
        self.defs: set[str] = set()  # module-level functions and classes
        self.classes: dict[str, dict[str, Any]] = {}
        # "" is the module's own code, "?" the code of nested functions (who calls them is unknown)
        self.functions: dict[str, dict[str, Any]] = {"": {"calls": []}, "?": {"calls": []}}
        self.keys: dict[int, str] = {}  # id(function node) -> key
        self.nodes: dict[str, ast.AST] = {}  # key -> function node
        self.chain_dumps: dict[int, frozenset[int]] = {}  # id(top of an if/elif/else chain) -> its shared statements (shared_branches)
        self.chain_tops: dict[int, tuple[list[int], ast.If]] = {}  # id(an `if` or `elif`) -> its chain's ids and top
        self.periodic = False
        self.configured = False
        self.class_of: dict[int, str] = {}  # id(method node) -> class name
        self.locals: dict[str, dict[str, list[ast.Assign]]] = {}  # key -> name -> its assignments
        self.given: dict[tuple[str, str], Optional[int]] = {}  # (key, name) -> `_given_position`
        self.plain_paths: dict[str, bool] = {}  # key -> `_keeps_given_history`
        self.backpropagated: dict[str, frozenset[str]] = {}  # key -> names backward is called on
        self.constructed: Optional[set[str]] = None
        self.self_attributes: Optional[tuple[set[str], dict[str, set[str]]]] = None
        self.loop_index: dict[int, int] = {}
        self.step_loops: Optional[set[int]] = None
        self.training_loops: set[int] = set()
        self.cells: Optional[frozenset[int]] = None  # ids of a marimo notebook's cell functions
        self.from_import_scopes: Optional[set[int]] = None  # ids of the functions holding a `from ... import`
        self.places = False  # `places`: a call of the file's code puts work on an accelerator
        self.registries: dict[str, list[str]] = {}  # module-level registry dicts (registries.py)

    # ------------------------------------------------------------------ the module's names

    def run(self) -> dict:
        self._module_names(self.tree.body)
        self.registries = registry_dicts(self.source)
        no_grad_decorators = self._no_grad_decorators()
        for key, record in self.functions.items():
            if key and key != "?":
                self._decorations(key, record, no_grad_decorators)
        for call in self.source.nodes(ast.Call):
            self._call(call)  # type: ignore[arg-type]
            if not self.places and _places_on_accelerator(call):  # type: ignore[arg-type]
                self.places = True
        returns: dict[str, list[ast.Return]] = {}
        for node in self.source.nodes(ast.Return):
            returns.setdefault(self._function_of(node) or "?", []).append(node)  # type: ignore[arg-type]
            if node.value is not None:  # type: ignore[attr-defined]
                self._return(node)  # type: ignore[arg-type]
        generators = set()
        for node in self.source.nodes(ast.Yield, ast.YieldFrom):
            key = self._function_of(node)
            if key:
                generators.add(key)
                self.functions[key]["returns"] = None  # a generator: calling it returns no tensor
        self._fresh_returns(returns, generators)
        self._unsaved_returns(returns, generators)
        self._factories(returns, generators)
        self._pickers(returns, generators)
        self._abstract_methods()
        self._mode_methods()
        self._moved_parameters()
        self._passes()
        frameworks, reached = imported_frameworks(self.source)
        fills = [name for name in filled_imports(self.source, self.imports) if self._may_be_a_project_callee(name.partition(".")[0])]
        return {
            "format": FORMAT,
            "imports": self.imports,
            **({"stars": self.stars} if self.stars else {}),
            **({"deep": frameworks} if frameworks else {}),
            **({"reach": reached} if reached else {}),
            **({"host": True} if not _names_accelerator(self.source.text) else {}),
            **({"places": True} if self.places else {}),
            **({"inner": inner} if (inner := self._inner_bases()) else {}),
            **({"registries": self.registries} if self.registries else {}),
            **({"fills": fills} if fills else {}),
            "defs": sorted(self.defs),
            "classes": self.classes,
            "functions": {k: _compact(r) for k, r in self.functions.items()},
        }

    def _module_names(self, statements) -> None:
        imported: dict[str, list] = {}
        twice: set[str] = set()
        others: set[str] = set()
        # Imports in the `if __name__ == "__main__":` block: a script's own test code, which often
        # imports the file's classes back from itself (`from weight_drop import WeightDrop`); it
        # runs only when the file is run as a script, so such an import does not make the
        # file's definition ambiguous.
        script_only = {id(s) for s in self._main_block_statements(statements)}
        defined = {s.name for s in statements if isinstance(s, (*_FUNCTIONS, ast.ClassDef))} if script_only else set()
        for statement in self._module_statements(statements):
            if id(statement) in script_only and isinstance(statement, (ast.Import, ast.ImportFrom)):
                if any((alias.asname or alias.name.partition(".")[0]) in defined for alias in statement.names):
                    continue
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    local = alias.asname or alias.name.partition(".")[0]
                    target = [alias.name if alias.asname else local, None, 0]
                    if local in imported and imported[local] != target:
                        twice.add(local)
                    imported[local] = target
            elif isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    if alias.name == "*":
                        self.stars.append([statement.module or "", statement.level])
                        continue
                    local = alias.asname or alias.name
                    target = [statement.module or "", alias.name, statement.level]
                    if local in imported and imported[local] != target:
                        twice.add(local)
                    imported[local] = target
            elif isinstance(statement, _FUNCTIONS):
                others.add(statement.name)
                self._function(statement, statement.name, None)
            elif isinstance(statement, ast.ClassDef):
                others.add(statement.name)
                self._class(statement)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                if isinstance(statement.value, ast.Constant) and statement.value.value is None:
                    continue  # `except ImportError: helper = None` keeps the import
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                others.update(t.id for t in targets if isinstance(t, ast.Name))
        # A name bound twice (two imports, or an import and a definition) is ambiguous: dropped.
        ambiguous = twice | (set(imported) & others)
        self.imports = {k: v for k, v in imported.items() if k not in ambiguous}
        self.defs = {name for name in others if name not in ambiguous and (name in self.functions or name in self.classes)}
        for statement in self._module_statements(statements):  # (the imports are known now)
            if isinstance(statement, ast.ClassDef) and statement.name in self.classes:
                skips = self._builds_own_adam(statement)
                if skips is not None:
                    self.classes[statement.name]["adam"] = skips
                if len(statement.bases) == 1 and self.qualify(dotted(statement.bases[0])) == "torch.nn.Module":
                    forwarded = forwarded_attribute(statement)
                    if forwarded is not None:
                        self.classes[statement.name]["forwards"] = forwarded
        for name in ambiguous:
            if self.functions.pop(name, None) is not None:
                for key in [k for k in self.functions if k.startswith(name + ":")]:
                    del self.functions[key]  # (its returned closure)
            if self.classes.pop(name, None) is not None:
                for key in [k for k in self.functions if k.startswith(name + ".")]:
                    del self.functions[key]
        if ambiguous:  # a dropped function's own statements (its returns) belong to no record
            self.keys = {i: k for i, k in self.keys.items() if k in self.functions}

    def _main_block_statements(self, statements) -> Iterator[ast.stmt]:
        for statement in statements:
            if isinstance(statement, ast.If) and _is_main_guard(statement.test):
                yield from self._module_statements(statement.body)

    def _module_statements(self, statements) -> Iterator[ast.stmt]:
        if self.cells is None:
            self.cells = _marimo_cells(self.tree.body) if "marimo" in self.source.text else frozenset()
        for statement in statements:
            yield statement
            if id(statement) in self.cells:  # a marimo cell's definitions are the notebook's globals (notebooks.py)
                yield from self._module_statements(statement.body)  # type: ignore[attr-defined]
            elif isinstance(statement, ast.If):
                yield from self._module_statements(statement.body)
                yield from self._module_statements(statement.orelse)
            elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                for block in (statement.body, statement.orelse, statement.finalbody):
                    yield from self._module_statements(block)
                for handler in statement.handlers:
                    yield from self._module_statements(handler.body)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                yield from self._module_statements(statement.body)

    def _class(self, node: ast.ClassDef) -> None:
        bases = [name for name in (dotted(b) for b in node.bases) if name]
        record: dict[str, Any] = {"bases": bases}
        self.classes[node.name] = record
        binds: set[str] = set()
        for statement in node.body:
            if isinstance(statement, _FUNCTIONS):
                self._function(statement, f"{node.name}.{statement.name}", node.name)
            elif not isinstance(statement, ast.ClassDef):
                binds.update(_statement_binds(statement))
        if binds:
            record["binds"] = sorted(binds)  # `forward_backward = Engine.score`: a method the pass does not see

    def _inner_bases(self) -> list[str]:
        """The last part of each base of a class defined inside a function (`make_evaluator()`'s
        `class Evaluator(Engine)`): a subclass whose methods the project pass does not see."""
        found: set[str] = set()
        for node in self.source.nodes(ast.ClassDef):
            if self._function_of(node):
                found.update(name.rpartition(".")[2] for name in (dotted(b) for b in node.bases) if name)  # type: ignore[attr-defined]
        return sorted(found)

    def _builds_own_adam(self, node: ast.ClassDef) -> Optional[list[str]]:
        """When the class's `__init__` stores an Adam-family optimizer over the instance's own
        parameters (`self.optim = optim.Adam(params=self.parameters(), ...)`: BigGAN's Generator),
        the parameters whose truth returns before it (`if no_optim: return`: an EMA copy built with
        `no_optim=True` gets none); else None.  A model of such a class cast to float16 is trained
        in pure half precision by it (ML015)."""
        if self.source.structure_is_reliable and not self.source.mentions(*tables.ADAM_CLASSES):
            return None  # no Adam-family class is named in the file: no statement can store one (no walk)
        for method in node.body:
            if not isinstance(method, _FUNCTIONS) or method.name != "__init__":
                continue
            skips: list[str] = []
            for statement in method.body:
                if type(statement) is ast.If and type(statement.test) is ast.Name and [type(s) for s in statement.body] == [ast.Return]:
                    skips.append(statement.test.id)  # `if no_optim: return`
                    continue
                if self._stores_own_adam(statement):
                    return skips
                if any(type(n) is ast.Return for n in subtree(statement)):
                    return None  # another way out before it: not every instance has one
        return None

    def _stores_own_adam(self, block: ast.AST) -> bool:
        """Does `block` store an Adam-family optimizer over `self.parameters()` on `self`?"""
        for statement in subtree(block):
            if type(statement) is not ast.Assign or type(statement.value) is not ast.Call:
                continue
            target = statement.targets[0]
            if type(target) is not ast.Attribute or type(target.value) is not ast.Name or target.value.id != "self":
                continue
            call = statement.value
            if self.qualify(dotted(call.func)) not in _ADAM_FAMILY:
                continue
            given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "params")]
            if any(_own_parameters(arg) for arg in given):
                return True
        return False

    def _function(self, node, key: str, class_name: Optional[str]) -> None:
        self.keys[id(node)] = key
        self.nodes[key] = node
        if class_name is not None:
            self.class_of[id(node)] = class_name
        record: dict[str, Any] = {"line": node.lineno, "calls": []}
        if class_name is not None and node.args.args + node.args.posonlyargs:
            record["self"] = (node.args.posonlyargs + node.args.args)[0].arg
            if node.name in tables.METER_METHODS and _keeps_a_parameter(node):
                record["keeps"] = True
        flags = None
        if class_name is None and "." not in key:
            flags = default_false_flags(node)
        elif class_name is not None and key == f"{class_name}.__init__" and record.get("self"):
            flags = constructor_flags(node)  # a construction turns them on (`if self.flag:` in its methods)
        if flags:
            record["flags"] = flags
        self.functions[key] = record
        inner = returned_closure(node)
        if inner is not None:
            self._closure(inner, key, record)

    def _closure(self, inner, outer_key: str, outer: dict) -> None:
        """Summarise the inner function `outer_key` returns (`returned_closure`) as a function of
        its own, keyed "outer:inner" ("RVAE.trainer:train"; a method's closure keeps the class
        before the first dot and the method's `self`, which it reads from the enclosing call): a
        caller that binds the result and calls it (`train_step = rvae.trainer(opt)`, then
        `train_step(...)`: summaries' ["r", name, factory reference]) runs it."""
        key = f"{outer_key}:{inner.name}"
        self.keys[id(inner)] = key
        self.nodes[key] = inner
        record: dict[str, Any] = {"line": inner.lineno, "calls": []}
        if "self" in outer:
            record["self"] = outer["self"]
        self.functions[key] = record
        outer["closure"] = key

    # ------------------------------------------------------------------ qualified names in this file

    def qualify(self, name: Optional[str]) -> Optional[str]:
        """What a dotted name means through this file's absolute imports: "nn.Linear" -> "torch.nn.Linear"."""
        if name is None:
            return None
        root, _, rest = name.partition(".")
        target = self.imports.get(root)
        if target is None and self.stars and root in tables.STAR_IMPORT_CONVENTION and root not in self.defs:
            target = [tables.STAR_IMPORT_CONVENTION[root], None, 0]  # only a star import can bind it (Context._from_star)
        if target is None or target[2]:
            return None
        base = target[0] if target[1] is None else f"{target[0]}.{target[1]}"
        return f"{base}.{rest}" if rest else base

    def _may_be_the_projects(self, name: str) -> bool:
        """Could `name` refer to the project's code: a module-level definition or a non-foreign import?"""
        root = name.partition(".")[0]
        return root in self.defs or (root in self.imports and not self._is_foreign(name))

    def _is_foreign(self, name: str) -> bool:
        target = self.imports.get(name.partition(".")[0])
        return target is not None and not target[2] and target[0].partition(".")[0] in _FOREIGN_ROOTS

    # ------------------------------------------------------------------ decorators and hooks

    def _no_grad_decorators(self) -> set[str]:
        """The file's functions that make the function they wrap run without gradients: their body
        calls one of their parameters inside `with torch.no_grad()`, or returns `torch.no_grad()(fn)`."""
        found: set[str] = set()
        if not self.source.mentions("no_grad", "inference_mode"):
            return found
        for node in self.source.nodes(ast.With, ast.AsyncWith, ast.Call):
            if isinstance(node, ast.Call):
                if not (isinstance(node.func, ast.Call) and self.qualify(dotted(node.func.func)) in tables.NO_GRAD_CONTEXTS):
                    continue
                calls = [node]
            elif any(self._context_mode(item.context_expr) == "off" for item in node.items):  # type: ignore[attr-defined]
                calls = [n for s in node.body for n in subtree(s) if isinstance(n, ast.Call)]  # type: ignore[attr-defined]
            else:
                continue
            outermost = None
            params: set[str] = set()
            for ancestor in self.source.ancestors(node):
                if isinstance(ancestor, _FUNCTIONS):
                    outermost = ancestor
                    params.update(a.arg for a in (*ancestor.args.posonlyargs, *ancestor.args.args, *ancestor.args.kwonlyargs))
            if outermost is None or id(outermost) not in self.keys:
                continue
            for call in calls:
                arguments = call.args if call is node else [call.func]
                if any(isinstance(a, ast.Name) and a.id in params for a in arguments):
                    found.add(self.keys[id(outermost)])
                    break
        for key in found:
            self.functions[key]["wraps_no_grad"] = True
        return found

    def _decorations(self, key: str, record: dict, no_grad_decorators: set[str]) -> None:
        node = self.nodes[key]
        class_name = self.class_of.get(id(node))
        name = node.name
        if class_name is not None:
            if name in tables.NO_GRAD_HOOKS or name.startswith(tables.NO_GRAD_HOOK_PREFIXES):
                record["hook"] = "no-grad"
                record["grad"] = "off"
            elif any(name in tables.NO_GRAD_FRAMEWORK_METHODS.get(b.rpartition(".")[2], ()) for b in self.classes[class_name]["bases"]):
                record["hook"] = "no-grad"
                record["grad"] = "off"
            if name in tables.PER_BATCH_HOOKS:
                record.setdefault("hook", "per-batch")
            if name in TRAINING_HOOKS:
                record["hook"] = "training"
            if name == "forward" and _switches(node):
                record["switches"] = True
        if "grad" in record:
            return
        others = []
        for decorator in node.decorator_list:
            mode = self._context_mode(decorator)
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qualified = self.qualify(dotted(target))
            if mode is None and not isinstance(decorator, ast.Call):
                if qualified in tables.NO_GRAD_CONTEXTS:
                    mode = "off"
                elif qualified in tables.ENABLE_GRAD_CONTEXTS:
                    mode = "on"
            if mode is None and isinstance(target, ast.Name) and target.id in no_grad_decorators:
                mode = "off"
            if mode is not None:
                record["grad"] = mode
                return
            written = dotted(target)
            if written is not None and self._may_be_the_projects(written):
                others.append(written)  # maybe a project's own no-grad decorator, from another file
        if others:
            record["decorators"] = others

    def _context_mode(self, expr: ast.AST) -> Optional[str]:
        """The grad mode `with <expr>:` (or `@<expr>`) sets: "off", "on", "?", or None (not a grad context)."""
        if not isinstance(expr, ast.Call):
            return None
        qualified = self.qualify(dotted(expr.func))
        if qualified in tables.NO_GRAD_CONTEXTS:
            if qualified.endswith("inference_mode") and expr.args:
                flag = _literal_flag(expr)
                return "off" if flag == "on" else "on" if flag == "off" else "?"
            return "off"
        if qualified in tables.ENABLE_GRAD_CONTEXTS:
            return "on"
        if qualified in tables.SET_GRAD_ENABLED:
            return _literal_flag(expr) or "?"
        return None

    # ------------------------------------------------------------------ where a node runs

    def _where(self, node: ast.AST) -> Optional[tuple[str, Optional[str], Optional[ast.AST], bool]]:
        """(function key, grad mode set around it or None, innermost loop or None, conditional) for
        a node directly in a summarised function or the module's code; None inside a nested function
        or a class body.  Conditional, as memlint.analysis.context's call sites: behind an `if`
        inside the innermost loop (anywhere in the function when there is no loop) or in an
        exception handler.  `self.periodic` is set when one of those `if`s asks more than whether
        an accelerator is there (memlint.analysis.iteration.every_iteration); `self.configured`
        when it is conditional only behind `if`s that pick among the run's configured alternatives
        (`configured_choices.configured_choice`: `if args.attack == 'pgd':`, its `elif` and `else`)."""
        grad: Optional[str] = None
        loop: Optional[ast.AST] = None
        conditional = False
        self.periodic = False
        chosen = True  # every `if` met so far picks a configured alternative
        child = node
        statement = node if isinstance(node, ast.stmt) else None  # the simple statement holding `node`
        shared: set[int] = set()  # the `if`s of a chain whose every branch runs that statement
        for parent in self.source.ancestors(node):
            kind = type(parent)
            if statement is None and isinstance(parent, ast.stmt):
                statement = parent
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                if child in parent.decorator_list or _in(child, parent.args.defaults):
                    return None
                self.configured = conditional and chosen
                return self.keys.get(id(parent), "?"), grad, loop, conditional
            if kind is ast.ClassDef:
                return None  # a class body runs once, when the module is loaded
            if kind is ast.Module:
                self.configured = conditional and chosen
                return "", grad, loop, conditional
            if kind is ast.If:
                if child is not parent.test and loop is None and id(parent) not in shared:
                    shared.update(self._shared_chain(parent, statement))  # whichever branch runs, so does the statement
                if child is not parent.test and loop is None and id(parent) not in shared:
                    conditional = True
                    self.periodic = self.periodic or not _device_check(parent.test)
                    chosen = chosen and configured_choice(parent.test)
            elif kind is ast.ExceptHandler:
                conditional = self.periodic = True
                chosen = False
            elif kind in (ast.For, ast.AsyncFor):
                if loop is None and child is not parent.iter and child is not parent.target and not _in(child, parent.orelse):
                    loop = parent
            elif kind is ast.While:
                if loop is None and not _in(child, parent.orelse):
                    loop = parent
            elif kind in (ast.With, ast.AsyncWith):
                if grad is None and _in(child, parent.body):
                    for item in reversed(parent.items):
                        mode = self._context_mode(item.context_expr)
                        if mode is not None:
                            grad = mode
                            break
            if grad is None and isinstance(child, ast.stmt) and self._has_set_grad_statements:
                grad = self._set_before(parent, child)
            child = parent
        return None

    def _shared_chain(self, inner: ast.If, statement: Optional[ast.stmt]) -> list[int]:
        """The ids of the `if`s of the chain that `inner` (an `if` or an `elif`) belongs to, where every
        branch of the whole chain opens with the same statements up to `statement` (`shared_branches`); else []."""
        if statement is None:
            return []
        found = self.chain_tops.get(id(inner))
        if found is None:  # climbed once per `if`: every call in a branch asks of the same chain
            chain = [inner]
            for parent in self.source.ancestors(inner):
                if type(parent) is not ast.If or len(parent.orelse) != 1 or parent.orelse[0] is not chain[-1]:
                    break
                chain.append(parent)
            found = self.chain_tops[id(inner)] = ([id(c) for c in chain], chain[-1])
        ids, top = found
        return ids if done_in_every_branch_ast(top, statement, self.chain_dumps) else []

    @property
    def _can_turn_grad_off(self) -> bool:
        return self.source.memo("summary-grad-off", lambda: self.source.mentions("no_grad", "inference_mode", "set_grad_enabled"))

    @property
    def _has_set_grad_statements(self) -> bool:
        return self.source.memo("summary-set-grad", lambda: self.source.mentions("set_grad_enabled"))

    def _set_before(self, parent: ast.AST, child: ast.stmt) -> Optional[str]:
        """`torch.set_grad_enabled(False)` as a statement earlier in the block holding `child`."""
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and child in block:
                for statement in reversed(block[: block.index(child)]):
                    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                        if self.qualify(dotted(statement.value.func)) in tables.SET_GRAD_ENABLED:
                            return _literal_flag(statement.value) or "?"
        return None

    # ------------------------------------------------------------------ calls

    def _call(self, call: ast.Call) -> None:
        """Record what a call tells about its function: a call site of maybe-project code, a model
        run, a flush, a gradient computation.  Most calls (`x.view()`, `self.fc(x)`, `F.relu(x)`)
        tell nothing and are left after a few dictionary lookups."""
        func = call.func
        reference = model = flush = sub = None
        trains = evals = to_train = False
        if type(func) is ast.Name:
            name = func.id
            if name == "self":
                model = ["c"]
            elif name in self.imports:
                qualified = self.qualify(name)
                if qualified in _FLUSHES:
                    flush = qualified
                elif qualified in tables.AUTOGRAD_FUNCTIONS:
                    trains = True
                elif not self._is_foreign(name):
                    reference = ["n", name]  # a function, or a class: its constructor runs its `__init__`
            elif name in self.defs and name not in self.classes:
                reference = ["n", name]
            else:
                if name in self.classes:  # a class of the file: its constructor runs its `__init__`
                    reference = ["n", name]
                else:  # `maml(x)` with `maml = Meta(args).to(device)`: the instance's `__call__` (an nn.Module's forward)
                    reference = ["v", name, "__call__"]
                if named_like_model(name) or name in self._module_evidence():
                    model = True
        elif type(func) is ast.Attribute:
            attr = func.attr
            receiver = func.value
            if attr in tables.BACKWARD_METHODS:
                trains = True
            elif attr == "step" and self._steps_an_optimizer(func):
                trains = True
            elif attr == "forward":
                model = True
            elif attr == "eval" and not call.args and not call.keywords:
                evals = True
            elif attr == "train" and literal_false(call):
                evals = True
            elif attr == "train":
                to_train = True  # `X.train()`, `X.train(mode)`: maybe training mode (a method's `mode`)
            if type(receiver) is ast.Name:
                root = receiver.id
                if root == "self":
                    if attr not in self._self_attributes()[0]:
                        reference = ["s", attr]  # a method, not a submodule (`self.fc = ...`)
                    else:
                        sub = attr  # `self.attacker(x)`: maybe a submodule's forward (`subs`)
                    if named_like_model(attr) or "self." + attr in self._module_evidence():
                        model = True
                elif root in self.imports:
                    qualified = self.qualify(f"{root}.{attr}")
                    if qualified in _FLUSHES:
                        flush = qualified
                    elif qualified in tables.AUTOGRAD_FUNCTIONS:
                        trains = True
                    elif not self._is_foreign(root):
                        reference = ["d", f"{root}.{attr}"]  # (a class: its constructor, `__init__`)
                elif root in self.classes:
                    reference = ["d", f"{root}.{attr}"]  # `Class.method(...)`
                else:
                    if named_like_model(attr):
                        model = True
                    if root in self._constructed_names():
                        reference = ["v", root, attr]  # maybe a method of an instance of a known class
                    elif _model_method(root, attr):
                        reference = ["m", attr]  # `model.loss(...)`: a method of the project's nn.Modules
                    elif _may_be_a_method(attr):
                        reference = ["u", attr]  # `obj.visualize_results()`: any project method so named
            elif type(receiver) is ast.Call and type(receiver.func) is ast.Name and receiver.func.id == "super":
                if "super" not in self.defs and "super" not in self.imports:
                    reference = ["p", attr]  # `super().m()`: a base class's `m` (checked below, once the method is known)
            elif attr not in _TENSOR_METHODS:
                chain = dotted(func) if _root(receiver) in self.imports else None
                starred = dotted(func) if chain is None and _root(receiver) not in self.defs else None
                if starred is not None and self.qualify(starred) is not None:
                    # `torch.autograd.grad(...)` where only a star import binds `torch`
                    # (`from utils import *`, whose module imports torch): qualify's convention
                    qualified = self.qualify(starred)
                    if qualified in _FLUSHES:
                        flush = qualified
                    elif qualified in tables.AUTOGRAD_FUNCTIONS:
                        trains = True
                elif chain is not None:
                    qualified = self.qualify(chain)
                    if qualified in _FLUSHES:
                        flush = qualified
                    elif qualified in tables.AUTOGRAD_FUNCTIONS:
                        trains = True
                    elif not self._is_foreign(chain):
                        reference = ["d", chain]
                elif type(receiver) is ast.Attribute and type(receiver.value) is ast.Name and receiver.value.id == "self":
                    reference = ["t", receiver.attr, attr]  # `self.decoder.recognize_beam(...)`: resolved below by the class's `attrs`
                elif named_like_model(attr) and _root(receiver) != "self":
                    model = True  # `trainer.model(x)`
        # `self.actor(obs)`, `self.model.act(obs)`: maybe a model run the names do not show; outside
        # the function's own `no_grad` it is `model_grad` (only a file that can turn gradients off
        # needs the fact: elsewhere every recognised run is outside such a block already)
        runs_own = type(func) is ast.Attribute and _self_or_its_attribute(func.value) and self._can_turn_grad_off
        if reference is None and model is None and flush is None and sub is None and not trains and not evals and not runs_own and not to_train:
            return
        where = self._where(call)
        if where is None:
            return
        key, grad, loop, conditional = where
        # a call's site behind configured choices only is "configured": on every iteration of a run that picks it
        site_condition = "configured" if conditional and self.configured else conditional
        record = self.functions[key]
        if reference is not None and reference[0] == "s" and ("." not in key or func.value.id != record.get("self")):  # type: ignore[union-attr]
            reference = None  # `self` is not the method's first parameter here
        if reference is not None and reference[0] == "p" and not _super_of_method(func.value, key, record):  # type: ignore[union-attr]
            reference = None  # not the `super()` of the method's own class and instance
        if reference is not None and reference[0] == "t":
            reference = self._attribute_instance(key, record, reference[1], reference[2])
        if sub is not None and key != "?" and self._attribute_instance(key, record, sub, "__call__") is not None:
            self._note_sub(key, record, call, sub)
        if key == "?":
            if trains and not (type(func) is ast.Attribute and func.attr == "step"):
                self._nested_gradients(call)
            model = flush = None
            trains = evals = False
            if reference is not None and reference[0] == "v":
                reference = None
        built = None
        if reference is not None and reference[0] == "v":
            constructor = self._instance_class(key, reference[1])
            if not constructor:
                # (kept besides what the call is taken for without it: the project pass may not
                # find a class behind the callee)
                callee = self._built_by(key, reference[1])
                built = ["i", callee, reference[2], reference[1]] if callee else None
            if constructor:
                reference = ["i", constructor, reference[2], reference[1]]  # (the receiver last: project.update_calls)
            elif reference[2] == "__call__":
                # a call of a name not bound to an instance: a function value, unknown, unless only a
                # star import of the project can bind it (`from utils import *` ... `tensor2var(z)`),
                # or it is bound to what a project call returns (the closure it may return)
                if self._from_star(key, reference[1]):
                    reference = ["n", reference[1]]
                else:
                    factory = self._factory_call(key, reference[1])
                    reference = ["r", reference[1], factory] if factory is not None else None
            else:
                reference = self._receiver_classes(key, reference[1], reference[2], loop)
                if (reference is None or reference[0] == "u") and _model_method(func.value.id, func.attr):  # type: ignore[attr-defined]
                    # `lm_model.log_prob(x)` in `evaluate(loader, lm_model)`, where the module's code
                    # binds `lm_model = LM(...)`: the parameter is named like a model all the same
                    reference = ["m", func.attr]  # type: ignore[attr-defined]
        if reference is not None and reference[0] in ("u", "k", "m") and key != "?":
            # (`model.sample()` may reach any project method so named, as for the per-step fact any
            # nn.Module's; a call under no_grad too: one all of whose candidates agree may be the only
            # call of them, `test_dataset.multi_scale_inference(...)` in an evaluation loop)
            self._may_call(record, reference if reference[0] != "m" else ["u", reference[1]], grad, loop, conditional)
        if reference is not None and reference[0] in ("u", "k"):
            reference = None
        if model == ["c"] and "." not in key:
            model = None
        if model is not None:
            record.setdefault("model", []).append(model)
        if (model is not None or runs_own) and grad != "off":
            record["model_grad"] = True  # (a run outside the function's own `no_grad` blocks)
        if trains and loop is None:
            record["trains"] = True  # (in a loop, the loop's fact says so)
            _note_update(record, func)
        elif trains and self._steps_each_optimizer(loop, func):
            # `for opt in opt_list: opt.step()`, the function's only loop: its step is the function's
            # on every call (`updates`, which ML017 and ML010 follow across files); `trains` and the
            # per-step facts built on it keep their loop-free meaning
            _note_update(record, func)
        if trains and not (type(func) is ast.Attribute and func.attr == "step"):
            record["grads"] = True  # (any form of backward, in a loop or not; not an optimizer's step)
        if evals:
            record["evals"] = True
        if to_train and "." in key and key.count(".") == 1 and ":" not in key:
            record["mode"] = "train"
        if flush is not None and loop is None and not self.periodic and key and "flush" not in record:
            record["flush"] = flush
        if key != "?" and "." not in key and ":" not in key and key and type(func) is ast.Name and func.id in self._parameters(key):
            self._note_held(key, record, func.id)  # `model(L)` of a parameter: its run is frozen where every caller's model is
        if reference is not None:
            entry = [reference, grad, self._loop_fact(loop), site_condition]
            if reference[0] in ("n", "d") and key != "?":
                handed = self._handed(key, record, call)
                if handed:
                    entry.append(handed)  # arguments handed over frozen, or a held parameter passed on (frozen_arguments)
            record["calls"].append(entry)
            if reference[0] in ("n", "d"):
                positions, keywords = arguments_on(call)
                if positions or keywords:  # `sinc(band, t, cuda)`: a flag of the callee's turned on (flag_arguments)
                    record.setdefault("passes", []).append([reference, positions, keywords])
        if built is not None:
            record["calls"].append([built, grad, self._loop_fact(loop), site_condition])

    def _parameters(self, key: str) -> dict[str, int]:
        """A function's parameters by name, their positions (frozen_arguments.positions), once."""
        return self.source.memo(("summary-parameters", key), lambda: positions(self.nodes[key]))  # type: ignore[no-any-return]

    def _note_held(self, key: str, record: dict, name: str) -> None:
        """Add the parameter `name` of module-level function `key` to its `held`, unless bound again."""
        held = record.setdefault("held", [])
        if any(entry[0] == name for entry in held) or name in record.get("rebound", ()):
            return
        bindings = self.source.memo("summary-bindings", lambda: binding_lines(self.source.nodes(*BINDING_NODES)))
        if key in self._value_names() or rebound(self.nodes[key], name, bindings):
            # (a function the file uses as a value, `[evaluate, score][level]`, has calls no site shows)
            record.setdefault("rebound", set()).add(name)  # (dropped before the summary is stored)
            return
        held.append([name, self._parameters(key)[name]])

    def _value_names(self) -> frozenset[str]:
        """The names the file reads other than as the callee of a call (`fns = [evaluate, score]`,
        `pool.map(infer, xs)`), once."""
        def build() -> frozenset[str]:
            called = {id(call.func) for call in self.source.nodes(ast.Call)}  # type: ignore[attr-defined]
            return frozenset(
                node.id for node in self.source.nodes(ast.Name) if type(node.ctx) is ast.Load and id(node) not in called  # type: ignore[attr-defined]
            )
        return self.source.memo("summary-value-names", build)  # type: ignore[no-any-return]

    def _handed(self, key: str, record: dict, call: ast.Call) -> list:
        """The arguments of `call` handed over frozen ([slot, true]) or a held parameter of `key` passed
        on ([slot, name]); slot the position or the keyword (frozen_arguments)."""
        slots: list[tuple[object, ast.AST]] = []
        for index, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                break
            slots.append((index, arg))
        slots.extend((kw.arg, kw.value) for kw in call.keywords if kw.arg is not None)
        if not any(type(value) is ast.Name for _, value in slots):
            return []
        frozen = {name for line, name, end in self._freezes(key) if line < call.lineno <= end}
        own = self._parameters(key) if key and "." not in key and ":" not in key else {}
        handed: list = []
        for slot, value in slots:
            if type(value) is not ast.Name:
                continue
            if value.id in frozen:
                handed.append([slot, True])
            elif value.id in own:
                self._note_held(key, record, value.id)
                if any(entry[0] == value.id for entry in record.get("held", ())):
                    handed.append([slot, value.id])
        return handed

    def _freezes(self, key: str) -> list[tuple[int, str, int]]:
        """frozen_arguments.freezes of the scope `key` ("" the module), once; none in a file that never
        mentions a freeze."""
        if not self.source.mentions("requires_grad", "requires_grad_", "freeze"):  # (identifiers: `requires_grad_` is its own)
            return []
        scope = self.nodes[key] if key else self.tree
        found = self.source.memo(("summary-freezes", key), lambda: freezes(scope))  # type: ignore[arg-type]
        if not found:
            return []
        thawed = self.source.memo("summary-thawed", lambda: thawed_names(self.tree))  # (a walk of the file, only where a scope freezes)
        return [(line, name, end) for line, name, end in found if name not in thawed]

    def _note_sub(self, key: str, record: dict, call: ast.Call, attr: str) -> None:
        """Record `self.attr(...)` in `subs` as [attr, guard]: guard [flag, position] where the call
        only runs inside `if flag:` of a parameter defaulting to False (robustness's
        `AttackerModel.forward` runs its attacker only `if make_adv:`), else None (unguarded wins)."""
        guard = None
        flags = {name: position for name, position in default_false_flags(self.nodes[key])}
        child: ast.AST = call
        for parent in self.source.ancestors(call):
            if type(parent) in _FUNCTIONS:
                break
            if type(parent) is ast.If and _in(child, parent.body) and type(parent.test) is ast.Name and parent.test.id in flags:
                guard = [parent.test.id, flags[parent.test.id]]
                break
            child = parent
        subs = record.setdefault("subs", [])
        for entry in subs:
            if entry[0] == attr:
                if guard is None or entry[1] != guard:
                    entry[1] = None
                return
        subs.append([attr, guard])

    def _nested_gradients(self, call: ast.Call) -> None:
        """A gradient computation in a nested function (`def get_adv_examples(x): ...
        torch.autograd.grad(loss, [x])` inside a forward that calls it: robustness's PGD `Attacker`)
        counts for the summarised function that defines it: running that function may compute
        gradients (`grads`).  Who calls the nested function is not known; silence when unsure."""
        for parent in self.source.ancestors(call):
            if type(parent) in _FUNCTIONS:
                key = self.keys.get(id(parent))
                if key is not None and key != "?":
                    self.functions[key]["grads"] = True
                    return
            elif type(parent) is ast.ClassDef:
                return

    def _attribute_instance(self, key: str, record: dict, attr: str, method: str) -> Optional[list]:
        """`self.decoder.recognize_beam(...)` in a method of a class whose code builds `self.decoder =
        Decoder(...)` (the class's `attrs`, `_self_attributes`): ["i", constructor, method], the
        constructor qualified through the imports (the project pass looks it up either way); None
        where `self` is not the method's first parameter or the attribute's class is not known."""
        if "." not in key or record.get("self") != "self":
            return None
        self._self_attributes()
        constructor = self.classes.get(key.partition(".")[0], {}).get("attrs", {}).get(attr)
        return ["i", constructor, method] if constructor else None

    def _receiver_classes(self, key: str, name: str, attr: str, loop: Optional[ast.AST] = None) -> Optional[list]:
        """`obj.m()` where `obj` is bound in the function more than once: ["k", constructors, "m", obj,
        alternatives] when every binding is a constructor call (`gan = GAN(args)` ... `gan = BEGAN(args)`, or
        `gan = GAN(args) if a else BEGAN(args)`: the call may reach the method of any of them), else ["u", "m"] (any project method so named),
        or None where the method name cannot be the project's.  `alternatives`: the bindings are one
        run's choice of class, all made before the call's `loop` (`_alternatives_before`), so the
        loop calls the method of whichever class was chosen on each of its steps."""
        values = self._local_values(key).get(name)
        constructors = []
        for assign in values or ():
            alternatives = _alternatives(assign.value) if type(assign.targets[0]) is ast.Name else [None]
            written = [dotted(value.func) if isinstance(value, ast.Call) else None for value in alternatives]
            if not all(constructor is not None and constructor.rpartition(".")[2][:1].isupper() for constructor in written):
                constructors = []
                break
            constructors.extend(written)  # type: ignore[arg-type]
        if constructors:
            return ["k", sorted(set(constructors)), attr, name, loop is not None and self._alternatives_before(values, loop)]
        return ["u", attr] if _may_be_a_method(attr) else None

    def _alternatives_before(self, assigns: list[ast.Assign], loop: ast.AST) -> bool:
        """Are the assignments (every binding of a name in its function) alternatives of one choice,
        all made before `loop`: one conditional expression (`trainer = A(c) if a else B(c)`), or one
        binding in each of some arms of one `if`/`elif`/`else` chain, the loop after the chain?  A
        name bound to one class, used, then bound to another (`runner = Train(m)`, its loop, then
        `runner = Export(m)`), or a class bound in an arm that holds the loop itself, is not."""
        if len(assigns) == 1 and type(assigns[0].value) is ast.IfExp:
            return assigns[0].end_lineno < loop.lineno and not self._within(loop, assigns[0])  # type: ignore[operator]
        tops, arms = set(), set()
        for assign in assigns:
            parent = next(self.source.ancestors(assign), None)
            if type(parent) is not ast.If:
                return False
            arm = (id(parent), "body" if any(statement is assign for statement in parent.body) else "orelse")
            if arm in arms:
                return False
            arms.add(arm)
            top = parent
            for above in self.source.ancestors(parent):  # up an `elif` chain: an `if` alone in its parent's `orelse`
                if type(above) is not ast.If or len(above.orelse) != 1 or above.orelse[0] is not top:
                    break
                top = above
            tops.add(id(top))
            chain = top
        return len(tops) == 1 and chain.end_lineno < loop.lineno and not self._within(loop, chain)  # type: ignore[operator]

    def _within(self, node: ast.AST, outer: ast.AST) -> bool:
        return any(ancestor is outer for ancestor in self.source.ancestors(node))

    def _may_call(self, record: dict, reference: list, grad: Optional[str], loop: Optional[ast.AST], conditional: bool) -> None:
        """Record a call that may reach project methods whose receiver's class is not known:
        deduplicated per function, with whether the loop around it trains (None outside any loop),
        the loop itself (`_loop_fact`) and whether the call is behind an `if`."""
        fact = self._loop_fact(loop)
        entry = [reference, grad, None if fact is None else fact[2], fact, conditional]
        may = record.setdefault("may", [])
        if entry not in may:
            may.append(entry)

    def _constructed_names(self) -> set[str]:
        """Names some `name = Capitalised(...)` (or `A(...) if a else B(...)`) binds anywhere in the file, or a call of a project
        callee, or a call of a name so bound (`algorithm = algorithm_class(...)` with `algorithm_class =
        algorithms.get_algorithm_class(name)`): a cheap filter for `obj.m()`."""
        if self.constructed is None:
            calls = [
                (node.targets[0].id, _unmoved(node.value).func)  # type: ignore[attr-defined]
                for node in self.source.nodes(ast.Assign)
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Name  # type: ignore[attr-defined]
                and type(node.value) is ast.Call  # type: ignore[attr-defined]
            ]  # fmt: skip
            self.constructed = {name for name, func in calls if _final_name(func)[:1].isupper() or self._may_build(func) or self._registry_built(func)}
            self.constructed |= {name for name, func in calls if type(func) is ast.Name and func.id in self.constructed}
            # `trainer = A(c) if a else B(c)`: an instance of one of the classes (`_receiver_classes`)
            self.constructed |= {
                node.targets[0].id for node in self.source.nodes(ast.Assign)  # type: ignore[attr-defined]
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Name and type(node.value) is ast.IfExp  # type: ignore[attr-defined]
                and all(type(v) is ast.Call and _final_name(v.func)[:1].isupper() for v in _alternatives(node.value))  # type: ignore[attr-defined]
            }  # fmt: skip
        return self.constructed

    def _steps_each_optimizer(self, loop: ast.AST, func: ast.AST) -> bool:
        """Is `func` `opt.step` in `for opt in opt_list:` (naming.steps_each_optimizer), a loop in
        no other loop of its function?  Its step is then the function's, on every call (a trainer's
        `step(opt_list)` helper), as memlint.analysis.iteration.optimizer_loop_target says for ML017."""
        if type(loop) is not ast.For or type(loop.target) is not ast.Name or type(func) is not ast.Attribute:  # type: ignore[attr-defined]
            return False
        if type(func.value) is not ast.Name or func.value.id != loop.target.id:  # type: ignore[attr-defined]
            return False
        iterable = loop.iter  # type: ignore[attr-defined]
        collection = iterable.id if type(iterable) is ast.Name else iterable.attr if type(iterable) is ast.Attribute else None
        if not steps_each_optimizer(loop.target.id, collection):  # type: ignore[attr-defined]
            return False
        periodic = self.periodic  # (`_where` sets it for the node it is asked about: keep the call's)
        outer = self._where(loop)
        self.periodic = periodic
        return outer is not None and outer[2] is None

    def _steps_an_optimizer(self, func: ast.Attribute) -> bool:
        """`x.step()` on an optimizer: `x` (its last name) bound in the file to what torch.optim or a
        known factory builds (`self.Gopt = optim.Adam(...)`; the twin of
        memlint.analysis.optimizer_bindings on this tree, direct bindings only), else named like one."""
        receiver = _receiver_name(func) or ""
        return bool(OPTIMIZER_NAME.search(receiver)) or receiver in self._constructed_optimizers()

    def _constructed_optimizers(self) -> frozenset[str]:
        def build() -> frozenset[str]:
            if not self.source.mentions("optim", "Adam"):
                return frozenset()
            found = set()
            for node in self.source.nodes(ast.Assign):
                value = node.value  # type: ignore[attr-defined]
                if type(value) is not ast.Call or not builds_optimizer(self.qualify(dotted(value.func))):
                    continue
                for target in node.targets:  # type: ignore[attr-defined]
                    if type(target) is ast.Name:
                        found.add(target.id)
                    elif type(target) is ast.Attribute:
                        found.add(target.attr)
            return frozenset(found)

        return self.source.memo("summary-optimizers", build)

    def _may_build(self, func: ast.expr) -> bool:
        """May a call of `func` build an instance of the project's classes (a factory function of
        the file, or a name or module of an import that is no foreign library's)?"""
        root = _root(func)
        return root is not None and self._may_be_a_project_callee(root)

    def _registry_built(self, func: ast.AST) -> Optional[str]:
        """`REGISTRY[key]` called, the dict the file's own registry (`registries`) or an import that may
        be the project's: "REGISTRY[]", an instance of one of its entries (the project pass reads them)."""
        registry = registry_callee(func)
        if registry is None or not (registry in self.registries or self._may_be_a_project_callee(registry.partition(".")[0])):
            return None
        return f"{registry}[]"

    def _may_be_a_project_callee(self, root: str) -> bool:
        """Is `root` (of an uncapitalised callee) defined in the file, or imported relatively or from
        a module that is no foreign library nor a known third-party package's?  (`import DDPG;
        DDPG.DDPG(...)` may build the project's agent; `gym.make(...)` builds none.)"""
        if root in self.defs:
            return True
        target = self.imports.get(root)
        return target is not None and (target[2] > 0 or target[0].partition(".")[0] not in _FOREIGN_ROOTS | _THIRD_PARTY_ROOTS)

    def _self_attributes(self) -> tuple[set[str], dict[str, set[str]]]:
        """The attributes assigned on `self` anywhere in the file, and per class; the classes'
        `attrs` (attribute -> the constructor that built it) are recorded on the way."""
        if self.self_attributes is not None:
            return self.self_attributes
        anywhere: set[str] = set()
        per_class: dict[str, set[str]] = {}
        for node in self.source.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign):
            targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
            for target in targets:
                elements = subtree(target) if type(target) in (ast.Tuple, ast.List) else (target,)
                for element in elements:
                    if type(element) is not ast.Attribute or type(element.value) is not ast.Name or element.value.id != "self":
                        continue
                    anywhere.add(element.attr)
                    value = getattr(node, "value", None)
                    if element is not target or type(value) is not ast.Call:
                        continue
                    constructor = dotted(value.func)
                    class_name = self._class_around(node) if constructor and constructor.rpartition(".")[2][:1].isupper() else None
                    if class_name is not None and class_name in self.classes:  # (not one dropped as ambiguous)
                        per_class.setdefault(class_name, set()).add(element.attr)
                        attrs = self.classes[class_name].setdefault("attrs", {})
                        attrs[element.attr] = self.qualify(constructor) or constructor
        self.self_attributes = (anywhere, per_class)
        return self.self_attributes

    def _class_around(self, node: ast.AST) -> Optional[str]:
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, _FUNCTIONS):
                if id(ancestor) in self.class_of:
                    return self.class_of[id(ancestor)]
            elif isinstance(ancestor, ast.ClassDef):
                return None
        return None

    def _from_star(self, key: str, name: str) -> bool:
        """Can only one of the file's star imports bind `name` where function `key` calls it: no
        binding in the function or at module level, no definition, no builtin?  (The project pass
        looks the name up in the starred modules, and leaves it unresolved where none defines it.)"""
        if not self.stars or key == "?" or name in self.defs or hasattr(builtins, name):
            return False
        return name not in self._local_values(key) and name not in self._local_values("")

    def _instance_class(self, key: str, name: str, moved: bool = False) -> Optional[str]:
        """`obj = Trainer(...)` bound once in the function: "Trainer" (as written).  With `moved`,
        rebindings `obj = obj.cuda()` / `obj.to(device)` (the same module back) are passed over."""
        values = self._local_values(key).get(name)
        if moved and values:
            values = [v for v in values if not _returns_itself(v, name)]
        if not values or len(values) != 1 or not isinstance(values[0].value, ast.Call) or type(values[0].targets[0]) is not ast.Name:
            return None
        constructor = dotted(_unmoved(values[0].value).func)
        if constructor is None or not constructor.rpartition(".")[2][:1].isupper():
            return None
        root = constructor.partition(".")[0]
        return constructor if root in self.defs or root in self.imports else None

    def _built_by(self, key: str, name: str) -> Optional[str]:
        """`obj = make_agent(...)` or `policy = discrete_BCQ.discrete_BCQ(...)` bound once in the
        function, the callee not capitalised: the callee as written when it is the file's or an
        import's (not a foreign library's).  The project pass decides what it builds: a class (whatever
        its name's case), or a factory function whose every return constructs one (`builds`)."""
        values = self._local_values(key).get(name)
        if values and len(values) > 1 and self._same_call(key, name) is not None:
            return self._picked_instance(key, _unmoved(values[0].value))  # (built twice alike: `algorithm = algorithm_class(...)`)
        if not values or len(values) != 1 or not isinstance(values[0].value, ast.Call) or type(values[0].targets[0]) is not ast.Name:
            return None
        callee = dotted(_unmoved(values[0].value).func)  # `make_agent(a).to(device)`: what make_agent builds
        if callee is None:
            # `learner = le_REGISTRY[args.learner](mac, ...)`: an instance of one of a registry dict's
            # classes ("le_REGISTRY[]"; the project pass reads the dict's entries, `registries`)
            registry = self._registry_built(_unmoved(values[0].value).func)
            # the dict's name must be the module's binding: a parameter or local of that name
            # (`def run(args, LEARNERS=EVALUATORS)`) holds whatever the caller hands
            return registry if registry is None or registry[:-2].partition(".")[0] not in self._local_values(key) else None
        if callee.rpartition(".")[2][:1].isupper():
            return None
        if self._may_be_a_project_callee(callee.partition(".")[0]):
            return callee
        # `algorithm = algorithm_class(...)` with `algorithm_class = algorithms.get_algorithm_class(name)`:
        # an instance of the class that project call returns ("algorithms.get_algorithm_class()")
        return self._picked_instance(key, _unmoved(values[0].value))

    def _factory_call(self, key: str, name: str) -> Optional[list]:
        """The reference of the call `name` is bound to, once, in function `key`, where that call may
        be the project's: `train_step = rvae.trainer(opt)` with `rvae = RVAE(...)` -> ["i", "RVAE",
        "trainer", "rvae"]; `step = make_step(model)` -> ["n", "make_step"]; `f = self.trainer()`
        -> ["s", "trainer"].  The project pass calls what that function returns (its `closure`)."""
        values = self._local_values(key).get(name)
        if not values or len(values) != 1 or type(values[0].value) is not ast.Call or type(values[0].targets[0]) is not ast.Name:
            return None
        func = values[0].value.func
        written = dotted(func)
        if written is None:
            return None
        root, _, rest = written.partition(".")
        if root in self.defs or (root in self.imports and not self._is_foreign(root)):
            return ["n", written] if not rest else ["d", written]
        if type(func) is not ast.Attribute or type(func.value) is not ast.Name:
            return None
        if root == "self" and "." in key and self.functions[key].get("self") == "self":
            return ["s", func.attr]
        constructor = self._instance_class(key, root, moved=True)
        return ["i", constructor, func.attr, root] if constructor else None

    def _loop_fact(self, loop: Optional[ast.AST]) -> Optional[list]:
        """None (not in a loop), or [index, header of a training/evaluation loop or None, whether
        the loop's own statements compute gradients]."""
        if loop is None:
            return None
        index = self.loop_index.setdefault(id(loop), len(self.loop_index))
        if self.step_loops is None:
            self.step_loops, self.training_loops = self._find_step_loops()
        fact = [index, _header(loop) if id(loop) in self.step_loops else None, id(loop) in self.training_loops]
        return [*fact, "runs"] if reconfigures_run(loop) else fact  # `for opt.weights in ...`: one run per item, no step

    def _passes(self) -> None:
        """`pass` of a function that runs a training or evaluation pass itself: a `for` loop of its own
        (not a nested function's) that is a step loop (`_find_step_loops`).  Its code outside that
        loop runs once per pass, so a loop that calls it runs once per pass (an epoch), not per step
        (memlint.analysis.iteration.runs_own_pass is the same fact on libcst's tree)."""
        loops = list(self.source.nodes(ast.For, ast.AsyncFor))
        if not loops:
            return
        if self.step_loops is None:
            self.step_loops, self.training_loops = self._find_step_loops()
        for loop in loops:
            if id(loop) in self.step_loops and not _refines_one_input(loop):
                key = self._function_of(loop)
                if key and key != "?":
                    self.functions[key]["pass"] = True

    def _find_step_loops(self) -> tuple[set[int], set[int]]:
        """The loops that memlint.analysis.iteration.is_step_loop accepts: over something named like a
        data loader, or whose own statements (not a nested loop's, function's or lambda's) call
        backward, an optimizer's step, a step function, or something named like a model or a loss.
        Found from the evidence up (few calls are evidence), not from every loop down."""
        found: set[int] = set()
        training: set[int] = set()
        for loop in self.source.nodes(ast.For, ast.AsyncFor):
            if any(BATCH_SOURCE.search(w) for w in _names(loop.iter)):  # type: ignore[attr-defined]
                found.add(id(loop))
        for call in self.source.nodes(ast.Call):
            evidence = _is_step_evidence(call, self._steps_an_optimizer)  # type: ignore[arg-type]
            if not evidence and _final_name(call.func) in ("grad", "backward"):  # type: ignore[attr-defined]
                evidence = "trains" if self.qualify(dotted(call.func)) in tables.AUTOGRAD_FUNCTIONS else None  # type: ignore[attr-defined]
            if not evidence:
                continue
            child = call
            for parent in self.source.ancestors(call):
                kind = type(parent)
                if kind in _LOOPS:
                    if not _in(child, parent.orelse):  # type: ignore[attr-defined]
                        found.add(id(parent))
                        if evidence == "trains":
                            training.add(id(parent))
                    break
                if kind in _SCOPE_ENDS:
                    break
                child = parent
        # a loop that hands a data loader to a call runs a pass per iteration, not a step, unless
        # it steps itself (memlint.analysis.iteration.hands_loader_to_call)
        for loop in self.source.nodes(ast.For, ast.AsyncFor):
            if id(loop) in found and id(loop) not in training and _hands_loader_to_call(loop):
                found.discard(id(loop))
        # a loop cut short by a counter at a small constant runs a fixed small count
        # (memlint.analysis.loop_bounds, the same fact on libcst's tree)
        for loop in self.source.nodes(*_LOOPS):
            if id(loop) in found and id(loop) not in training and _counted_break(loop, self._enclosing_function):
                found.discard(id(loop))
        # a loop that sets the run's configuration per item runs one whole run per item (run_loops)
        found.difference_update(id(loop) for loop in self.source.nodes(ast.For, ast.AsyncFor) if id(loop) in found and reconfigures_run(loop))
        return found, training

    # ------------------------------------------------------------------ tensors made on the host

    def _fresh_returns(self, returns: dict[str, list[ast.Return]], generators: set[str]) -> None:
        """`fresh` of a module-level function or a method that returns a tensor it has just made on the host on
        every call (memlint.analysis.host_returns): `causal_mask(n)` building `torch.ones(1, n, n)`, a
        Swin layer's `create_mask(H, W)` building its window mask from `torch.zeros((1, H, W, 1))`."""
        reshapers: dict[str, Optional[int]] = {}

        def passes(call: ast.Call) -> Optional[ast.AST]:
            """The argument a call of this file's module-level helper returns a reshape of
            (`window_partition(img_mask, ws)`: host_returns.reshaped_parameter), or None."""
            func = call.func
            if type(func) is not ast.Name or func.id not in self.defs or func.id not in self.nodes or func.id in generators:  # type: ignore[attr-defined]
                return None
            name = func.id  # type: ignore[attr-defined]
            if name not in reshapers:
                reshapers[name] = None if _bound_more_than_once(self.source, name) else reshaped_parameter(self.nodes[name])
            position = reshapers[name]
            if position is None or position >= len(call.args) or any(type(a) is ast.Starred for a in call.args[: position + 1]):
                return None
            return call.args[position]

        for key, found in returns.items():
            # module-level functions, and methods (`self.create_mask(H, W)` of a Swin layer: "Class.method")
            if not key or key == "?" or key in generators or key.count(".") > 1 or ":" in key:
                continue
            if "." in key and key.partition(".")[0] not in self.classes:
                continue
            if returns_fresh_host_tensor(found, self.qualify, self._local_values(key), self.nodes.get(key), passes):
                self.functions[key]["fresh"] = True

    def _unsaved_returns(self, returns: dict[str, list[ast.Return]], generators: set[str]) -> None:
        """`unsaved` of a module-level function whose every `return` is a new tensor that its
        producer keeps nothing of for backward: a call of a torch function of
        `tables.FRESH_RESULT_FUNCTIONS` without `out=` (attention-transfer's `utils.batch_norm`,
        returning `F.batch_norm(...)`; memlint.analysis.saved's `makes_fresh_tensor`, the same fact
        on libcst's tree).  An activation may overwrite the result of a call of it (ML003).  Not a
        decorated function (`@lru_cache` hands every caller the same tensor), nor one whose name the
        file binds again (`f = lru_cache(maxsize=None)(f)`): a call of the name may reach a wrapper."""
        for key, found in returns.items():
            if not key or "." in key or key == "?" or key in generators or not found:
                continue
            if getattr(self.nodes.get(key), "decorator_list", None):
                continue
            if all(_unsaved_result(r.value, self.qualify) for r in found) and not _bound_more_than_once(self.source, key):
                self.functions[key]["unsaved"] = True

    def _imports_from_inside(self, key: str) -> bool:
        """Does function `key` hold a `from ... import` (`_function_imports` finds one)?  From the
        file's node index, once for every function: most hold none, and are not walked for it."""
        if self.from_import_scopes is None:
            self.from_import_scopes = {
                id(ancestor) for node in self.source.nodes(ast.ImportFrom)
                for ancestor in self.source.ancestors(node) if isinstance(ancestor, _FUNCTIONS)
            }  # fmt: skip
        return id(self.nodes[key]) in self.from_import_scopes

    def _factories(self, returns: dict[str, list[ast.Return]], generators: set[str]) -> None:
        """`builds` of a module-level function every `return` of which constructs an instance of a
        capitalised class (`make_agent(args)`: `return CurlSacAgent(...)` in each branch), or returns
        a local name every binding of which does (`get_model(opts)`: `model = None`, then `model =
        FeedForwardSegmentation()` or `model = FeedForwardClassifier()` by branch, `return model`;
        the `None` placeholder builds nothing to call).  The constructors as written: what a name
        bound to its call holds (the project pass resolves them, as for `obj = Class(...)`); one the
        function imports itself (`from .feedforward_seg_model import FeedForwardSegmentation` in the
        branch) as that import's target, [module, name, level].  Any other binding: no `builds`."""
        for key, found in returns.items():
            if not key or "." in key or key == "?" or key in generators:
                continue
            built: list = []
            local_imports: Optional[dict[str, list[list]]] = None
            for statement in found:
                value = statement.value
                if local_imports is None:
                    local_imports = _function_imports(self.nodes[key]) if self._imports_from_inside(key) else {}
                if type(value) is ast.Name:
                    constructors = self._constructors_of(key, value.id, local_imports)
                else:
                    constructors = self._constructor(value, local_imports)
                    if constructors is None:
                        picked = self._picked_instance(key, value)
                        constructors = [picked] if picked is not None else None
                if not constructors:
                    built = []
                    break
                for constructor in constructors:
                    if constructor not in built:
                        built.append(constructor)
            if built:
                self.functions[key]["builds"] = built
            else:
                made = self._made_model(key, found)
                if made:
                    self.functions[key]["makes"] = made

    def _made_model(self, key: str, found: list[ast.Return]) -> Optional[list]:
        """`makes` of a module-level function that returns a model it builds alone or as the first
        item of a tuple, moved or wrapped on the way (robustness's `make_and_restore_model`: `model =
        AttackerModel(...)`, `model = ch.nn.DataParallel(model)` behind an `if`, `model =
        model.cuda()`, `return model, checkpoint`): the constructors every binding of it calls,
        the others being moves (`.cuda()`, `.to(device)`) or data-parallel wrappers of the name
        itself, whose call runs the model.  None where any return or binding is anything else."""
        made: list = []
        for statement in found:
            value = statement.value
            if type(value) is ast.Tuple and value.elts:
                value = value.elts[0]
            if type(value) is not ast.Name:
                return None
            bindings = self._local_values(key).get(value.id)
            if not bindings:
                return None
            for assign in bindings:
                if len(assign.targets) != 1 or type(assign.targets[0]) is not ast.Name:
                    return None
                if _same_model(assign.value, value.id):
                    continue
                constructors = self._constructor(assign.value, {})
                if constructors is None:
                    return None
                for constructor in constructors:
                    if constructor not in made:
                        made.append(constructor)
        return made or None

    def _pickers(self, returns: dict[str, list[ast.Return]], generators: set[str]) -> None:
        """`picks` of a module-level function that returns a class it looks up by a name known only at
        run time: "globals" where every `return` is `globals()[name]` (DomainBed's
        `get_algorithm_class`: a class of this module), "import" where it imports a module by name
        (`importlib.import_module`) and every `return` hands back what it found there, `getattr(lib,
        name)` or a local bound only to such a lookup or a loop's item (a `None` placeholder aside):
        a class of whichever module the name picks (pix2pix's `find_model_using_name`)."""
        by_name = self.source.mentions("import_module")
        for key, found in returns.items():
            if not key or "." in key or key == "?" or key in generators or key not in self.functions:
                continue
            values = [statement.value for statement in found]
            if all(_globals_lookup(value) for value in values):
                self.functions[key]["picks"] = "globals"
            elif by_name and self._imports_by_name(key) and all(self._found_in_module(key, value) for value in values):
                self.functions[key]["picks"] = "import"

    def _imports_by_name(self, key: str) -> bool:
        """Does function `key` call `importlib.import_module` (outside nested functions)?"""
        return any(
            type(node) is ast.Call and self.qualify(dotted(node.func)) == "importlib.import_module"  # type: ignore[attr-defined]
            for node in own_nodes(self.nodes[key])
        )  # fmt: skip

    def _found_in_module(self, key: str, value: Optional[ast.expr]) -> bool:
        """Is the returned `value` a lookup by name (`getattr(lib, name)`), or a local every plain
        binding of which (a `None` placeholder aside) is one or a loop's item (`model = cls` in
        `for name, cls in lib.__dict__.items():`)?"""
        if _getattr_call(value):
            return True
        if type(value) is not ast.Name:
            return False
        bindings = _bindings(self.nodes[key]).get(value.id)  # (not the cached locals: a loop target there maps to nothing)
        found = False
        for assign in bindings or ():
            bound = assign.value
            if type(bound) is ast.Constant and bound.value is None:
                continue
            if not (_getattr_call(bound) or (type(bound) is ast.Name and self._loop_item(key, bound.id))):
                return False
            found = True
        return found

    def _loop_item(self, key: str, name: str) -> bool:
        """Is `name` a target of a `for` loop of function `key` over the items or values of a
        module's namespace (`lib.__dict__.items()`, `vars(lib).values()`)?"""
        for node in own_nodes(self.nodes[key]):
            if type(node) is not ast.For or name not in set(_stored_names([node.target])):  # type: ignore[attr-defined]
                continue
            iterated = node.iter  # type: ignore[attr-defined]
            if type(iterated) is ast.Call and type(iterated.func) is ast.Attribute and iterated.func.attr in ("items", "values"):
                namespace = iterated.func.value
                if (type(namespace) is ast.Attribute and namespace.attr == "__dict__") or (
                    type(namespace) is ast.Call and dotted(namespace.func) == "vars"
                ):
                    return True
        return False

    def _abstract_methods(self) -> None:
        """`abstract` of a method whose body does nothing but say it is to be overridden: a docstring,
        `pass`, `...`, `raise NotImplementedError`.  Calling one on an instance whose class is picked at
        run time cannot be what the program does (the class picked overrides it)."""
        for key, node in self.nodes.items():
            if "." not in key or key.count(".") != 1 or key not in self.functions or not isinstance(node, _FUNCTIONS):
                continue  # (a class the file also binds otherwise, RAFT's fallback GradScaler, has no methods here)
            if all(_placeholder_statement(statement) for statement in node.body):  # type: ignore[attr-defined]
                self.functions[key]["abstract"] = True
                if any(type(statement) is ast.Raise for statement in node.body):  # type: ignore[attr-defined]
                    self.functions[key]["unimplemented"] = True  # (a `pass` body is a working no-op)
            if any((dotted(d) or "").rpartition(".")[2] == "abstractmethod" for d in node.decorator_list):  # type: ignore[attr-defined]
                self.functions[key]["unimplemented"] = True

    def _mode_methods(self) -> None:
        """`mode` of a method that sets the mode of the models its object holds: "eval" where its
        body only puts them in eval mode and they are every model its class holds (`def
        val_start(self): self.img_enc.eval(); self.txt_enc.eval()`), "train" where it may put a
        model in training mode, itself or through a method of its class it calls (`def
        train_start(self): self._set(True)` whose body calls `m.train(flag)`; memlint.analysis.mode_setters)."""
        classes: dict[str, dict[str, ast.AST]] = {}
        for key, node in self.nodes.items():
            if "." in key and key.count(".") == 1 and ":" not in key and isinstance(node, _FUNCTIONS):
                owner, _, name = key.partition(".")
                classes.setdefault(owner, {})[name] = node
        for owner, methods in classes.items():
            self._train_through_own_methods(owner, methods)
            held = None
            for name, node in methods.items():
                record = self.functions.get(f"{owner}.{name}")
                if record is None or not record.get("evals") or "mode" in record or not only_puts_held_models_in_eval(node):
                    continue  # (only a method that puts something in eval mode and trains nothing is read)
                if held is None:
                    held = held_models(methods.values())  # (once per class: a class may have many wrappers)
                if held_models_evaled(node, held):
                    record["mode"] = "eval"

    def _train_through_own_methods(self, owner: str, methods: dict[str, ast.AST]) -> None:
        """Give `mode` "train" to each method of class `owner` that calls (`self.m(...)`), directly or
        through others, a method of the class that may train ("train" wins over anything else)."""
        trains = {name for name in methods if (self.functions.get(f"{owner}.{name}") or {}).get("mode") == "train"}
        if not trains:
            return  # (nothing to spread: most classes; their methods are not walked again)
        callees: dict[str, set[str]] = {}
        for name, node in methods.items():
            positional = [*node.args.posonlyargs, *node.args.args]  # type: ignore[attr-defined]
            if not positional:
                continue
            own = positional[0].arg
            callees[name] = {
                n.func.attr for n in ast.walk(node)
                if type(n) is ast.Call and type(n.func) is ast.Attribute and type(n.func.value) is ast.Name and n.func.value.id == own and n.func.attr in methods
            }  # fmt: skip
        changed = True
        while changed:
            changed = False
            for name, called in callees.items():
                if name not in trains and called & trains:
                    trains.add(name)
                    changed = True
        for name in trains:
            record = self.functions.get(f"{owner}.{name}")
            if record is not None:
                record["mode"] = "train"

    def _constructor(self, value: Optional[ast.expr], local_imports: dict[str, list[list]]) -> Optional[list]:
        """The capitalised classes `value` constructs, as written, or None: no construction of a class
        the project may define.  A name the function binds only by its own `from ... import`s stands
        for each import's target, [module, name, level]: `from models.model_plain import ModelPlain as
        M` in one branch and `from models.model_gan import ModelGAN as M` in another (KAIR's
        `define_Model`), then `M(opt)`, constructs either class."""
        constructor = dotted(value.func) if type(value) is ast.Call else None
        if constructor is None:
            return None
        imported = local_imports.get(constructor)
        if imported is not None:
            return list(imported) if all(target[1][:1].isupper() for target in imported) else None
        if not constructor.rpartition(".")[2][:1].isupper() or self._is_foreign(constructor):
            return None
        return [constructor]

    def _constructors_of(self, key: str, name: str, local_imports: dict[str, list[list]]) -> Optional[list]:
        """The constructors of every binding of local `name` in function `key` (a `None` placeholder
        aside), or None where one binds anything else or the name is bound in another way too."""
        values = self._local_values(key).get(name)
        if not values:
            return None
        constructors = []
        for assign in values:
            if len(assign.targets) != 1 or type(assign.targets[0]) is not ast.Name:
                return None
            if type(assign.value) is ast.Constant and assign.value.value is None:
                continue
            found = self._constructor(assign.value, local_imports)
            if found is None:
                picked = self._picked_instance(key, assign.value)
                found = [picked] if picked is not None else None
            if found is None:
                return None
            constructors.extend(found)
        return constructors or None

    def _picked_instance(self, key: str, value: Optional[ast.expr]) -> Optional[str]:
        """`cls(opt)` where `cls` is bound once in function `key` to a call of a function that may be
        the project's (`cls = find_model_using_name(name)`): "find_model_using_name()", an instance
        of the class that call returns (the project pass looks for its `picks`)."""
        if type(value) is not ast.Call or type(value.func) is not ast.Name:
            return None
        factory = self._same_call(key, value.func.id)
        if factory is None:
            return None
        root = factory.partition(".")[0]
        return f"{factory}()" if root in self.defs or (root in self.imports and not self._is_foreign(root)) else None

    def _same_call(self, key: str, name: str) -> Optional[str]:
        """The callee as written of the calls every plain binding of `name` in function `key` is
        (a script that builds its model twice, once per phase, from the same factory), or None."""
        values = self._local_values(key).get(name)
        callees = {dotted(_unmoved(v.value).func) if type(v.value) is ast.Call and type(v.targets[0]) is ast.Name else None for v in values or ()}
        return callees.pop() if len(callees) == 1 else None

    # ------------------------------------------------------------------ moves to a device

    def _moved_parameters(self) -> None:
        for call in self.source.nodes(ast.Call):
            func = call.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr in ("cuda", "to"):
                self._moves_parameter(call)  # type: ignore[arg-type]

    def _moves_parameter(self, call: ast.Call) -> None:
        """`moves` of a module-level function: [parameter, method, device parameter] when the function
        returns its parameter moved to a device whenever it is given a tensor: `return x.cuda(dev)`,
        or `v = x.to(device)` ... `return v`, behind no condition but a test of the parameter's type
        (`if torch.is_tensor(x):`, the tensor case of a helper that also walks containers) or of the
        accelerator.  Method: "cuda" or "to"; device parameter: the position of the parameter the
        move is given as its device, or -1 (`.cuda()`: the current accelerator)."""
        func = call.func
        receiver = func.value  # type: ignore[attr-defined]
        key = self._function_of(call)
        if not key or "." in key or key == "?" or type(receiver) is not ast.Name:
            return
        node = self.nodes[key]
        parameters = [a.arg for a in node.args.posonlyargs + node.args.args]  # type: ignore[attr-defined]
        if receiver.id not in parameters:
            return
        given = [a for a in call.args if type(a) is not ast.Starred] + [k.value for k in call.keywords if k.arg == "device"]
        device = given[0] if given else None
        if device is None and func.attr == "to":  # type: ignore[attr-defined]
            return
        if device is not None and not (type(device) is ast.Name and device.id in parameters):
            if not (func.attr == "cuda" and type(device) is ast.Constant and type(device.value) is int):  # type: ignore[attr-defined]
                return
            device = None  # `.cuda(0)`: an accelerator whatever the caller gives
        returned = self._returned_move(call, node, receiver.id)
        if returned:
            position = parameters.index(device.id) if device is not None else -1  # type: ignore[union-attr]
            self.functions[key]["moves"] = [parameters.index(receiver.id), func.attr, position]  # type: ignore[attr-defined]

    def _returned_move(self, call: ast.Call, function: ast.AST, parameter: str) -> bool:
        """Is the move's value what the function returns (directly, or through the one name it is
        bound to), and does it run on every call given a tensor (no condition around it but a type
        test of `parameter` or a device check, no loop, no handler)?"""
        child: ast.AST = call
        statement: Optional[ast.AST] = None
        for ancestor in self.source.ancestors(call):
            if ancestor is function:
                break
            if isinstance(ancestor, ast.stmt) and statement is None:
                statement = ancestor
            if isinstance(ancestor, ast.If):
                if _in(child, ancestor.orelse) or not (_device_check(ancestor.test) or _tests_type_of(ancestor.test, parameter)):
                    return False
            elif isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.Lambda, *_FUNCTIONS)):
                return False
            child = ancestor
        if type(statement) is ast.Return:
            return statement.value is call  # type: ignore[union-attr]
        if type(statement) is ast.Assign and statement.value is call and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name:  # type: ignore[union-attr]
            bound = statement.targets[0].id  # type: ignore[union-attr]
            parent = next(self.source.ancestors(statement))
            block = next((getattr(parent, f) for f in ("body", "orelse") if statement in getattr(parent, f, ())), ())
            if any(type(s) is ast.Return and self._returns_name(s, bound) for s in block):
                return True
            # `if torch.cuda.is_available(): x = x.cuda()` then `return Variable(x)` (the test is a
            # device check: checked above): the statement after the `if` returns the moved value
            body = getattr(function, "body", ())
            if type(parent) is ast.If and statement in parent.body and not parent.orelse and parent in body:
                after = body[body.index(parent) + 1 :]
                return bool(after) and type(after[0]) is ast.Return and self._returns_name(after[0], bound)
        return False

    def _returns_name(self, statement: ast.Return, name: str) -> bool:
        """`return name`, or `return Variable(name, ...)` (the legacy wrapper hands back the tensor
        where it is)."""
        value = statement.value
        if type(value) is ast.Call and self.qualify(dotted(value.func)) in tables.VARIABLE_CLASSES and value.args:
            value = value.args[0]
        return type(value) is ast.Name and value.id == name

    # ------------------------------------------------------------------ returned values

    def _return(self, node: ast.Return) -> None:
        key = self._function_of(node)
        if not key or ("." in key and is_forward_name(key.rpartition(".")[2])):
            return  # a module's forward pass: rules leave forward passes alone, and `.forward` is known
        record = self.functions[key]
        if "returns" in record and record["returns"] is None:
            return
        alternatives = self._alternatives(node.value, key, 0) if type(node.value) in _MAY_CARRY else []  # type: ignore[arg-type]
        if alternatives and self._grad_at(node) == "off":
            alternatives = []
        if not alternatives:
            record["returns"] = None  # one return without history: the function's value may have none
            return
        record.setdefault("returns", []).append(alternatives)

    def _alternatives(self, expr: ast.AST, key: str, depth: int) -> list:
        """What would make `expr` carry autograd history: [True] when it certainly does, references
        when it does if one of them does, [] when it need not."""
        if depth > 6:
            return []
        kind = type(expr)
        if kind is ast.Call:
            return self._call_alternatives(expr, key, depth)  # type: ignore[arg-type]
        if kind is ast.BinOp:
            return _union(self._alternatives(expr.left, key, depth + 1), self._alternatives(expr.right, key, depth + 1))  # type: ignore[attr-defined]
        if kind is ast.UnaryOp:
            return [] if isinstance(expr.op, ast.Not) else self._alternatives(expr.operand, key, depth + 1)  # type: ignore[attr-defined]
        if kind is ast.Subscript:
            return self._alternatives(expr.value, key, depth + 1)  # type: ignore[attr-defined]
        if kind is ast.Attribute:
            if expr.attr in tables.GRAPH_FREE_ATTRIBUTES or dotted(expr) and dotted(expr).partition(".")[0] in ("self", *self.imports):  # type: ignore[attr-defined]
                return []
            return self._alternatives(expr.value, key, depth + 1)  # type: ignore[attr-defined]
        if kind is ast.Name:
            values = self._local_values(key).get(expr.id)  # type: ignore[attr-defined]
            if not values:
                given = self._given_position(key, expr.id)  # type: ignore[attr-defined]
                return [] if given is None else [["g", given]]
            if len(values) == 1 and expr.id in self._backpropagated(key):  # type: ignore[attr-defined]
                return [True]  # `loss.backward()` in the function: direct evidence (memlint/analysis/model.py)
            found = [self._alternatives(v.value, key, depth + 1) if self._grad_at(v) != "off" else [] for v in values]
            if len(found) == 1:
                return found[0]
            return [True] if all(True in f for f in found) else []
        if kind is ast.Tuple and expr.elts:  # type: ignore[attr-defined]
            # `loss, logits = helper(...)`: every element takes the value's history (values.element_of)
            found = [self._alternatives(e, key, depth + 1) for e in expr.elts]  # type: ignore[attr-defined]
            return [True] if all(True in f for f in found) else []
        return []

    def _given_position(self, key: str, name: str) -> Optional[int]:
        """The position of `name` among the positional parameters of the module-level function `key`,
        where the function never binds it again (nested scopes too) and is not used as a value (a
        function passed around may be called in ways no site shows): its value is what the caller
        gave, so the caller's argument's history is the return's (["g", position], the project
        pass's `passes_history`).  None otherwise (a method: `self` and the callers' offsets)."""
        if (key, name) not in self.given:  # once per (function, parameter): a helper of many returns
            self.given[(key, name)] = self._find_given_position(key, name)
        return self.given[(key, name)]

    def _find_given_position(self, key: str, name: str) -> Optional[int]:
        if not key or "." in key or key == "?" or key in self._value_names():
            return None
        position = self._parameters(key).get(name)
        if position is None or position < 0 or not self._keeps_given_history(key):
            return None
        bindings = self.source.memo("summary-bindings", lambda: binding_lines(self.source.nodes(*BINDING_NODES)))
        return None if rebound(self.nodes[key], name, bindings) else position

    def _keeps_given_history(self, key: str) -> bool:
        """May the function `key` hand its parameter's history on?  No where some path ends without a
        return (`None`), and no where it holds a form whose result has no history though the
        alternatives above follow it (given_history_ends): an index output, a cast to an integer
        dtype, a grad switch of its own.  Asked once per function; narrowing only."""
        known = self.plain_paths.get(key)
        if known is None:
            function = self.nodes[key]
            known = self.plain_paths[key] = not may_fall_through(function.body) and not any(
                map(given_history_ends, ast.walk(function))
            )
        return known

    def _call_alternatives(self, call: ast.Call, key: str, depth: int) -> list:
        func = call.func
        chain = dotted(func)
        if isinstance(func, ast.Name):
            name = func.id
            if name == "self":
                return [["c"]] if "." in key else []
            qualified = self.qualify(name)
            if qualified is not None:
                return self._torch_alternatives(qualified, call, key, depth) if qualified.startswith("torch") else (
                    [] if self._is_foreign(name) else [["n", name]]
                )
            if name in self.defs:
                return [["n", name]]
            if call_rules.is_loss_name(name) and self._graph_free_arguments(call, key):
                return []  # `criterion(pred.detach(), y)`: a loss of values without history has none
            return [True] if call_rules.named_like_model_or_loss(name) or name in self._module_evidence() else []
        if not isinstance(func, ast.Attribute):
            return []
        attr = func.attr
        root = chain.partition(".")[0] if chain else None
        if root in self.imports and chain is not None:
            qualified = self.qualify(chain)
            if qualified is not None and qualified.startswith("torch"):
                return self._torch_alternatives(qualified, call, key, depth)
            return [] if self._is_foreign(chain) else [["d", chain]]
        if attr in tables.GRAPH_FREE_METHODS:
            return []
        if attr == "forward":
            # `self.forward(x)` runs a model only in an nn.Module (a hand-written Perceptron's is a method)
            return [["c"]] if chain == "self.forward" and "." in key else [True]
        if root == "self" and chain is not None and chain.count(".") == 1 and "." in key:
            class_name = key.partition(".")[0]
            by_evidence = "self." + attr in self._module_evidence()
            if attr in self._self_attributes()[1].get(class_name, ()):
                if call_rules.named_like_model_or_loss(attr) or by_evidence:
                    return [True]
                return [["a", attr]]
            return [True] if call_rules.named_like_model_or_loss(attr) or by_evidence else [["s", attr]]
        if root in self.defs and chain is not None and chain.count(".") == 1:
            return [["d", chain]]
        if attr in tables.GRAPH_PRESERVING_METHODS:
            return self._alternatives(func.value, key, depth + 1)
        if chain is not None and chain.count(".") == 1 and root not in self.imports:
            constructor = self._instance_class(key, root)  # type: ignore[arg-type]
            if constructor:
                return [["i", constructor, attr]]
        if call_rules.is_loss_name(attr) and self._graph_free_arguments(call, key):
            return []  # `self.criterion(pred.detach(), y)`: a loss of values without history has none
        if call_rules.named_like_model_or_loss(attr):
            return [True]
        return []

    def _graph_free_arguments(self, call: ast.Call, key: str) -> bool:
        """Is every argument of a loss call certainly without autograd history (the semantic model's
        values.graph_free_arguments, on CPython's tree): a constant, `.detach()`, `.data`, `.cpu()` and
        the like of such a value, a torch factory without `requires_grad`, or a local bound once to one."""
        arguments = [*call.args, *(k.value for k in call.keywords if k.arg is not None)]
        if not arguments or len(call.keywords) > len(arguments) - len(call.args):
            return False  # no arguments, or a `**kwargs`
        return all(self._graph_free(a, key, 0) for a in arguments)

    def _graph_free(self, expr: ast.AST, key: str, depth: int) -> bool:
        if depth > 6:
            return False
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.Attribute):
            return expr.attr in ("data", "grad")
        if isinstance(expr, ast.Name):
            values = self._local_values(key).get(expr.id)
            return bool(values) and len(values) == 1 and self._graph_free(values[0].value, key, depth + 1)
        if not isinstance(expr, ast.Call):
            return False
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in tables.GRAPH_FREE_METHODS:
            return True
        if isinstance(func, ast.Attribute) and tables.GRAPH_PRESERVING_METHODS.get(func.attr) == "same":
            return self._graph_free(func.value, key, depth + 1)  # `.cpu()` of a detached value
        qualified = self.qualify(dotted(func))
        if qualified is not None and call_rules.torch_call(qualified) == call_rules.FRESH:
            return not any(k.arg == "requires_grad" for k in expr.keywords)
        return False

    def _torch_alternatives(self, qualified: str, call: ast.Call, key: str, depth: int) -> list:
        """A call of torch's `qualified`, as call_rules.torch_call classes it (the rule values.py
        reads too): a functional loss certainly carries history (under grad, which `_return`
        asks); an operation, if an argument does; a constructor, a factory or an index function never."""
        kind = call_rules.torch_call(qualified)
        if kind == call_rules.LOSS:
            return [] if self._graph_free_arguments(call, key) else [True]
        if kind == call_rules.ARGUMENTS:
            found: list = []
            for argument in call.args:
                found = _union(found, self._alternatives(argument, key, depth + 1))
            return found
        return []

    def _module_evidence(self) -> frozenset[str]:
        """Names (and "self.<attr>"s) the file calls and gives a module's method (`G.eval()`, `G(z)`):
        models by evidence, as the semantic model and the screens take them (evidence.module_names)."""
        return evidence.file_module_names(self.source)

    def _grad_at(self, statement: ast.AST) -> Optional[str]:
        where = self._where(statement)
        return where[1] if where is not None else None

    def _local_values(self, key: str) -> dict[str, list[ast.Assign]]:
        """name -> the plain `=` assignments to it in the function; a name bound in any other way as
        well (a parameter, a loop target, `+=`, `with ... as`) maps to nothing.  Found by walking the
        function's statements (not its expressions), on first request."""
        known = self.locals.get(key)
        if known is None:
            known = self.locals[key] = _bindings(self.nodes[key] if key else self.tree)
        return known

    def _backpropagated(self, key: str) -> frozenset[str]:
        """The function's names that backward is called on, and their tuple siblings
        (evidence.backpropagated_names: the history fact of the semantic model, on this AST)."""
        known = self.backpropagated.get(key)
        if known is None:
            scope = self.nodes[key] if key else self.tree
            inside = [n for n in own_nodes(scope)]
            known = self.backpropagated[key] = evidence.backpropagated_names(
                (n for n in inside if type(n) is ast.Call), (n for n in inside if type(n) is ast.Assign)
            )
        return known

    def _enclosing_function(self, node: ast.AST) -> Optional[ast.AST]:
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
                return ancestor
        return None

    def _function_of(self, node: ast.AST) -> Optional[str]:
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, _FUNCTIONS):
                return self.keys.get(id(ancestor))
            if isinstance(ancestor, (ast.ClassDef, ast.Lambda)):
                return None
            if isinstance(ancestor, ast.Module):
                return ""
        return None


def _marimo_cells(statements) -> frozenset[int]:
    """The module-level functions a marimo notebook runs as its cells (`@app.cell`, `@app.cell(...)`,
    `app = marimo.App(...)` after `import marimo`): the classes and functions a cell defines are the
    notebook's own, as notebooks.marimo_notebook says on libcst's tree for the rules."""
    marimo = {a.asname or a.name for s in statements if isinstance(s, ast.Import) for a in s.names if a.name == "marimo"}
    apps = {
        s.targets[0].id for s in statements
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Call)
        and dotted(s.value.func) in {f"{m}.App" for m in marimo}
    }  # fmt: skip
    if not apps:
        return frozenset()
    cell_decorators = {f"{app}.cell" for app in apps}
    return frozenset(
        id(s) for s in statements
        if isinstance(s, _FUNCTIONS) and any(dotted(d.func if isinstance(d, ast.Call) else d) in cell_decorators for d in s.decorator_list)
    )  # fmt: skip


# ---------------------------------------------------------------------------- local names




# Wrappers whose call runs the module they are given (`nn.DataParallel(model)`): the same model.
_PARALLEL_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})


def _same_model(value: ast.AST, name: str) -> bool:
    """`name.cuda()`, `name.to(device)`, `nn.DataParallel(name)`: the model `name` holds, moved or
    wrapped so that calling it runs the same forward."""
    if type(value) is not ast.Call:
        return False
    func = value.func
    if type(func) is ast.Attribute and func.attr in tables.MODULE_RETURNING:
        return type(func.value) is ast.Name and func.value.id == name
    wrapper = _final_name(func)
    return wrapper in _PARALLEL_WRAPPERS and bool(value.args) and type(value.args[0]) is ast.Name and value.args[0].id == name


def _bindings(scope: ast.AST) -> dict[str, list[ast.Assign]]:
    """What `_Summary._local_values` answers for one function (or the module's own code)."""
    assigned: dict[str, list[ast.Assign]] = {}
    other: set[str] = set()
    if isinstance(scope, _FUNCTIONS):
        arguments = scope.args
        other.update(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))
        other.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    stack = list(scope.body)  # type: ignore[attr-defined]
    while stack:
        statement = stack.pop()
        kind = type(statement)
        if kind is ast.Assign:
            targets = statement.targets
            if len(targets) == 1 and type(targets[0]) is ast.Name:
                assigned.setdefault(targets[0].id, []).append(statement)
            elif len(targets) == 1 and type(targets[0]) in (ast.Tuple, ast.List) and all(type(e) is ast.Name for e in targets[0].elts):
                # `loss, logits = helper(...)`: each element takes the value's history (values.element_of)
                for element in targets[0].elts:
                    assigned.setdefault(element.id, []).append(statement)
            else:
                other.update(_stored_names(targets))
            continue
        if kind in _SIMPLE_STATEMENTS:
            continue
        if kind in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor):
            other.update(_stored_names([statement.target]))
        elif kind in (ast.With, ast.AsyncWith):
            other.update(_stored_names([i.optional_vars for i in statement.items if i.optional_vars is not None]))
        elif kind in (*_FUNCTIONS, ast.ClassDef):
            other.add(statement.name)
            continue  # a nested scope
        elif kind in (ast.Import, ast.ImportFrom):
            other.update((a.asname or a.name).partition(".")[0] for a in statement.names)
        elif kind in (ast.Global, ast.Nonlocal):
            other.update(statement.names)
        elif kind is ast.ExceptHandler and statement.name:
            other.add(statement.name)
        for field in _BLOCK_FIELDS.get(kind, ()):
            stack.extend(getattr(statement, field))
    for name in other:
        assigned[name] = []
    return assigned


def _function_imports(function: ast.AST) -> dict[str, list[list]]:
    """Local name -> the targets [module, name, level] of the `from ... import name` statements of a
    function's own body that bind it (a factory that imports the class it builds in the branch that
    builds it; one name may be imported in several branches, `... import ModelPlain as M` and `...
    import ModelGAN as M`), for a name bound in no other way there (a parameter, an assignment, a
    plain `import`, a nested definition: then what it holds is not known)."""
    found: dict[str, list[list]] = {}
    arguments = function.args  # type: ignore[attr-defined]
    other = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    other.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    stack = child_nodes(function)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.ImportFrom:
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name != "*":
                    target = [node.module or "", alias.name, node.level]  # type: ignore[attr-defined]
                    targets = found.setdefault(alias.asname or alias.name, [])
                    if target not in targets:
                        targets.append(target)
            continue
        if kind in (*_FUNCTIONS, ast.ClassDef):
            other.add(node.name)  # type: ignore[attr-defined]
            continue  # a nested scope binds its own names
        if kind is ast.Lambda:
            continue
        if kind is ast.Import:
            other.update((a.asname or a.name).partition(".")[0] for a in node.names)  # type: ignore[attr-defined]
        elif kind is ast.Name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            other.add(node.id)  # type: ignore[attr-defined]
        elif kind in (ast.Global, ast.Nonlocal):
            other.update(node.names)  # type: ignore[attr-defined]
        elif isinstance(getattr(node, "name", None), str):
            other.add(node.name)  # type: ignore[attr-defined]  # `except E as name`, a `match` capture
        stack.extend(child_nodes(node))
    return {name: targets for name, targets in found.items() if name not in other}


# Statements that hold no other statement and bind no name (a walrus in them is not followed).
_SIMPLE_STATEMENTS = frozenset({ast.Expr, ast.Return, ast.Pass, ast.Break, ast.Continue, ast.Raise, ast.Assert, ast.Delete})
_BLOCK_FIELDS = {
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"), ast.ExceptHandler: ("body",),
}  # fmt: skip
# Python 3.10 added `match`, 3.11 `except*`: only the interpreter's own node types can occur.
if hasattr(ast, "Match"):
    _BLOCK_FIELDS.update({ast.Match: ("cases",), ast.match_case: ("body",)})
if hasattr(ast, "TryStar"):
    _BLOCK_FIELDS[ast.TryStar] = ("body", "handlers", "orelse", "finalbody")


def _alternatives(value: ast.expr) -> list[ast.expr]:
    """The values a binding may take: each branch of a conditional expression (`A(c) if a else
    B(c)`, nested ones too), else the value itself."""
    if type(value) is ast.IfExp:
        return [*_alternatives(value.body), *_alternatives(value.orelse)]
    return [value]


def _stored_names(targets) -> Iterator[str]:
    for target in targets:
        for node in subtree(target):
            if type(node) is ast.Name:
                yield node.id


# ---------------------------------------------------------------------------- moves to a device


_TYPE_TESTS = frozenset({"is_tensor", "isinstance"})


def _tests_type_of(test: ast.AST, parameter: str) -> bool:
    """`torch.is_tensor(x)`, `isinstance(x, torch.Tensor)`: true for every tensor given as `x`."""
    if type(test) is not ast.Call or not test.args:  # type: ignore[union-attr]
        return False
    func = test.func  # type: ignore[attr-defined]
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
    first = test.args[0]  # type: ignore[attr-defined]
    if name == "isinstance" and not (len(test.args) == 2 and (dotted(test.args[1]) or "").endswith("Tensor")):  # type: ignore[attr-defined]
        return False
    return name in _TYPE_TESTS and type(first) is ast.Name and first.id == parameter


# ---------------------------------------------------------------------------- training steps


def forwarded_attribute(node: ast.ClassDef) -> Optional[str]:
    """`module` of SAGAN's `SpectralNorm(nn.Module)`, whose constructor stores its first parameter in
    `self.module` and whose `forward` returns `self.module.forward(*args)`: the attribute a class
    forwards every call to, or None.  The CPython-AST twin of memlint.analysis.wrapper_classes (which
    reads the file's own classes on libcst's tree); this one lets the project pass tell a file that
    imports the class (`SpectralNorm(nn.Conv2d(...))` outputs what the convolution outputs).  The
    conditions: one undecorated `__init__` and `forward`, no `__call__`; `self.<a> = <first
    parameter>` in the constructor's own body, the parameter not rebound, the class's one binding
    of `self.<a>`; every `return` of `forward` (one at least, no `yield`) is `self.<a>(...)` or
    `self.<a>.forward(...)`; no `register_*_hook` in the class (a hook may keep an output;
    `register_parameter` / `register_buffer` do not see one)."""
    methods: dict[str, list] = {}
    for statement in node.body:
        if isinstance(statement, _FUNCTIONS):
            methods.setdefault(statement.name, []).append(statement)
    if "__call__" in methods or len(methods.get("__init__", ())) != 1 or len(methods.get("forward", ())) != 1:
        return None
    init, forward = methods["__init__"][0], methods["forward"][0]
    if init.decorator_list or forward.decorator_list:
        return None
    parameters = init.args.posonlyargs + init.args.args
    if len(parameters) < 2:
        return None
    own, given = parameters[0].arg, parameters[1].arg
    attribute = None
    for statement in init.body:
        if (
            type(statement) is ast.Assign and len(statement.targets) == 1 and _attribute_of(statement.targets[0], own)
            and type(statement.value) is ast.Name and statement.value.id == given
        ):  # fmt: skip
            attribute = statement.targets[0].attr  # type: ignore[attr-defined]
    if attribute is None:
        return None
    forward_self = (forward.args.posonlyargs + forward.args.args)[:1]
    returns = [n for n in own_nodes(forward) if type(n) in (ast.Return, ast.Yield, ast.YieldFrom)]
    if not forward_self or not returns or any(not _calls_attribute(r, forward_self[0].arg, attribute) for r in returns):
        return None
    if any(type(n) is ast.Name and n.id == given and type(n.ctx) is not ast.Load for n in ast.walk(init)):
        return None
    bindings = sum(
        1 for n in ast.walk(node)
        if type(n) is ast.Attribute and n.attr == attribute and type(n.ctx) is not ast.Load
    )  # fmt: skip
    if bindings != 1:
        return None
    if any(type(n) is ast.Attribute and "hook" in n.attr for n in ast.walk(node)):
        return None
    return attribute


def _attribute_of(expr: ast.AST, owner: str) -> bool:
    return type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == owner  # type: ignore[attr-defined]


def _calls_attribute(statement: ast.AST, owner: str, attribute: str) -> bool:
    """`return self.<attribute>(...)` / `return self.<attribute>.forward(...)`."""
    value = getattr(statement, "value", None) if type(statement) is ast.Return else None
    if type(value) is not ast.Call:
        return False
    func = value.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute and func.attr == "forward" and _attribute_of(func.value, owner):
        func = func.value
    return _attribute_of(func, owner) and func.attr == attribute  # type: ignore[attr-defined]


def _keeps_a_parameter(method: ast.AST) -> bool:
    """A running meter's `update(self, val, n=1)` / `add(...)`: it adds a parameter to `self` as it
    is (`self.sum += val * n`), with no `.item()` / `.tolist()` / `.detach()` / `float()` / `int()`
    first.  The CPython-AST twin of memlint.analysis.meters (which reads the file's own classes on
    libcst's tree); this one lets the project pass tell a file that imports the class."""
    arguments = method.args  # type: ignore[attr-defined]
    params = {a.arg for a in (arguments.posonlyargs + arguments.args)[1:]}
    inside = list(ast.walk(method))
    for node in inside:
        if type(node) is ast.Call:
            func = node.func
            if (type(func) is ast.Attribute and func.attr in ("item", "tolist", "detach")) or (
                type(func) is ast.Name and func.id in ("float", "int")
            ):
                return False
    for node in inside:
        if type(node) is ast.AugAssign and _on_self(node.target) and any(
            type(n) is ast.Name and n.id in params for n in ast.walk(node.value)
        ):
            return True
    return False


def _on_self(target: ast.AST) -> bool:
    """`self.sum`, `self.stats["loss"]`."""
    while type(target) is ast.Subscript:
        target = target.value  # type: ignore[attr-defined]
    return type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self"  # type: ignore[attr-defined]


def _note_update(record: dict, func: ast.AST) -> None:
    """Which half of a training step a call outside the function's loops does: "backward" (any
    form of backward, `torch.autograd.grad`) or "step" (an optimizer's).  `trains` says "either";
    the project pass needs both, and a model run, to call a helper a whole training step."""
    kind = "step" if type(func) is ast.Attribute and func.attr == "step" else "backward"  # type: ignore[attr-defined]
    updates = record.setdefault("updates", [])
    if kind not in updates:
        updates.append(kind)
        updates.sort()


# ---------------------------------------------------------------------------- loops


def _is_step_evidence(call: ast.Call, steps_an_optimizer: Callable[[ast.Attribute], bool]) -> Optional[str]:
    """Does this call, in a loop's own statements, make it a training or evaluation loop
    (memlint.analysis.iteration.runs_model)?  "trains" for backward and an optimizer's step
    (`steps_an_optimizer`: by construction or name), "runs" for the rest, None when it is no evidence."""
    func = call.func
    kind = type(func)
    if kind is ast.Name:
        name = func.id  # type: ignore[attr-defined]
    elif kind is ast.Attribute:
        name = func.attr  # type: ignore[attr-defined]
        if name in tables.BACKWARD_METHODS:
            return "trains"
        if name == "step" and steps_an_optimizer(func):  # type: ignore[arg-type]
            return "trains"
        if type(func.value) is ast.Name and func.value.id in ("torch", "F", "np", "math"):  # type: ignore[attr-defined]
            return None
    else:
        return None
    return "runs" if _runs_by_name(name) else None


@functools.lru_cache(maxsize=4096)
def _runs_by_name(name: str) -> bool:
    return name in _STEP_NAMES or call_rules.named_like_model_or_loss(name)


# Calls that take one batch from a loader or wrap it for iteration (iteration._BATCH_READERS)
_BATCH_READERS = frozenset({"iter", "next", "enumerate", "zip", "tqdm", "cycle", "islice", "len", "list"})


def _counted_break(loop: ast.AST, enclosing_function: Callable[[ast.AST], Optional[ast.AST]]) -> bool:
    """`count += 1` ... `if count == n: break` among the loop's own top-level statements (or the
    index of `enumerate`), `n` a literal or the function's parameter default of at most
    SMALL_COUNT: memlint.analysis.loop_bounds.counted_break read from CPython's tree, decided by
    the same memlint.analysis.counted_loops."""
    body = loop.body  # type: ignore[attr-defined]
    counters = {
        s.target.id: 0 for s in body
        if type(s) is ast.AugAssign and type(s.op) is ast.Add and type(s.target) is ast.Name
        and type(s.value) is ast.Constant and s.value.value == 1
    }  # fmt: skip
    counters.update(_enumerate_index(loop))
    if not counters:
        return False
    defaults: dict[str, object] = {}
    function = enclosing_function(loop)
    if isinstance(function, _FUNCTIONS):
        arguments = function.args  # type: ignore[attr-defined]
        positional = arguments.posonlyargs + arguments.args
        for arg, default in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
            defaults[arg.arg] = default
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            defaults[arg.arg] = default
    tests = []
    for statement in body:
        if type(statement) is not ast.If or statement.orelse or not any(type(s) is ast.Break for s in statement.body):
            continue
        test = statement.test
        if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.left) is not ast.Name:
            continue
        operator = _COMPARISONS.get(type(test.ops[0]))
        bound = test.comparators[0]
        if type(bound) is ast.Name:
            bound = defaults.get(bound.id)  # type: ignore[assignment]
        if operator is not None:
            tests.append((test.left.id, operator, _integer(bound)))
    return first_bound(counters, tests, tables.SMALL_COUNT) is not None


_COMPARISONS = {ast.Eq: "==", ast.GtE: ">=", ast.Gt: ">"}


def _integer(node: object) -> Optional[int]:
    return node.value if type(node) is ast.Constant and type(node.value) is int else None  # type: ignore[attr-defined]


def _enumerate_index(loop: ast.AST) -> dict[str, int]:
    """`for i, batch in enumerate(loader)` -> {"i": 0}, `enumerate(loader, 1)` -> {"i": 1}."""
    iterable, target = getattr(loop, "iter", None), getattr(loop, "target", None)
    if type(loop) is not ast.For or type(iterable) is not ast.Call or type(iterable.func) is not ast.Name or iterable.func.id != "enumerate":
        return {}
    if not iterable.args or type(iterable.args[0]) is ast.Starred or type(target) is not ast.Tuple or not target.elts:
        return {}
    extra = [(None, _integer(a)) for a in iterable.args[1:]] + [(k.arg, _integer(k.value)) for k in iterable.keywords]
    if any(type(a) is ast.Starred for a in iterable.args) or any(k.arg is None for k in iterable.keywords):
        return {}
    start = enumerate_start(extra)
    first = target.elts[0]
    return {first.id: start} if type(first) is ast.Name and start is not None else {}


def _hands_loader_to_call(loop: ast.AST) -> bool:
    """`for epoch in ...: train_encoder(train_loader, model)`: a call in the loop's own statements
    (not a nested loop's or function's) takes a data loader as an argument."""
    if any(BATCH_SOURCE.search(w) for w in _names(loop.iter)):  # type: ignore[attr-defined]
        return False
    stack = list(loop.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, (*_LOOPS, *_SCOPE_ENDS)):
            continue
        if isinstance(node, ast.Call) and _final_name(node.func) not in _BATCH_READERS:
            for arg in (*node.args, *(keyword.value for keyword in node.keywords)):
                if type(arg) in (ast.Name, ast.Attribute) and BATCH_SOURCE.search(_final_name(arg)):
                    return True
        stack.extend(child_nodes(node))
    return False


def _refines_one_input(loop: ast.AST) -> bool:
    """`for _ in range(num_steps):` that never reads its counter and draws no data: every iteration
    refines the same input (an attack's steps), no pass over the data
    (memlint.analysis.iteration.refines_one_input, the same fact on libcst's tree)."""
    if type(loop) is not ast.For or type(loop.target) is not ast.Name:
        return False
    iterable = loop.iter
    if not (type(iterable) is ast.Call and type(iterable.func) is ast.Name and iterable.func.id in ("range", "trange")):
        return False
    if any(BATCH_SOURCE.search(w) for w in _names(iterable)):
        return False
    counter = loop.target.id
    for statement in loop.body:
        rebound = _bound_names(statement)  # `for _ in range(iters):` inside binds the name again: no read of the counter
        for node in ast.walk(statement):
            if type(node) is ast.Name and (node.id == counter and id(node) not in rebound or BATCH_SOURCE.search(node.id)):
                return False
            if type(node) is ast.Call and DRAWS_DATA.search(_final_name(node.func)):
                return False
    return True


def _bound_names(statement: ast.AST) -> set[int]:
    """The ids of the names `statement` binds as a target of `for`, a comprehension, `=` or `as` (an
    element of an unpacking too): memlint.analysis.iteration's `_bound_names` on CPython's tree."""
    found: set[int] = set()
    for node in ast.walk(statement):
        kind = type(node)
        if kind in (ast.For, ast.AsyncFor, ast.comprehension):
            targets = [node.target]  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            targets = node.targets  # type: ignore[attr-defined]
        elif kind is ast.withitem:
            targets = [node.optional_vars] if node.optional_vars is not None else []  # type: ignore[attr-defined]
        else:
            continue
        pending = list(targets)
        while pending:
            current = pending.pop()
            if type(current) is ast.Name:
                found.add(id(current))
            elif type(current) in (ast.Tuple, ast.List):
                pending.extend(current.elts)  # type: ignore[attr-defined]
            elif type(current) is ast.Starred:
                pending.append(current.value)  # type: ignore[attr-defined]
    return found


def _self_or_its_attribute(receiver: ast.expr) -> bool:
    """`self` or `self.<attr>`: the receiver of `self.actor(obs)` / `self.model.act(obs)`."""
    if type(receiver) is ast.Attribute:
        receiver = receiver.value
    return type(receiver) is ast.Name and receiver.id == "self"


def _unmoved(value: ast.Call) -> ast.Call:
    """The call a chain of module-returning calls starts from: `Meta(args).to(device)` -> `Meta(args)`
    (an instance of Meta all the same)."""
    while type(value.func) is ast.Attribute and value.func.attr in tables.MODULE_RETURNING and type(value.func.value) is ast.Call:
        value = value.func.value
    return value


def _final_name(expr: ast.AST) -> str:
    kind = type(expr)
    return expr.id if kind is ast.Name else expr.attr if kind is ast.Attribute else ""  # type: ignore[attr-defined]


def _root(expr: ast.AST) -> Optional[str]:
    while type(expr) is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
    return expr.id if type(expr) is ast.Name else None  # type: ignore[attr-defined]


def _names(expr: ast.AST) -> Iterator[str]:
    for node in subtree(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr


def _receiver_name(func: ast.AST) -> Optional[str]:
    if isinstance(func, ast.Attribute):
        receiver = func.value
        if isinstance(receiver, ast.Attribute):
            return receiver.attr
        if isinstance(receiver, ast.Name):
            return receiver.id
    return None


def _header(loop: ast.AST) -> str:
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        target = loop.target
        names = ", ".join(map(ast.unparse, target.elts)) if isinstance(target, ast.Tuple) and target.elts else ast.unparse(target)
        text = f"for {names} in {ast.unparse(loop.iter)}"
    else:
        text = f"while {ast.unparse(loop.test)}"  # type: ignore[attr-defined]
    text = " ".join(text.split())
    return text if len(text) <= 50 else text[:49] + "…"


# ---------------------------------------------------------------------------- helpers


def _device_check(test: ast.AST) -> bool:
    """memlint.analysis.iteration.condition_is_device_check on CPython's AST."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute):
        return test.func.attr in ("is_available", "device_count")
    if isinstance(test, ast.Attribute):
        return test.attr == "is_cuda"
    if isinstance(test, ast.Compare) and len(test.comparators) == 1:
        other = test.comparators[0]
        return isinstance(other, ast.Constant) and other.value in ("cuda", "mps", "xpu")
    if isinstance(test, ast.BoolOp):
        return all(_device_check(value) for value in test.values)
    return False


def _literal_flag(call: ast.Call) -> Optional[str]:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, bool):
        return "on" if call.args[0].value else "off"
    return None


def _in(node: ast.AST, block) -> bool:
    return any(node is statement for statement in block)


def _union(first: list, second: list) -> list:
    if True in first or not second:
        return first
    if True in second or not first:
        return second
    return first + [item for item in second if item not in first]


# torch.distributions' methods among the tensor methods: on a receiver named like a model
# (`lm_model.log_prob(x)`, `vae.entropy()`) they are the model's own, not a distribution's.
_DISTRIBUTION_METHODS = frozenset({"log_prob", "entropy", "rsample", "cdf"})


def _model_method(receiver: str, attr: str) -> bool:
    """Is `receiver.attr(...)` a call of a method of the project's nn.Modules (`model.loss(...)`):
    a receiver named like a model, a method that is no forward pass and no tensor or nn.Module
    method (`model.to(device)`, `model.float()`)?"""
    return named_like_model(receiver) and not is_forward_name(attr) and (attr not in _TENSOR_METHODS or attr in _DISTRIBUTION_METHODS)


def _may_be_a_method(attr: str) -> bool:
    """Could `obj.<attr>()` on a receiver of unknown class call a method of the project?  Not a
    tensor method, a dunder or a capitalised name (a class reached through a module)."""
    return attr not in _TENSOR_METHODS and not attr.startswith("__") and not attr[:1].isupper()


def _globals_lookup(value: Optional[ast.expr]) -> bool:
    """`globals()[name]` / `globals().get(name)`."""
    if type(value) is ast.Subscript:
        value = value.value
    elif type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "get":
        value = value.func.value
    else:
        return False
    return type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "globals" and not value.args


def _getattr_call(value: Optional[ast.expr]) -> bool:
    return type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "getattr" and len(value.args) >= 2


def _placeholder_statement(statement: ast.stmt) -> bool:
    """A statement of a method that is only there to be overridden: a docstring or `...`, `pass`,
    `raise NotImplementedError` (called or not)."""
    if type(statement) is ast.Pass:
        return True
    if type(statement) is ast.Expr:
        return type(statement.value) is ast.Constant and (type(statement.value.value) is str or statement.value.value is Ellipsis)
    if type(statement) is ast.Raise:
        raised = statement.exc.func if type(statement.exc) is ast.Call else statement.exc
        return type(raised) is ast.Name and raised.id == "NotImplementedError"
    return False


def _statement_binds(statement: ast.stmt) -> Iterator[str]:
    """The names a statement of a class body binds (an assignment's targets, an import's names, what
    a nested block binds), nested functions and lambdas aside."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (*_FUNCTIONS, ast.ClassDef):
            yield node.name  # type: ignore[attr-defined]
            continue
        if kind is ast.Lambda:
            continue
        if kind is ast.Name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            yield node.id  # type: ignore[attr-defined]
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:  # type: ignore[attr-defined]
                yield (alias.asname or alias.name).partition(".")[0]
        stack.extend(child_nodes(node))


def _may_name_accelerator(value: Optional[ast.expr]) -> bool:
    """Can `value`, a device argument, be an accelerator: a string naming one (`"cuda:0"`), a name
    or attribute naming one (`device`, `self.device`, `args.gpu`), `torch.device(...)` of such, or a
    choice between them?  `torch.device("cpu")`, a name `CPU`, a number: no."""
    kind = type(value)
    if kind is ast.Constant:
        return type(value.value) is str and tables.ACCELERATOR_STRING.search(value.value) is not None  # type: ignore[union-attr]
    if kind is ast.Name:
        return tables.ACCELERATOR_IDENTIFIER.search(value.id) is not None  # type: ignore[union-attr]
    if kind is ast.Attribute:
        return tables.ACCELERATOR_IDENTIFIER.search(value.attr) is not None  # type: ignore[union-attr]
    if kind is ast.IfExp:
        return _may_name_accelerator(value.body) or _may_name_accelerator(value.orelse)  # type: ignore[union-attr]
    if kind is ast.Subscript:
        return _may_name_accelerator(value.value)  # type: ignore[union-attr]
    if kind is ast.Call:
        func = value.func  # type: ignore[union-attr]
        if (func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else "") == "device":
            return any(_may_name_accelerator(a) for a in value.args)  # type: ignore[union-attr]
    return False


def _places_on_accelerator(call: ast.Call) -> bool:
    """Does the call put work on an accelerator (`places`): `x.cuda()`, `x.to(<a device that may be
    CUDA>)`, a `device=` keyword of such, `torch.device("cuda" ...)`, `nn.DataParallel(...)`,
    accelerate's `Accelerator(...)`?  A comment or `torch.device("cpu")` places nothing."""
    func = call.func
    if type(func) is ast.Attribute and func.attr == "cuda":
        return True
    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
    if name in ("DataParallel", "DistributedDataParallel", "Accelerator"):
        return True
    if name in ("to", "device") and call.args and _may_name_accelerator(call.args[0]):
        return True
    return any(k.arg == "device" and _may_name_accelerator(k.value) for k in call.keywords)


def _super_of_method(call: ast.Call, key: str, record: dict) -> bool:
    """Is `call` the `super()` of method `key` (a method of a module-level class, not a nested
    function's): `super()`, or `super(Class, self)` naming the method's own class and first
    parameter?  Then `super().m()` runs `m` as the class's bases define it."""
    if "." not in key or ":" in key or key.count(".") != 1 or call.keywords:
        return False
    if not call.args:
        return bool(record.get("self"))
    return (
        len(call.args) == 2
        and type(call.args[0]) is ast.Name
        and call.args[0].id == key.partition(".")[0]
        and type(call.args[1]) is ast.Name
        and call.args[1].id == record.get("self")
    )


def _compact(record: dict) -> dict:
    """The record without empty entries, alternatives deduplicated."""
    result = {}
    for key, value in record.items():
        if key == "model":
            value = [True] if True in value else [list(v) for v in {tuple(v): None for v in value}]
        elif key == "returns" and value:
            value = [[True] if True in alternatives else alternatives for alternatives in value]
        if value is None or value == [] or key in ("line", "self", "rebound"):
            continue
        result[key] = value
    return result


# ---------------------------------------------------------------------------- checking a stored summary


def is_valid(summary: object) -> bool:
    """Is `summary` shaped as `summarize` makes them, down to every field's type?  A summary read
    back from the cache feeds the project pass, which indexes into it without further checks."""
    try:
        _check_summary(summary)
    except (TypeError, ValueError, KeyError):
        return False
    return True


_GRADS = (None, "off", "on", "?")
_HOOKS = ("no-grad", "per-batch", "training")


def _require(condition: bool) -> None:
    if not condition:
        raise ValueError("not a summary")


def _strings(value: object) -> None:
    _require(type(value) is list and all(type(item) is str for item in value))  # type: ignore[union-attr]


def _check_summary(summary: object) -> None:
    _require(type(summary) is dict and set(summary) - {"stars", "host", "places", "inner", "deep", "reach", "registries", "fills"} == {"format", "imports", "defs", "classes", "functions"})  # type: ignore[arg-type]
    _strings(summary.get("fills", []))  # type: ignore[union-attr]
    registries = summary.get("registries", {})  # type: ignore[union-attr]
    _require(type(registries) is dict and all(type(k) is str and type(v) is list and v for k, v in registries.items()))
    for entries in registries.values():
        _strings(entries)
    _require(summary.get("host", True) is True)  # type: ignore[union-attr]
    _require(summary.get("places", True) is True)  # type: ignore[union-attr]
    _strings(summary.get("inner", []))  # type: ignore[union-attr]
    _strings(summary.get("deep", []))  # type: ignore[union-attr]
    for reached in summary.get("reach", []):  # type: ignore[union-attr]
        _require(type(reached) is list and len(reached) == 4 and type(reached[0]) is str and (reached[1] is None or type(reached[1]) is str))
        _require(type(reached[2]) is int and reached[2] >= 0 and type(reached[3]) is bool)
    for star in summary.get("stars", []):  # type: ignore[union-attr]
        _require(type(star) is list and len(star) == 2 and type(star[0]) is str and type(star[1]) is int and star[1] >= 0)
    _require(summary["format"] == FORMAT and type(summary["format"]) is int)  # type: ignore[index]
    imports, classes, functions = summary["imports"], summary["classes"], summary["functions"]  # type: ignore[index]
    _require(type(imports) is dict and type(classes) is dict and type(functions) is dict)
    for local, target in imports.items():
        _require(type(local) is str and type(target) is list and len(target) == 3)
        _require(type(target[0]) is str and (target[1] is None or type(target[1]) is str))
        _require(type(target[2]) is int and target[2] >= 0)
    _strings(summary["defs"])  # type: ignore[index]
    for name, record in classes.items():
        _require(type(name) is str and type(record) is dict and set(record) <= {"bases", "attrs", "adam", "forwards", "binds"} and "bases" in record)
        _require(type(record.get("forwards", "")) is str)
        _strings(record.get("binds", []))
        _strings(record.get("adam", []))
        _strings(record["bases"])
        attrs = record.get("attrs", {})
        _require(type(attrs) is dict and all(type(k) is str and type(v) is str for k, v in attrs.items()))
    _require("" in functions and "?" in functions)
    for key, record in functions.items():
        _require(type(key) is str and type(record) is dict)
        if "." in key:
            _require(key.partition(".")[0] in classes)
        _check_function(record)


def _check_function(record: dict) -> None:
    for field, value in record.items():
        if field == "grad":
            _require(value in _GRADS[1:] and type(value) is str)
        elif field == "hook":
            _require(value in _HOOKS and type(value) is str)
        elif field in ("wraps_no_grad", "trains", "pass", "fresh", "unsaved", "keeps", "grads", "evals", "model_grad", "abstract", "unimplemented", "switches"):
            _require(value is True)
        elif field == "moves":
            _require(type(value) is list and len(value) == 3 and type(value[0]) is int and value[1] in ("cuda", "to") and type(value[2]) is int)
        elif field == "updates":
            _require(type(value) is list and all(kind in ("backward", "step") for kind in value))
        elif field == "mode":
            _require(value in ("eval", "train") and type(value) is str)
        elif field in ("flush", "closure"):
            _require(type(value) is str)
        elif field == "picks":
            _require(value in ("globals", "import") and type(value) is str)
        elif field == "decorators":
            _strings(value)
        elif field in ("builds", "makes"):
            # a constructor as written, or the target [module, name, level] of the function's own import
            _require(type(value) is list)
            for constructor in value:
                if type(constructor) is not str:
                    _require(type(constructor) is list and len(constructor) == 3 and type(constructor[0]) is str)
                    _require(type(constructor[1]) is str and type(constructor[2]) is int and constructor[2] >= 0)
        elif field == "subs":
            _require(type(value) is list)
            for attr, guard in value:
                _require(type(attr) is str and (guard is None or (type(guard) is list and len(guard) == 2)))
                if guard is not None:
                    _require(type(guard[0]) is str and type(guard[1]) is int)
        elif field == "model":
            _require(type(value) is list)
            for alternative in value:
                _check_alternative(alternative)
        elif field == "returns":
            _require(type(value) is list)
            for alternatives in value:
                _require(type(alternatives) is list and bool(alternatives))
                for alternative in alternatives:
                    _check_alternative(alternative)
        elif field == "calls":
            _require(type(value) is list)
            for site in value:
                _require(type(site) is list and len(site) in (4, 5))
                reference, grad, loop, conditional = site[:4]
                if len(site) == 5:  # arguments handed over frozen, or a held parameter passed on
                    _require(type(site[4]) is list and bool(site[4]))
                    for slot, source in site[4]:
                        _require(type(slot) in (int, str) and (source is True or type(source) is str))
                _check_reference(reference)
                _require(grad in _GRADS and (grad is None or type(grad) is str) and (type(conditional) is bool or conditional == "configured"))
                if loop is not None:
                    _require(type(loop) is list and len(loop) in (3, 4) and type(loop[0]) is int)
                    _require((loop[1] is None or type(loop[1]) is str) and type(loop[2]) is bool and loop[3:] in ([], ["runs"]))
        elif field in ("flags", "held"):
            _require(type(value) is list)
            for flag in value:
                _require(type(flag) is list and len(flag) == 2 and type(flag[0]) is str and type(flag[1]) is int)
        elif field == "passes":
            _require(type(value) is list)
            for site in value:
                _require(type(site) is list and len(site) == 3)
                _check_reference(site[0])
                _require(type(site[1]) is list and all(type(p) is int for p in site[1]))
                _strings(site[2])
        elif field == "may":
            _require(type(value) is list)
            for site in value:
                _require(type(site) is list and len(site) == 5)
                reference, grad, trains, loop, conditional = site
                _require(type(conditional) is bool)
                if loop is not None:
                    _require(type(loop) is list and len(loop) in (3, 4) and type(loop[0]) is int)
                    _require((loop[1] is None or type(loop[1]) is str) and type(loop[2]) is bool and loop[3:] in ([], ["runs"]))
                _require(type(reference) is list and len(reference) >= 2 and reference[0] in ("u", "k"))
                if reference[0] == "u":
                    _require(len(reference) == 2 and type(reference[1]) is str)
                else:
                    _require(len(reference) == 4 and type(reference[2]) is str and type(reference[3]) is str)
                    _strings(reference[1])
                _require(grad in _GRADS and (grad is None or type(grad) is str) and (trains is None or type(trains) is bool))
        else:
            raise ValueError(f"unknown field {field}")


def _check_alternative(alternative: object) -> None:
    if alternative is True:
        return
    _require(type(alternative) is list and len(alternative) >= 1)
    if alternative[0] == "c":  # type: ignore[index]
        _require(len(alternative) == 1)  # type: ignore[arg-type]
    elif alternative[0] == "a":  # type: ignore[index]
        _require(len(alternative) == 2 and type(alternative[1]) is str)  # type: ignore[arg-type, index]
    elif alternative[0] == "g":  # type: ignore[index]
        _require(len(alternative) == 2 and type(alternative[1]) is int and alternative[1] >= 0)  # type: ignore[arg-type, index]
    else:
        _check_reference(alternative)


def _check_reference(reference: object) -> None:
    _require(type(reference) is list and bool(reference))
    kind = reference[0]  # type: ignore[index]
    if kind in ("n", "d", "s", "m", "p"):
        _require(len(reference) == 2 and type(reference[1]) is str)  # type: ignore[arg-type, index]
    elif kind == "i":
        # (a call's reference names its receiver last; a returned value's, as an alternative, does not)
        _require(len(reference) in (3, 4) and all(type(part) is str for part in reference[1:]))  # type: ignore[arg-type, index, union-attr]
    elif kind == "r":
        _require(len(reference) == 3 and type(reference[1]) is str and reference[2][0] != "r")  # type: ignore[arg-type, index]
        _check_reference(reference[2])  # type: ignore[index]
    else:
        raise ValueError("unknown reference")


_ADAM_FAMILY = frozenset(f"torch.optim.{name}" for name in tables.ADAM_CLASSES)


def _returns_itself(assign: ast.Assign, name: str) -> bool:
    """`name = name.cuda()` / `name = name.to(device)`: a module method that hands the module back."""
    value = assign.value
    return (
        type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in tables.MODULE_RETURNING
        and type(value.func.value) is ast.Name and value.func.value.id == name
    )  # fmt: skip


def returned_closure(function: ast.AST) -> Optional[ast.AST]:
    """The function defined in `function`'s own body (not behind an `if`) that every `return` of
    `function` hands back by name (`def trainer(self, opt): def train(...): ...; return train`), or
    None: a function that returns anything else on some path, or a name rebound after the `def`,
    may hand back something else, and then the caller's call is left unknown."""
    inner = [s for s in function.body if isinstance(s, _FUNCTIONS)]  # type: ignore[attr-defined]
    if not inner:
        return None
    returns = [n for n in own_nodes(function) if type(n) is ast.Return]
    if not returns or not all(type(r.value) is ast.Name for r in returns):
        return None
    names = {r.value.id for r in returns}  # type: ignore[union-attr]
    if len(names) != 1:
        return None
    name = names.pop()
    defined = [s for s in inner if s.name == name]
    arguments = function.args  # type: ignore[attr-defined]
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if a is not None}
    rebound = any(type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load for n in own_nodes(function))
    if len(defined) != 1 or name in parameters or rebound:
        return None
    return defined[0]


def _own_parameters(expr: ast.expr) -> bool:
    """`self.parameters()`, or an expression over it (`filter(..., self.parameters())`)."""
    return any(
        type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "parameters"
        and type(node.func.value) is ast.Name and node.func.value.id == "self"
        for node in ast.walk(expr)
    )  # fmt: skip


def _is_main_guard(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides
    )


def _names_accelerator(text: str) -> bool:
    """Does the text mention an accelerator, other than to switch CUDA off (tables.CUDA_SWITCHED_OFF)?"""
    if tables.CUDA_SWITCHED_OFF.search(text):
        text = tables.CUDA_SWITCHED_OFF.sub("", text)
    return tables.ACCELERATOR_TEXT.search(text) is not None


def _unsaved_result(value: Optional[ast.expr], qualify: Callable[[Optional[str]], Optional[str]]) -> bool:
    """A call of `torch.<f>` / `torch.nn.functional.<f>` (through the file's imports) that returns a
    new tensor its backward never reads (`tables.FRESH_RESULT_FUNCTIONS`), with no `out=` buffer (nor
    `**kw` or `*args`, which may carry one)."""
    if type(value) is not ast.Call or any(k.arg in ("out", None) for k in value.keywords):  # type: ignore[union-attr]
        return False
    if any(type(a) is ast.Starred for a in value.args):  # type: ignore[union-attr]
        return False
    qualified = qualify(dotted(value.func))  # type: ignore[union-attr]
    module, _, name = (qualified or "").rpartition(".")
    if name == "einsum" and not tables.einsum_of_operands(len(value.args), False):  # type: ignore[union-attr]
        return False
    return module in ("torch", "torch.nn.functional") and name in tables.FRESH_RESULT_FUNCTIONS


_BINDING_NODES = (ast.Name, *_FUNCTIONS, ast.ClassDef, ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.Global, ast.Nonlocal)


def _bound_more_than_once(source, name: str) -> bool:
    """Does the file bind `name` in more than one place, anywhere (a second `def`, `name = ...`,
    an import, a loop target; in any scope, erring towards "more")?  (The file's node index, by
    type: a count, whatever the order.)"""
    count = 0
    for node in source.nodes(*_BINDING_NODES):
        kind = type(node)
        if kind is ast.Name and node.id == name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            count += 1
        elif kind in (*_FUNCTIONS, ast.ClassDef) and node.name == name:  # type: ignore[attr-defined]
            count += 1
        elif kind in (ast.Import, ast.ImportFrom):
            count += sum(1 for a in node.names if (a.asname or a.name).partition(".")[0] == name)  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler and node.name == name:  # type: ignore[attr-defined]
            count += 1
        elif kind in (ast.Global, ast.Nonlocal) and name in node.names:  # type: ignore[attr-defined]
            count += 1
    return count > 1


def _switches(function: ast.AST) -> bool:
    """Does a `forward` choose what it runs by the module's mode or by a parameter the caller may
    leave at its default: an `if` (or `x if c else y`) whose test reads `self.training`
    (`if self.training: return loss`, then an inference path) or a parameter that has a default
    (`mode="train"`, `targets=None`)?  A training step's `self(x)` then runs only part of it, and
    which part the summary does not say (Project._own_forwards_trained seeds no training code)."""
    args = function.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    defaulted = {a.arg for a in positional[len(positional) - len(args.defaults):]} if args.defaults else set()
    defaulted.update(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    stack = list(function.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            for part in ast.walk(node.test):
                if isinstance(part, ast.Name) and part.id in defaulted:
                    return True
                if isinstance(part, ast.Attribute) and part.attr == "training" and isinstance(part.value, ast.Name) and part.value.id == "self":
                    return True
        stack.extend(ast.iter_child_nodes(node))
    return False
