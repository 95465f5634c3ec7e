"""The project pass: what the linted files tell about each other, resolved before any rule decides.

Each file's summary (memlint/analysis/summaries.py: what it defines, imports and calls, as plain
data) is computed once per content and cached.  This module names each file as a module (from its
path and the packages around it), resolves the calls the summaries record to the functions and
methods of the other files, and computes, over the whole call graph:

- the functions only ever called without gradient tracking (every call site, transitively; a
  function with no call site in the project stays unknown; a method call whose receiver's class
  is unknown, `gan.visualize_results()`, counts as a call of every project method it may reach,
  unless it is training code's), and those another file calls with gradients on;
- the functions called from training code with gradients on (a training step, a loop that calls
  backward), which an evaluation rule must not ask to run under no_grad;
- the functions called on every iteration of a training or evaluation loop, or once per batch by a
  framework hook (transitively, through unconditional calls; `model.loss(...)` counts as a call of
  every project nn.Module's own `loss`, `algorithm.update(...)` on an instance of a class picked at
  run time by name, `globals()[name]`, as a call of every candidate's `update`, where they all
  override one method; a function that trains itself counts behind any condition,
  `if it % n_d == 0: train_G()`: each call is a training step);
- the functions a class's `forward` calls, in any branch, directly or through helpers (a class
  constructed there counts as a call of its `__init__`): they run with every forward pass;
- the functions that run a flush on every call, directly or through helpers;
- the functions that return a value carrying autograd history (transitively through helpers);
- the classes that are nn.Modules through bases defined in other files.

What one file's lint may depend on is cut out as its `FileView`: the facts about the functions
and classes it defines and about the callees it calls.  The view is plain data with a digest, so
the result cache can key a file's findings on exactly the facts it depends on.

The project is the set of files summarised: the files being linted (and, with `project-context`,
the other Python files under the project root).  Code outside it (an installed package, a file
not linted) is unknown, and the rules stay as silent about it as they are within one file.  A
notebook takes part through the summary of its code cells (memlint/pipeline/prepare.py): its
imports and calls count for the files it uses (a module only CUDA notebooks import runs on the
GPU); it has no module name (nothing imports a notebook) and is still linted as a project of its own,
but for which of the project's models compute gradients when called (memlint.pipeline.notebooks.gradient_view).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence

from memlint.analysis import tables
from memlint.analysis.naming import method_runs_module, never_runs_module
from memlint.analysis.stdlib_modules import STDLIB_MODULE_NAMES
from memlint.analysis.tables import METER_METHODS

FunctionKey = tuple  # as memlint.analysis.context: ("func", name) or ("method", class_name, name)
# Methods of Python's own containers and strings: `results.update(...)`, `lines.append(...)` on a
# receiver of unknown class is as likely one of these as any project method so named.
_CONTAINER_METHODS = frozenset(name for kind in (dict, list, set, str, bytes, tuple) for name in dir(kind) if not name.startswith("_"))


@dataclass(frozen=True)
class FileView:
    """What the project pass knows that one file's findings depend on.  Function keys are the
    summary's: "name" for a module-level function, "Class.name" for a method."""

    no_grad: frozenset[str] = frozenset()  # every call in the project runs it without gradients
    grad_elsewhere: frozenset[str] = frozenset()  # another file calls it with gradients on
    trained: tuple[tuple[str, str], ...] = ()  # key -> the training code that calls it with gradients on
    per_step: tuple[tuple[str, str], ...] = ()  # key -> "every iteration of the loop ... in ..." / "every batch (...)"
    module_classes: frozenset[str] = frozenset()  # classes defined here that are nn.Modules
    history_calls: frozenset[str] = frozenset()  # callees as written here ("helper", "utils.helper")
    history_methods: frozenset[str] = frozenset()  # "Class.method": `self.method()` there returns history
    # Names other files of the project import from this one ("*": any name may be: a star import of
    # it, or it is a package's __init__.py, whose imports are its interface).
    imported_names: frozenset[str] = frozenset()
    # Files of the project import this one, and none of them (nor this one, nor the files importing
    # them, transitively) mentions an accelerator (`tables.ACCELERATOR_TEXT`): a library module
    # of a CPU-only project.
    host_importers: bool = False
    # What the file's star imports bring of torch, where each one is a file of the project (followed
    # through their own star imports): (local name, qualified) pairs, `("F", "torch.nn.functional")`.
    # None where the file has none or one the pass cannot follow (Context then takes the convention,
    # tables.STAR_IMPORT_CONVENTION).
    star_torch: Optional[tuple[tuple[str, str], ...]] = None
    # Callees as written here ("train_epoch", "utils.train_step", "Trainer.fit_batch" for
    # `self.fit_batch()`) that are functions of another file doing part of a training step on every
    # call, outside loops of their own, directly or through helpers: ("train_epoch",
    # "backward,model,step").  ML017 counts it for the loop that calls them.
    update_calls: tuple[tuple[str, str], ...] = ()
    # Callees as written here that return their parameter moved to a device (`async_copy_to(x,
    # gpu)`: `return x.cuda(gpu)` for a tensor), as "parameter,method,device parameter" (summaries'
    # `moves`): ("async_copy_to", "0,cuda,1").  A call of one is a move for every rule.
    mover_calls: tuple[tuple[str, str], ...] = ()
    # Functions and methods defined here that a class's `forward` in any file of the project calls,
    # in any branch, directly or through helpers (`TriangularCausalMask.__init__`, constructed in an
    # attention layer's `forward`): they run with every forward pass (`Project._per_forward`).
    per_forward: frozenset[str] = frozenset()
    # Callees as written here that return a tensor they have just made on the host (summaries'
    # `fresh`): `causal_mask(n)`, whose body builds `torch.triu(torch.ones(1, n, n))`.  A move of
    # their result is a host tensor copied to the device (ML013).
    host_calls: frozenset[str] = frozenset()
    # Names of the classes (of the files in this file's directory and below) whose instances own an Adam-family optimizer over their own
    # parameters (`self.optim = optim.Adam(params=self.parameters())`: BigGAN's Generator), where
    # every class of the project so named does: a `.half()` of an instance is pure-half Adam
    # training (ML015), whichever module the class comes from (`model = __import__(config["model"])`).
    # Each with the `__init__` parameters whose truth skips it, comma-separated (`if no_optim: return`):
    # ("Generator", "no_optim").
    adam_classes: tuple[tuple[str, str], ...] = ()
    # Names this file imports (`from utils import LossMeter`) that are classes of another file whose
    # `update` / `add` keeps a parameter as it is (summaries' `keeps`): running meters, whose
    # `update(loss)` keeps a value's history (memlint.analysis.meters).
    meter_classes: frozenset[str] = frozenset()
    # The file imports nothing of torch (nor anything by a star import), and a file of the project
    # that imports torch imports it: torch's objects reach its code through its parameters
    # (protonets' `Engine.train(model=..., optim_method=...)` trains a model it never names), so
    # the rules that ask about a training step (`Meta.follows_other_files_steps`) read it.
    torch_importers: bool = False
    # Classes as this file names them (its own, or imported: `from models.mtl import MtlLearner`)
    # that are nn.Modules whose `forward` computes gradients, in any branch, directly or through the
    # project's functions it calls (`torch.autograd.grad` for test-time adaptation, MAML-style:
    # meta-transfer-learning's `MtlLearner.meta_forward`).  Running one needs gradients.
    gradient_classes: frozenset[str] = frozenset()
    # Methods this file calls on a model (`model.loss(sample)`) that every project nn.Module class
    # defining one runs a model in (directly or through the functions it calls): protonets'
    # `Protonet.loss` runs its encoder.  Calling one on data runs the model.
    model_methods: frozenset[str] = frozenset()
    # Callees as written here (`utils.eval_mode`, `eval_mode`) that are project classes whose
    # `__enter__` puts models in eval mode (`model.train(False)`): `with utils.eval_mode(agent):`
    # is an evaluation region for what it is handed (pytorch_sac).
    eval_contexts: frozenset[str] = frozenset()
    # Methods (by name: `agent.sample_action(obs)`, whatever `agent` is) that every project method so
    # named runs its models in without gradients (under its own `no_grad`, or decorated so) and runs
    # no project function that runs a model with gradients on: curl's `CurlSacAgent.sample_action`.
    # Calling one builds no graph, whatever mode the model is in.
    grad_free_methods: frozenset[str] = frozenset()
    # Names this file imports (`from spectral import SpectralNorm`) that are nn.Module classes of
    # another file forwarding every call to the module their constructor is given (summaries'
    # `forwards`): `SpectralNorm(nn.Conv2d(...))` outputs what the convolution outputs
    # (memlint.analysis.wrapper_classes).
    wrapper_classes: frozenset[str] = frozenset()
    # Flags of this file's module-level functions that every call of the function in the project
    # turns on ("sinc:cuda": `def sinc(band, t, cuda=False)` always called as `sinc(..., cuda)` with
    # `cuda = x.is_cuda`): the branch behind `if cuda:` runs whenever the callers run on the
    # accelerator, not only on a special call (memlint.analysis.flag_arguments).  For a class's
    # constructor, also "Glow.__init__:lu:left-off" where some construction the pass resolves leaves
    # the flag off (`flag_left_off`: `if self.lu:` is then an opt-in instance's branch).
    flags_on: frozenset[str] = frozenset()
    # Callees as written here whose every return is a new tensor its producer keeps nothing of for
    # backward (summaries' `unsaved`): `utils.batch_norm(...)` returning `F.batch_norm(...)`.  An
    # activation may overwrite the result of a call of one in place (ML003).
    unsaved_calls: frozenset[str] = frozenset()
    # No file of the project imports this one, nor is it a package's `__init__.py`: a script whose
    # module-level names no other code of the project reads (ML003's reading of a module's own code;
    # a dynamic import, `importlib.import_module(name)`, is not seen).
    unimported: bool = False
    # Classes as this file names them whose `forward` computes gradients only when a flag is on: a
    # submodule run behind `if flag:` of a parameter defaulting to False (robustness's
    # `AttackerModel.forward` attacks its input `if make_adv:`), as "class:flag:position" (the
    # flag's position among the call's positional arguments, -1 for keyword-only).
    gradient_switches: frozenset[str] = frozenset()
    # Project functions as this file names them that return, alone or first in a tuple, an
    # instance of a class whose `forward` computes gradients (`model, _ = make_and_restore_model(...)`),
    # as "function:flag:position", the flag and position of that class's switch ("" and -1: always).
    gradient_factories: frozenset[str] = frozenset()
    # The names this file imports that are nn.Module classes of another file of the project
    # (`from trainer import MUNIT_Trainer`, whose class extends nn.Module there): building one
    # builds a model, whatever the name it is bound to (ML002's `trainer.eval()`).
    imported_modules: frozenset[str] = frozenset()
    # Method names (of those `model_methods` or the words accept) that some project method so named,
    # in the files connected to this one by imports, may compute gradients in (`_gradient_work`: a
    # PGD attack's `perturb`, an energy model's Langevin `sample` taking `torch.autograd.grad`):
    # calling one on a submodule after `self.eval()` is no evaluation (ML002).
    gradient_methods: frozenset[str] = frozenset()
    # The file is written for another deep-learning framework (paddle, MXNet Gluon, TensorFlow...:
    # summaries' `deep`, memlint.analysis.deep_imports) and nothing it imports brings torch in: no
    # import of torch or a library built on it, no star import the pass cannot follow, and no file
    # of the project it imports (followed through their imports) imports torch.  Not PyTorch code:
    # no rule reports in it (engine.lint_text).
    other_framework: bool = False
    # "function:parameter" of module-level functions defined here whose parameter holds, at every call
    # the project makes (one at least), a model the caller froze, or runs without gradients
    # (`Project._frozen_parameters`): KAIR's `test(model, L)`, every caller freezing its model or
    # under `no_grad`.  A run of that parameter builds no graph (memlint.analysis.frozen asks).
    frozen_parameters: frozenset[str] = frozenset()
    # "callee:position" for the callees as written here that are module-level functions of the
    # project returning a value that carries the history of their argument at `position` (every
    # return computes from that parameter with operations that keep it: `l2_norm(x)` returning
    # `torch.div(x, torch.norm(x, 2, 1, True))`; summaries' ["g", position] alternatives): the
    # argument's history is the result's (`Project._passes_history`, values asks it).
    history_through: frozenset[str] = frozenset()
    # Methods this file calls on an object ("val_start:eval", "train_start:train"), by name, that set
    # the mode of the models the object holds: "eval" where every project method so named (in the
    # files connected to this one by imports) only puts the models self holds in eval mode (SCAN's
    # `def val_start(self): self.img_enc.eval(); self.txt_enc.eval()`: `model.val_start()` is
    # `model.eval()` for its caller), "train" where some method so named may put one in training mode
    # (summaries' `mode`, memlint.analysis.mode_setters); where it has an "eval" one, "name:backprop"
    # for the names it calls of which some method may backpropagate or step (`gan.step_g(loss)`).
    mode_methods: frozenset[str] = frozenset()

    @property
    def digest(self) -> str:
        """What the view holds, for the cache key: the digest of `to_data`'s plain data (one field list)."""
        payload = json.dumps(self.to_data(), separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def widens_screens(self) -> bool:
        """Could these facts make a rule's screen answer "maybe" where it answered "no" without them?
        (Only the history facts reach a screen, memlint/prescreen/history.py, the training steps of
        other files ML017's screen, the project's moves and host tensors ML013's, the project's helpers
        returning unsaved tensors ML003's, the classes that build
        their own Adam ML015's, the models' methods and eval-mode context managers ML002's.)"""
        return bool(
            self.history_calls or self.history_methods or self.steps_elsewhere or self.mover_calls or self.host_calls or self.unsaved_calls
            or self.adam_classes or self.torch_importers or self.runs_other_files_models or self.history_through
        )  # fmt: skip

    @property
    def runs_other_files_models(self) -> bool:
        """Does the file run the project's models through facts only the project pass has: a method
        every project nn.Module so named runs a model in (`model.loss(sample)`), or a context manager
        of the project that puts models in eval mode (`with utils.eval_mode(agent):`)?  ML002's screen
        reads both."""
        return bool(self.model_methods or self.eval_contexts or self.eval_methods)

    @cached_property
    def eval_methods(self) -> frozenset[str]:
        """The method names of `mode_methods` that put the object's models in eval mode."""
        return frozenset(entry[: -len(":eval")] for entry in self.mode_methods if entry.endswith(":eval"))

    @cached_property
    def backprop_methods(self) -> frozenset[str]:
        """The method names of `mode_methods` of which some project method may backpropagate or step."""
        return frozenset(entry[: -len(":backprop")] for entry in self.mode_methods if entry.endswith(":backprop"))

    @cached_property
    def train_methods(self) -> frozenset[str]:
        """The method names of `mode_methods` that may put a model of the object in training mode."""
        return frozenset(entry[: -len(":train")] for entry in self.mode_methods if entry.endswith(":train"))

    @property
    def steps_elsewhere(self) -> bool:
        """Does the file call another file's function that backpropagates or steps an optimizer?  (A
        callee that only runs a model, TRADES' `trades_loss`, leaves the backward and the step to the
        file's own text, which its screens read anyway.)"""
        return any("backward" in work or "step" in work for _, work in self.update_calls)

    def trained_by(self, chain: Iterable[FunctionKey]) -> Optional[str]:
        """The training code that calls one of the functions `chain` with gradients on, if any."""
        trained = dict(self.trained)
        for key in chain:
            found = trained.get(key_string(key))
            if found is not None:
                return found
        return None

    def movers(self) -> dict[str, tuple[int, str, int]]:
        """`mover_calls` read: callee as written -> (the position of the parameter it returns moved,
        "cuda" or "to", the position of the parameter given as the device or -1).  The one reader
        of that string, for the rules (analysis/project_facts.py) and the screens alike."""
        found = {}
        for written, packed in self.mover_calls:
            parameter, method, device = packed.split(",")
            found[written] = (int(parameter), method, int(device))
        return found

    def per_step_of(self, key: FunctionKey) -> Optional[str]:
        return dict(self.per_step).get(key_string(key))

    def runs_per_forward(self, key: FunctionKey) -> bool:
        return key_string(key) in self.per_forward

    def flag_on(self, key: FunctionKey, parameter: str) -> bool:
        """Does every call of the module-level function `key` (every construction of the class, for
        its `__init__`) turn its flag `parameter` on?"""
        return f"{key_string(key)}:{parameter}" in self.flags_on

    def gradient_switch_map(self) -> tuple[dict[str, tuple[str, int]], dict[str, tuple[str, int]]]:
        """`gradient_switches` and `gradient_factories` unpacked: name -> (flag or "", position)."""
        def unpack(packed: frozenset[str]) -> dict[str, tuple[str, int]]:
            found = {}
            for entry in packed:
                name, flag, position = entry.rsplit(":", 2)
                found[name] = (flag, int(position))
            return found

        return unpack(self.gradient_switches), unpack(self.gradient_factories)

    def flag_left_off(self, key: FunctionKey, parameter: str) -> bool:
        """Does some construction of the class whose `__init__` is `key` that the project pass
        resolves leave its flag `parameter` off (or pass it on from elsewhere)?"""
        return f"{key_string(key)}:{parameter}:left-off" in self.flags_on

    def to_data(self) -> list:
        """Plain data for the cache (`from_data` reads it back)."""
        return [sorted(self.no_grad), sorted(self.grad_elsewhere), [list(p) for p in self.trained],
                [list(p) for p in self.per_step], sorted(self.module_classes), sorted(self.history_calls),
                sorted(self.history_methods), sorted(self.imported_names), self.host_importers, self._star_data(),
                [list(p) for p in self.update_calls], [list(p) for p in self.mover_calls], sorted(self.per_forward),
                sorted(self.host_calls), [list(p) for p in self.adam_classes], sorted(self.meter_classes), self.torch_importers,
                sorted(self.gradient_classes), sorted(self.model_methods), sorted(self.eval_contexts),
                sorted(self.grad_free_methods), sorted(self.wrapper_classes), sorted(self.flags_on), sorted(self.unsaved_calls),
                self.unimported, sorted(self.gradient_switches), sorted(self.gradient_factories), sorted(self.imported_modules),
                sorted(self.gradient_methods), self.other_framework, sorted(self.frozen_parameters), sorted(self.history_through),
                sorted(self.mode_methods)]  # fmt: skip

    def _star_data(self) -> Optional[list]:
        return None if self.star_torch is None else [list(p) for p in self.star_torch]

    @classmethod
    def from_data(cls, data: object) -> Optional["FileView"]:
        """The view `to_data` wrote, or None when `data` is not shaped like one (a damaged entry)."""
        if type(data) is not list or len(data) != 33 or any(type(data[i]) is not bool for i in (8, 16, 24, 29)):
            return None
        star = data[9]
        if star is not None and not (type(star) is list and all(type(x) is list and len(x) == 2 and all(type(y) is str for y in x) for x in star)):
            return None
        sets, pairs = [data[0], data[1], data[4], data[5], data[6], data[7], data[12], data[13], data[15], data[17], data[18], data[19], data[20], data[21], data[22], data[23], data[25], data[26], data[27], data[28], data[30], data[31], data[32]], [data[2], data[3], data[10], data[11], data[14]]
        if not all(type(s) is list and all(type(x) is str for x in s) for s in sets):
            return None
        if not all(type(p) is list and all(type(x) is list and len(x) == 2 and all(type(y) is str for y in x) for x in p) for p in pairs):
            return None
        return cls(frozenset(data[0]), frozenset(data[1]), tuple(tuple(x) for x in data[2]), tuple(tuple(x) for x in data[3]),
                   frozenset(data[4]), frozenset(data[5]), frozenset(data[6]), frozenset(data[7]), data[8],
                   None if star is None else tuple(tuple(x) for x in star), tuple(tuple(x) for x in data[10]),
                   tuple(tuple(x) for x in data[11]), frozenset(data[12]), frozenset(data[13]), tuple(tuple(x) for x in data[14]),
                   frozenset(data[15]), data[16], frozenset(data[17]), frozenset(data[18]), frozenset(data[19]),
                   frozenset(data[20]), frozenset(data[21]), frozenset(data[22]), frozenset(data[23]), data[24],
                   frozenset(data[25]), frozenset(data[26]), frozenset(data[27]), frozenset(data[28]),
                   data[29], frozenset(data[30]), frozenset(data[31]), frozenset(data[32]))  # fmt: skip


EMPTY_VIEW = FileView()


def key_string(key: FunctionKey) -> str:
    """memlint.analysis.context's ("method", "Net", "forward") -> "Net.forward"; ("func", "f") -> "f"."""
    return f"{key[1]}.{key[2]}" if key[0] == "method" else key[1]


def function_key(key: str) -> FunctionKey:
    owner, _, name = key.rpartition(".")
    return ("method", owner, name) if owner else ("func", name)


# ---------------------------------------------------------------------------- module names


def module_names(paths: Sequence[Path]) -> list[tuple[str, list[str]]]:
    """Each file's module name and longer aliases (`_Names.of`); asked once per directory."""
    names = _Names()
    return [names.of(path) for path in paths]


class _Names:
    """Module names of files, from the packages (directories with __init__.py) around them."""

    def __init__(self) -> None:
        self._is_package: dict[str, bool] = {}

    def _package(self, directory: str) -> bool:
        known = self._is_package.get(directory)
        if known is None:
            known = self._is_package[directory] = os.path.isfile(os.path.join(directory, "__init__.py"))
        return known

    def of(self, path: Path, extra_levels: int = 3) -> tuple[str, list[str]]:
        """The file's canonical name (from the outermost package around it, or its stem outside any)
        and a few longer names through the directories above (`models.net` for models/net.py in a
        directory without __init__.py, as a script beside `models/` imports it)."""
        absolute = os.path.abspath(path)
        directory, filename = os.path.split(absolute)
        if filename.endswith(".ipynb"):
            return "", []  # a notebook imports, nothing imports it
        stem = filename[: -len(".py")] if filename.endswith(".py") else filename
        parts = [] if stem == "__init__" else [stem]
        while self._package(directory):
            directory, name = os.path.split(directory)
            parts.insert(0, name)
            if not name:
                break
        canonical = ".".join(parts)
        aliases = []
        for _ in range(extra_levels):
            directory, name = os.path.split(directory)
            if not name or not name.isidentifier():
                break
            parts.insert(0, name)
            aliases.append(".".join(parts))
        return canonical, aliases


# ---------------------------------------------------------------------------- resolution


@dataclass
class _File:
    index: int
    path: Path
    shown: str
    summary: dict
    module: str
    directory: str
    is_package: bool  # an __init__.py: relative imports start from the module itself


@dataclass
class _Site:
    caller: tuple  # (file index, key); key "?" is code in a nested function
    callee: tuple
    grad: Optional[str]  # "off", "on", "?", or None (the caller's own mode)
    loop: Optional[list]  # None, or [loop index, header of a step loop or None, trains in it] (+ "runs": a loop over runs, run_loops)
    conditional: bool
    ref: list
    # For a call on an instance of a class picked at run time (`Project._instance_callees`): every
    # method it may reach, this site's callee among them; empty for a call of one known function.
    group: tuple = ()
    # Behind `if`s that only pick among the run's configured alternatives (summaries' "configured":
    # `if args.attack == 'pgd':`): conditional, yet on every iteration of a run that picks it.
    configured: bool = False
    # The arguments handed over frozen ((slot, True)) or a held parameter of the caller passed on
    # ((slot, name)), slot a position or a keyword (summaries' fifth `calls` entry, frozen_arguments).
    handed: tuple = ()


class Project:
    """The resolved facts of a set of summarised files."""

    def __init__(
        self, files: Sequence[tuple[Path, str, Optional[dict]]], names: Optional[Sequence[tuple[str, list[str]]]] = None
    ) -> None:
        """`files`: each file's path, the name it is shown under and its summary; `names`: their
        `module_names`, when the caller has them already."""
        names = names if names is not None else module_names([path for path, _, _ in files])
        self.files: list[Optional[_File]] = []
        self._unfresh_methods: Optional[set[str]] = None  # `_every_method_fresh`
        self._modules: dict[str, list[int]] = {}
        aliases: dict[str, list[int]] = {}
        for index, (path, shown, summary) in enumerate(files):
            if summary is None:
                self.files.append(None)
                continue
            canonical, longer = names[index]
            record = _File(index, Path(path), shown, summary, canonical, os.path.dirname(os.path.abspath(path)),
                           os.path.basename(str(path)) == "__init__.py")  # fmt: skip
            self.files.append(record)
            if canonical:
                self._modules.setdefault(canonical, []).append(index)
            for alias in longer:
                aliases.setdefault(alias, []).append(index)
        for alias, indices in aliases.items():
            self._modules.setdefault(alias, indices)  # a canonical name wins over a longer one
        self._aliases = aliases  # (`_module`: a longer name on the importer's path, where no canonical one is)
        self._resolved: dict[tuple, Optional[tuple]] = {}
        # `_module` and `_name` answers: pure functions of the files, asked again and again (every
        # call of every function resolves its names; each file's view resolves its imports twice)
        self._module_memo: dict[tuple[str, int], Optional[int]] = {}
        self._name_memo: dict[tuple[int, str, int], Optional[tuple]] = {}
        # `_picks` answers by (file, constructor): "import" lists the classes of every file of a package,
        # and each call site of a picked class asks again
        self._picks_memo: dict[tuple[int, str], Optional[list[tuple]]] = {}
        self._filled: Optional[set[tuple[int, str]]] = None  # `_filled_registries`
        self._registry_entries: dict[tuple[int, str], list[tuple]] = {}  # `_registry_classes`, per dict
        self._by_path: Optional[dict[str, int]] = None  # path without its suffix -> file (`_beside`)
        self._flag_count_memo: Optional[dict[tuple, tuple[int, dict[str, int]]]] = None  # `_flag_counts`
        self._frozen_memo: Optional[frozenset[tuple]] = None  # `_frozen_parameters`
        self._imported: Optional[dict[int, set[str]]] = None  # file -> names others import from it
        self._importers: dict[int, set[int]] = {}  # file -> the files that import it
        self._imported_stems: set[str] = set()  # the last part of every module name and name any file imports
        self._imports: dict[int, set[int]] = {}  # file -> the project's files it imports
        self._module_class: dict[tuple, bool] = {}
        self._sites: list[_Site] = []
        self._incoming: dict[tuple, list[_Site]] = {}
        self._outgoing: dict[tuple, list[_Site]] = {}
        # `model.loss(...)` sites: caller -> one site per project nn.Module method it may call
        self._model_outgoing: dict[tuple, list[_Site]] = {}
        self._methods_by_name: dict[str, list[tuple]] = {}
        self._method_candidates: Optional[dict[str, list[tuple[int, str, str]]]] = None  # `_methods_of_defined_classes`
        # Calls that may reach a method (the receiver's class unknown, `summaries` "may"): only the
        # fact "every call runs without gradients" counts them (a call that may reach a function is
        # one it cannot be sure of); callee -> sites, caller -> sites.
        self._may_incoming: dict[tuple, list[_Site]] = {}
        self._may_outgoing: dict[tuple, list[_Site]] = {}
        self._all_methods_by_name: Optional[dict[str, list[tuple]]] = None
        self._families: dict[tuple, Optional[tuple]] = {}  # method -> `_family`
        self._agreeing_memo: dict[tuple[int, str], list[tuple]] = {}  # (import component, name) -> `_agreeing`
        self._named_by_component: Optional[dict[tuple[int, str], list[tuple]]] = None  # (import component, name) -> `_methods_named`
        self._named_mode: dict[tuple[int, str], Optional[str]] = {}  # (import component, name) -> its mode (`_mode_methods_called`)
        self._named_backprop: dict[tuple[int, str], bool] = {}  # (import component, name) -> some method may backpropagate or step
        self._subclasses: Optional[dict[tuple, list[tuple]]] = None  # (file, class) -> its project subclasses
        self._components: Optional[list[int]] = None  # file -> its import component (`_component`)
        self._adam: dict[str, tuple[tuple[str, str], ...]] = {}  # directory -> FileView.adam_classes
        self._placeholder_overrides: Optional[dict[tuple, tuple[tuple, str]]] = None  # `_placeholders`
        self._ordered_classes: Optional[list[tuple]] = None  # `_class_order`
        self._collect_sites()
        self._collect_may_sites()
        self.no_grad = self._no_grad()
        self.trained = self._trained()
        self.per_step = self._per_step()
        self.per_forward = self._per_forward()
        self.history = self._history()
        self.through = self._passes_history()
        self.updates = self._updates()
        self._gradients: Optional[set[tuple]] = None  # functions that may compute gradients (`_gradient_work`)
        self._switches: dict[tuple, Optional[tuple[str, int]]] = {}  # a class -> `_gradient_switch`
        self._model_runners: Optional[set[tuple]] = None  # functions that run a model (`_reaching`)
        self._grad_free: dict[int, frozenset[str]] = {}  # import component -> FileView.grad_free_methods
        self._gradient_named: dict[int, frozenset[str]] = {}  # import component -> `_gradient_methods`

    # ------------------------------------------------------------------ names to code

    def _module(self, name: str, importer: _File) -> Optional[int]:
        """The file of module `name` as `importer` sees it: a unique match, or the one beside it."""
        key = (name, importer.index)
        if key in self._module_memo:
            return self._module_memo[key]
        found = self._module_memo[key] = self._find_module(name, importer)
        return found

    def _find_module(self, name: str, importer: _File) -> Optional[int]:
        candidates = self._modules.get(name)
        if not candidates:
            return self._beside(name, importer)
        if not any(_within(importer.directory, str(_import_root(self.files[i], name))) for i in candidates):  # type: ignore[arg-type]
            # No candidate's import root (the folder Python searches for it) is the importer's folder or
            # above it, so none is what a script run from there imports: the file beside the importer
            # is, if there is one (NRI's `from utils import *` beside modules.py, NRI/ being a package,
            # while another tree linted with it, curl's, has a top-level utils.py).
            beside = self._beside(name, importer)
            if beside is not None:
                return beside
            # a file the importer's path finds by a longer name (Towards-Realtime-MOT's utils/utils.py,
            # `utils.utils` from utils/datasets.py, where another tree linted with it has a package
            # lib/utils/ whose utils.py is canonically so named)
            on_path = [i for i in self._aliases.get(name, ()) if _within(importer.directory, str(_import_root(self.files[i], name)))]  # type: ignore[arg-type]
            if len(on_path) == 1:
                return on_path[0]
            if name.partition(".")[0] in STDLIB_MODULE_NAMES:
                return None  # `from io import BytesIO`: the standard library's, not another tree's io.py
        if len(candidates) == 1:
            return candidates[0]
        near = [i for i in candidates if self.files[i].directory.startswith(importer.directory)]  # type: ignore[union-attr]
        if len(near) == 1:
            return near[0]
        return self._on_importers_path(name, candidates, importer)

    def _beside(self, name: str, importer: _File) -> Optional[int]:
        """The file `name` names from the importer's own directory, where no module of the project
        is so named: a script in a directory that has an __init__.py (pytorch_RVAE's train.py,
        `from model.rvae import RVAE`) is run from there, so its folder, first on sys.path, finds
        model/rvae.py, whose canonical name starts at the outermost package."""
        if self._by_path is None:
            self._by_path = {os.path.splitext(os.path.abspath(f.path))[0]: f.index for f in self.files if f is not None}
        base = os.path.join(importer.directory, *name.split("."))
        found = self._by_path.get(base)
        return found if found is not None else self._by_path.get(os.path.join(base, "__init__"))

    def _on_importers_path(self, name: str, candidates: list[int], importer: _File) -> Optional[int]:
        """Of the files named `name`, the one Python finds for `importer` run from the innermost
        directory above it that holds `name` (a script's folder is the first on sys.path): in a
        repository with `utils/masking.py` and a copy in `FEDformer/utils/masking.py`, `from
        utils.masking import ...` in `layers/attn.py` means the first (FEDformer/ is not above
        layers/), in `FEDformer/layers/attn.py` the copy.  None where two are as near."""
        roots: dict[str, list[int]] = {}
        for index in candidates:
            root = _import_root(self.files[index], name)  # type: ignore[arg-type]
            if Path(importer.directory) == root or root in Path(importer.directory).parents:
                roots.setdefault(str(root), []).append(index)
        if not roots:
            return None
        innermost = max(roots, key=len)
        found = roots[innermost]
        return found[0] if len(found) == 1 and sum(len(r) == len(innermost) for r in roots) == 1 else None

    def _import_target(self, file: _File, target: list) -> Optional[str]:
        """The absolute dotted name an import binds: ["pkg.mod", "f", 0] -> "pkg.mod.f"."""
        module, name, level = target
        if level:
            package = file.module.split(".") if file.module else []
            if not file.is_package:
                package = package[:-1]
            if level - 1 > len(package):
                return None
            base = package[: len(package) - (level - 1)]
            module = ".".join([*base, module] if module else base)
        if not module:
            return name
        return f"{module}.{name}" if name else module

    def _lookup(self, qualified: str, importer: _File, depth: int = 0) -> Optional[tuple]:
        """The project code an absolute dotted name means: ("func", file, key), ("class", file,
        name), ("module", file), or None (not the project's, or cannot tell)."""
        if depth > 8:
            return None
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            index = self._module(".".join(parts[:cut]), importer)
            if index is None:
                continue
            rest = parts[cut:]
            if not rest:
                return ("module", index)
            return self._member(self.files[index], rest, depth)  # type: ignore[arg-type]
        return None

    def _member(self, file: _File, rest: list[str], depth: int) -> Optional[tuple]:
        summary = file.summary
        first = rest[0]
        if first in summary["classes"] and first in summary["defs"]:
            if len(rest) == 1:
                return ("class", file.index, first)
            if len(rest) == 2:
                return self._method(("class", file.index, first), rest[1], depth)
            return None
        if first in summary["functions"] and first in summary["defs"]:
            return ("func", file.index, first) if len(rest) == 1 else None
        target = summary["imports"].get(first)
        if target is not None:
            absolute = self._import_target(file, target)
            if absolute is None:
                return None
            imported = self._module(absolute, file) if len(rest) > 1 else None
            if imported is not None:
                # `import discrete_BCQ` then `discrete_BCQ.discrete_BCQ(...)` in discrete_BCQ/main.py:
                # the member of the module the import binds (the sibling file), before a longer
                # module path that happens to spell the same dotted name (the file itself, seen
                # from the folder above)
                found = self._member(self.files[imported], rest[1:], depth + 1)  # type: ignore[arg-type]
                if found is not None:
                    return found
            return self._lookup(".".join([absolute, *rest[1:]]), file, depth + 1)
        # A name the file's star imports of project modules bring (a package's `__init__.py` with
        # `from .base_model import *`, then `from base import BaseModel` elsewhere): the first
        # module that defines it, in the order written.
        for module, level in summary.get("stars", ()):
            if depth > 8:
                break
            absolute = self._import_target(file, [module, None, level])
            found = self._lookup(".".join([absolute, *rest]), file, depth + 1) if absolute is not None else None
            if found is not None and found[0] != "module":
                return found
        return None

    def _name(self, file: _File, written: str, depth: int = 0) -> Optional[tuple]:
        """What a dotted name as written in `file` means (its root a definition or an import there)."""
        key = (file.index, written, depth)
        if key in self._name_memo:
            return self._name_memo[key]
        first, _, rest = written.partition(".")
        parts = [first, *rest.split(".")] if rest else [first]
        found = self._name_memo[key] = self._member(file, parts, depth)
        return found

    def _method(self, owner: tuple, name: str, depth: int = 0) -> Optional[tuple]:
        """Method `name` of a project class, looked up through its project bases (first match)."""
        if depth > 8:
            return None
        _, index, class_name = owner
        file = self.files[index]
        key = f"{class_name}.{name}"
        if key in file.summary["functions"]:  # type: ignore[union-attr]
            return ("func", index, key)
        for base in file.summary["classes"][class_name]["bases"]:  # type: ignore[union-attr]
            resolved = self._name(file, base, depth + 1)  # type: ignore[arg-type]
            if resolved is not None and resolved[0] == "class":
                found = self._method(resolved, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _base_method(self, owner: tuple, name: str) -> Optional[tuple]:
        """The method `name` that `super().name()` in a method of a project class runs: as Python's
        MRO finds it, or None where that cannot be told.  With one base, the first of its own
        (through its bases); with several, the one method every base that supplies `name` finds (C3
        keeps each base's order, so then that method comes first), None where two bases supply
        different ones (`class Video(Logged, Frozen)`: Frozen's may run, not Plain's) or a base is
        not the project's (its `name` may be what runs)."""
        file = self.files[owner[1]]
        found: Optional[tuple] = None
        for base in file.summary["classes"].get(owner[2], {}).get("bases", ()):  # type: ignore[union-attr]
            resolved = self._name(file, base)  # type: ignore[arg-type]
            if resolved is None or resolved[0] != "class":
                return None
            method = self._method(resolved, name)
            if method is not None:
                if found is not None and method != found:
                    return None
                found = method
        return found

    def _instance_method(self, owner: tuple, name: str) -> Optional[tuple]:
        """The method a call on an instance of a project class runs: `obj.m()` its `m`; `obj(x)`
        (name "__call__") an nn.Module's `forward`, or another class's own `__call__`."""
        if name == "__call__" and self.is_module_class(owner[1], owner[2]):
            return self._method(owner, "forward")
        return self._method(owner, name)

    def resolve(self, index: int, key: str, ref: list) -> Optional[tuple]:
        """The (file, key) of the project function a reference in function `key` of file `index`
        calls, or None."""
        memo_key = (index, key if ref[0] in ("s", "i", "r", "p") else "", tuple(ref) if ref[0] != "r" else repr(ref))
        if memo_key in self._resolved:
            return self._resolved[memo_key]
        file = self.files[index]
        found = None
        kind = ref[0]
        if kind in ("n", "d"):
            found = self._name(file, ref[1])  # type: ignore[arg-type]
            if found is not None and found[0] == "class":
                found = self._method(found, "__init__")  # a construction runs the class's `__init__`
        elif kind == "s" and "." in key:
            found = self._method(("class", index, key.partition(".")[0]), ref[1])
        elif kind == "p" and "." in key:
            found = self._base_method(("class", index, key.partition(".")[0]), ref[1])
        elif kind == "i":
            classes = self._instances_built(file, ref[1])  # type: ignore[arg-type]
            picked = self._is_picked(file, ref[1])  # type: ignore[arg-type]
            found = self._instance_method(classes[0], ref[2]) if len(classes) == 1 and not picked else None
        elif kind == "r":
            found = self._closure_of(self.resolve(index, key, ref[2]))
        result = (found[1], found[2]) if found is not None and found[0] == "func" else None
        self._resolved[memo_key] = result
        return result

    def _closure_of(self, factory: Optional[tuple]) -> Optional[tuple]:
        """The inner function a project function returns (summaries' `closure`: `RVAE.trainer`
        returns its `train`), as a lookup result, or None: calling the result runs it."""
        if factory is None:
            return None
        closure = self.record(factory).get("closure")
        if closure is None or closure not in self.files[factory[0]].summary["functions"]:  # type: ignore[union-attr]
            return None
        return ("func", factory[0], closure)

    def _instances_built(self, file: _File, constructor: str) -> list[tuple]:
        """The project classes whose instance a call of `constructor` (as written in `file`, or
        qualified: a class's `attrs`) returns: the class it names, or every class a factory function
        constructs in its returns (`make_agent(...)` whose branches return `CurlSacAgent(...)`:
        summaries' `builds`); [] where any of them is not the project's class.  An instance of a class
        picked at run time ("algorithms.get_algorithm_class()": `_picks`) may be of any candidate."""
        picked = self._picks(file, constructor)
        if picked is not None:
            return picked
        if constructor.endswith("[]"):
            return self._registry_classes(file, constructor[:-2])
        owner = self._name(file, constructor) or self._lookup(constructor, file)
        if owner is None:
            return []
        if owner[0] == "class":
            return [owner]
        built = self.record((owner[1], owner[2])).get("builds", ()) if owner[0] == "func" else ()
        classes = []
        for written in built:
            picked = self._picks(self.files[owner[1]], written) if isinstance(written, str) else None  # type: ignore[arg-type]
            classes.extend(picked if picked is not None else [self._built_class(self.files[owner[1]], written)])  # type: ignore[arg-type]
        return classes if classes and all(c is not None and c[0] == "class" for c in classes) else []  # type: ignore[misc]

    def _registry_classes(self, file: _File, written: str) -> list[tuple]:
        """The project classes an instance built by `REGISTRY[key](cfg, ...)` may be of (`written` the dict
        as `file` writes it): what each entry of the registry dict builds, a class or a factory
        function's classes (summaries' `registries`); [] where the dict is no known registry, another
        file adds entries to it (summaries' `fills`), or any entry is not the project's class: then
        whichever entry the key picks may be code the pass does not know."""
        found = self._registry(file, written)
        if found is None or found in self._filled_registries():
            return []
        known = self._registry_entries.get(found)
        if known is not None:
            return known
        self._registry_entries[found] = []  # (an entry that is the registry itself: `R[k]` picks no known class)
        owner = self.files[found[0]]
        classes: list[tuple] = []
        seen: set[tuple] = set()
        for entry in owner.summary["registries"][found[1]]:  # type: ignore[union-attr]
            built = self._instances_built(owner, entry) if not entry.endswith("[]") else []  # type: ignore[arg-type]
            if not built:
                return []
            for c in built:
                if c not in seen:
                    seen.add(c)
                    classes.append(c)
        self._registry_entries[found] = classes
        return classes

    def _registry(self, file: _File, written: str, depth: int = 0) -> Optional[tuple[int, str]]:
        """The (file, name) of the module-level registry dict `written` names in `file`: its own, or
        one it imports (through a package's re-export too), or None."""
        first, _, rest = written.partition(".")
        summary = file.summary
        if not rest and first in summary.get("registries", {}) and first not in summary["imports"]:  # type: ignore[operator, index]
            return (file.index, first)
        target = summary["imports"].get(first)  # type: ignore[index]
        absolute = self._import_target(file, target) if target is not None and depth < 4 else None
        if absolute is None:
            return None
        module, _, name = (f"{absolute}.{rest}" if rest else absolute).rpartition(".")
        index = self._module(module, file) if module else None
        if index is None:
            return None
        other = self.files[index]
        if name in other.summary.get("registries", {}) and name not in other.summary["imports"]:  # type: ignore[union-attr, index]
            return (index, name)
        return self._registry(other, name, depth + 1) if name in other.summary["imports"] else None  # type: ignore[arg-type, union-attr, index]

    def _filled_registries(self) -> set[tuple[int, str]]:
        """The registry dicts some other file adds entries to (summaries' `fills`), once."""
        if self._filled is None:
            self._filled = set()
            for other in self.files:
                for local in other.summary.get("fills", ()) if other is not None else ():  # type: ignore[union-attr]
                    found = self._registry(other, local)
                    if found is not None:
                        self._filled.add(found)
        return self._filled

    def _picks(self, file: _File, constructor: str) -> Optional[list[tuple]]:
        """The classes an instance built as `constructor` may be of, where it is a class a project
        function picks at run time by a name (summaries' `picks`; the constructor as summaries write
        it, "factory()"): "globals", the classes its module defines (`globals()[name]` in a registry
        module: the classes it imports are its tools, MovingAverage beside DomainBed's algorithms);
        "import", the classes of its package's files (`importlib.import_module("models." + name)`).
        None where the constructor is no such call; [] where the pass cannot tell."""
        if not constructor.endswith("()"):
            return None
        key = (file.index, constructor)
        if key not in self._picks_memo:
            self._picks_memo[key] = self._find_picks(file, constructor)
        return self._picks_memo[key]

    def _find_picks(self, file: _File, constructor: str) -> list[tuple]:
        factory = self._name(file, constructor[:-2]) or self._lookup(constructor[:-2], file)
        kind = self.record((factory[1], factory[2])).get("picks") if factory is not None and factory[0] == "func" else None
        if kind == "globals":
            summary = self.files[factory[1]].summary  # type: ignore[index, union-attr]
            return [("class", factory[1], name) for name in summary["classes"] if name in summary["defs"]]  # type: ignore[index]
        if kind == "import":
            package = self.files[factory[1]].directory  # type: ignore[index, union-attr]
            return [
                ("class", other.index, name) for other in self.files
                if other is not None and _within(other.directory, package)
                for name in other.summary["classes"] if name in other.summary["defs"]
            ]  # fmt: skip
        return []

    def _is_picked(self, file: _File, constructor: str) -> bool:
        """Is an instance built as `constructor` of a class picked at run time: "factory()", or a
        factory function that returns one (`create_model(opt)`: `return find_model_using_name(...)(opt)`)?"""
        if constructor.endswith("()"):
            return True
        owner = self._name(file, constructor) or self._lookup(constructor, file)
        built = self.record((owner[1], owner[2])).get("builds", ()) if owner is not None and owner[0] == "func" else ()
        return any(isinstance(written, str) and written.endswith("()") for written in built)

    def _instance_callees(self, file: _File, constructor: str, method: str) -> list[tuple]:
        """The project methods `obj.method()` may run, `obj` built as `constructor`, where its class is
        picked at run time (`_picks`): the candidates' own `method` (through their bases), passing over
        the classes without one and the placeholders to be overridden (summaries' `abstract`), all of
        them overrides of one method of a common base (`_family`), else []: a name shared by unrelated
        classes (`update` of an algorithm and of a meter) tells nothing about the call."""
        candidates = self._instances_built(file, constructor) if self._is_picked(file, constructor) else []
        if not candidates:
            return []
        callees = []
        for owner in candidates:
            found = self._instance_method(owner, method)
            callee = (found[1], found[2]) if found is not None and found[0] == "func" else None
            if callee is not None and not self.record(callee).get("abstract") and callee not in callees:
                callees.append(callee)
        roots = {self._family(callee) for callee in callees}
        return callees if len(roots) == 1 and None not in roots else []

    def _family(self, callee: tuple) -> Optional[tuple]:
        """The topmost project class defining the method `callee` is (through first bases defining it),
        with its name: overrides of one method share it.  None where the class is not found.  Kept per
        callee (`_agreeing` asks it of every candidate at every call site)."""
        if callee not in self._families:
            self._families[callee] = self._family_of(callee)
        return self._families[callee]

    def _family_of(self, callee: tuple) -> Optional[tuple]:
        index, key = callee
        class_name, _, method = key.partition(".")
        owner: Optional[tuple] = ("class", index, class_name)
        top = None
        for _ in range(12):
            if owner is None:
                break
            file = self.files[owner[1]]
            if f"{owner[2]}.{method}" in file.summary["functions"]:  # type: ignore[union-attr]
                top = (owner[1], owner[2])
            parent = None
            for base in file.summary["classes"].get(owner[2], {}).get("bases", ()):  # type: ignore[union-attr]
                resolved = self._name(file, base)  # type: ignore[arg-type]
                if resolved is not None and resolved[0] == "class" and self._method(resolved, method) is not None:
                    parent = resolved
                    break
            owner = parent
        return top

    def _built_class(self, file: _File, written) -> Optional[tuple]:
        """A factory's constructor (summaries' `builds`): a name as written in `file`, or the target
        [module, name, level] of an import in the factory's own body."""
        if isinstance(written, str):
            return self._name(file, written)
        absolute = self._import_target(file, written)
        return self._lookup(absolute, file) if absolute is not None else None

    def is_module_class(self, index: int, class_name: str, depth: int = 0) -> bool:
        """Is the class an nn.Module (or a LightningModule, a PreTrainedModel), through its bases in
        any summarised file?"""
        memo_key = (index, class_name)
        known = self._module_class.get(memo_key)
        if known is not None:
            return known
        if depth > 12:
            return False
        self._module_class[memo_key] = False  # a cycle of bases is no nn.Module
        file = self.files[index]
        answer = False
        for base in file.summary["classes"][class_name]["bases"]:  # type: ignore[union-attr]
            if self._is_module_base(file, base, depth):  # type: ignore[arg-type]
                answer = True
                break
        self._module_class[memo_key] = answer
        return answer

    def _is_module_base(self, file: _File, base: str, depth: int) -> bool:
        root, _, rest = base.partition(".")
        target = file.summary["imports"].get(root)
        if target is not None and not target[2]:
            absolute = self._import_target(file, target)
            qualified = f"{absolute}.{rest}" if rest else absolute
            if _is_torch_module_name(qualified):
                return True
        elif target is not None and base in tables.MODULE_BASE_NAMES:
            return True  # a library's own relative import of PreTrainedModel / LightningModule
        resolved = self._name(file, base)
        return resolved is not None and resolved[0] == "class" and self.is_module_class(resolved[1], resolved[2], depth + 1)

    def _constructs_module(self, file: _File, class_name: str, attr: str) -> bool:
        """Was `self.attr` built by an nn.Module class (`nn.Linear(...)`, a project module class)?"""
        constructor = file.summary["classes"][class_name].get("attrs", {}).get(attr)
        if constructor is None:
            return False
        if _is_torch_module_name(constructor):
            return True
        resolved = self._name(file, constructor)
        return resolved is not None and resolved[0] == "class" and self.is_module_class(resolved[1], resolved[2])

    # ------------------------------------------------------------------ the call graph

    def _functions(self):
        """Every function of the project, the notebooks' last: where a script and a notebook both
        call a function (a repository's notebook often mirrors its script), the evidence a message
        cites is the script's call, the first site found."""
        files = [file for file in self.files if file is not None]
        for file in sorted(files, key=lambda file: file.path.suffix == ".ipynb"):
            for key, record in file.summary["functions"].items():
                yield file, key, record

    def _collect_sites(self) -> None:
        for file, key, record in self._functions():
            caller = (file.index, key)
            for ref, grad, loop, condition, *handed in record.get("calls", ()):
                conditional, configured = condition is not False, condition == "configured"
                if ref[0] == "m":
                    for callee in self._model_methods(ref[1]):
                        self._model_outgoing.setdefault(caller, []).append(_Site(caller, callee, grad, loop, conditional, ref, configured=configured))
                    continue
                callee = self.resolve(file.index, key, ref)
                if callee is None and ref[0] == "i":
                    # an instance of a class picked at run time: like `model.loss(...)`, only the
                    # per-step fact follows it, to every method it may reach
                    group = tuple(self._instance_callees(file, ref[1], ref[2]))
                    for member in group:
                        self._model_outgoing.setdefault(caller, []).append(_Site(caller, member, grad, loop, conditional, ref, group, configured))
                if callee is None:
                    continue
                site = _Site(caller, callee, grad, loop, conditional, ref, configured=configured, handed=tuple(map(tuple, handed[0])) if handed else ())
                self._sites.append(site)
                self._incoming.setdefault(callee, []).append(site)
                self._outgoing.setdefault(caller, []).append(site)

    def _collect_may_sites(self) -> None:
        """The "may" calls of every function, as sites to each project method they may reach.  A
        call from training code (a training hook, a function that trains outside any loop, a loop
        that trains) is left out: were it to reach an evaluation method, the method would be
        training code's (`trained`), which an evaluation rule leaves alone as it leaves a method
        only ever run without gradients; so such a call changes no answer, and counting it would
        only let an unrelated class's method named alike (`trainer.evaluate()`) unsettle one.

        A call without gradients reaches only the methods it agrees on (`_agreeing`): it may be a
        method's one call (`test_dataset.multi_scale_inference(...)` under no_grad), and a method
        so named in an unrelated class must not be settled by it.  An unconditional call in a loop
        that is a training or evaluation loop by its own evidence is, as `model.loss(...)` is, a
        call on every step of each method it agrees on (`_per_step`).  `self.m()` in a class's
        method may also run the overrides of `m` in the project's subclasses (`_overrides`), for
        "only ever called without gradients": HRNet's `BaseDataset.multi_scale_inference` runs
        `LIP.inference` for a LIP dataset."""
        for file, key, record in self._functions():
            caller = (file.index, key)
            trains = record.get("hook") == "training" or record.get("trains")
            # (`model.loss(...)` on a receiver named like a model is a call of the nn.Modules' `loss`
            # alone, `_model_methods`: a class of another kind defining one is not the model's)
            on_models = {ref[1] for ref, *_ in record.get("calls", ()) if ref[0] == "m"}
            for reference, grad, loop_trains, loop, conditional in record.get("may", ()):
                if (loop is not None and loop[1] is not None and not conditional and reference[0] == "u"
                        and reference[1] not in _CONTAINER_METHODS and reference[1] not in on_models):
                    group = tuple(self._agreeing(file, reference))
                    # one method so named says nothing of the receiver: a third-party object's
                    # same-named method (a plot axis's `plot`) may be what runs
                    for member in group if len(group) > 1 else ():
                        self._model_outgoing.setdefault(caller, []).append(_Site(caller, member, grad, loop, conditional, reference, group))
                elif loop is not None and not conditional and reference[0] == "k" and len(reference) > 4 and reference[4]:
                    # `trainer` bound to `MUNIT_Trainer(...)` in one branch and `UNIT_Trainer(...)` in
                    # another: an unconditional `trainer.gen_update(...)` in a step loop is a call on
                    # every step of whichever class's method the run built (as a picked class's, `i`);
                    # not where a binding comes after the loop or holds it (summaries' `_alternatives_before`)
                    group = tuple(self._alternative_methods(file, reference))
                    for member in group:
                        self._model_outgoing.setdefault(caller, []).append(_Site(caller, member, grad, loop, conditional, reference, group))
                if loop_trains or (trains and loop_trains is None):
                    continue
                for callee in self._agreeing(file, reference) if grad == "off" else self._reached(file, reference):
                    self._add_may_site(_Site(caller, callee, grad, None, False, reference))
        for site in list(self._sites):
            if site.ref[0] != "s" or site.grad == "off":
                continue  # (a call without gradients cannot break "only ever without")
            record = self.record(site.caller)
            if (site.loop is not None and site.loop[2]) or record.get("hook") == "training" or (record.get("trains") and site.loop is None):
                continue
            for callee in self._overrides(site.caller, site.ref[1]):
                if callee != site.callee:
                    self._add_may_site(_Site(site.caller, callee, site.grad, None, False, site.ref))

    def _add_may_site(self, site: _Site) -> None:
        self._may_incoming.setdefault(site.callee, []).append(site)
        self._may_outgoing.setdefault(site.caller, []).append(site)

    def _reached(self, file: _File, reference: list) -> list[tuple]:
        """The methods a "may" reference may reach: for a name alone, those of the files connected to
        `file` by imports (one program's code: a run over several repositories is not one program)."""
        return self._methods_named(file.index, reference[1]) if reference[0] == "u" else self._may_reach(file, reference)

    def _agreeing(self, file: _File, reference: list) -> list[tuple]:
        """The methods a "may" reference reaches where they agree: the non-placeholder methods it may
        reach (of the files connected to `file` by imports, for a name alone), all overrides of one
        method of a common base (`_family`); else [].  A reference to the classes whose constructors
        build the receiver (["k", ...]) agrees on all their methods.  Kept per import component and
        name for a name alone: every call site of a program asks it again."""
        if reference[0] == "k":
            # the receiver is built by one of these constructors on every path (`trainer =
            # MUNIT_Trainer(config)` or `UNIT_Trainer(config)`, by configuration): on each path the
            # call runs that class's method, never an unrelated class's, so it reaches them all
            return [callee for callee in dict.fromkeys(self._may_reach(file, reference)) if not self.record(callee).get("abstract")]
        if reference[0] != "u":
            return self._agreeing_among(file, reference)
        key = (self._component(file.index), reference[1])
        found = self._agreeing_memo.get(key)
        if found is None:
            found = self._agreeing_memo[key] = self._agreeing_among(file, reference)
        return found

    def _agreeing_among(self, file: _File, reference: list) -> list[tuple]:
        callees = [callee for callee in dict.fromkeys(self._reached(file, reference)) if not self.record(callee).get("abstract")]
        roots = {self._family(callee) for callee in callees}
        return callees if len(roots) == 1 and None not in roots else []

    def _overrides(self, caller: tuple, method: str) -> list[tuple]:
        """The methods `method` that the project's subclasses of the caller's class define themselves
        (transitively): what `self.method()` in the caller may run instead of its own class's."""
        index, key = caller
        if "." not in key or key in ("", "?"):
            return []
        subclasses = self._subclass_map()
        found: list[tuple] = []
        seen: set[tuple] = set()
        pending = list(subclasses.get((index, key.partition(".")[0]), ()))
        while pending:
            owner = pending.pop()
            if owner in seen:
                continue
            seen.add(owner)
            own = f"{owner[1]}.{method}"
            if own in self.files[owner[0]].summary["functions"]:  # type: ignore[union-attr]
                found.append((owner[0], own))
            pending.extend(subclasses.get(owner, ()))
        return found

    def _subclass_map(self) -> dict[tuple, list[tuple]]:
        """(file, class) -> the project classes that name it as a base (built once)."""
        if self._subclasses is None:
            self._subclasses = {}
            for other in self.files:
                if other is None:
                    continue
                for name, record in other.summary["classes"].items():
                    if name not in other.summary["defs"]:
                        continue
                    for base in record.get("bases", ()):
                        parent = self._name(other, base)
                        if parent is not None and parent[0] == "class":
                            self._subclasses.setdefault((parent[1], parent[2]), []).append((other.index, name))
        return self._subclasses

    def _alternative_methods(self, file: _File, reference: list) -> list[tuple]:
        """The methods a ["k", constructors, method, receiver] reference runs, one per alternative,
        where every constructor names a project class that has the method (its own or a project
        base's), none of them a placeholder (summaries' `abstract`); else []: an alternative the
        project cannot see may be what the run built, and its method is not the project's."""
        found = []
        for constructor in reference[1]:
            owner = self._name(file, constructor)
            method = self._instance_method(owner, reference[2]) if owner is not None and owner[0] == "class" else None
            if method is None or method[0] != "func" or self.record((method[1], method[2])).get("abstract"):
                return []
            if (method[1], method[2]) not in found:
                found.append((method[1], method[2]))
        return found

    def _may_reach(self, file: _File, reference: list) -> list[tuple]:
        """The project methods a "may" reference can call: those of the classes its constructors
        name (["k", ...]), or every method of the project so named (["u", ...])."""
        if reference[0] == "k":
            found = []
            for constructor in reference[1]:
                owner = self._name(file, constructor)
                method = self._method(owner, reference[2]) if owner is not None and owner[0] == "class" else None
                if method is not None and method[0] == "func":
                    found.append((method[1], method[2]))
            return found
        return self._all_methods_named().get(reference[1], [])

    def _all_methods_named(self) -> dict[str, list[tuple]]:
        """Every method of the project's classes, by name, in the order the files come."""
        if self._all_methods_by_name is None:
            self._all_methods_by_name = {}
            for other in self.files:
                if other is None:
                    continue
                for key in other.summary["functions"]:
                    owner, _, name = key.partition(".")
                    if name and owner in other.summary["defs"]:
                        self._all_methods_by_name.setdefault(name, []).append((other.index, key))
        return self._all_methods_by_name

    def _model_methods(self, name: str) -> list[tuple]:
        """The methods `name` that the project's nn.Module classes define themselves: what
        `model.name(...)` may call, whichever of them the model is.  Only `_per_step` follows these
        sites (the model runs one of them on every step); the history and training facts, which
        must hold for every call, do not.  For "only ever called without gradients" the same call is
        a "may" site (`_collect_may_sites`): one it cannot be sure of."""
        found = self._methods_by_name.get(name)
        if found is None:
            if self._method_candidates is None:
                self._method_candidates = self._methods_of_defined_classes()
            # (asked of the candidates in the order the files and their classes come: `is_module_class`
            # keeps what it finds, a cycle of bases included, so the order of the questions is kept)
            found = [(index, key) for index, class_name, key in self._method_candidates.get(name, ()) if self.is_module_class(index, class_name)]
            self._methods_by_name[name] = found
        return found

    def _methods_of_defined_classes(self) -> dict[str, list[tuple[int, str, str]]]:
        """Method name -> (file, class, key) of each class a file defines with a method so named, in
        the order of the files and of each file's classes: read once (each name `_model_methods`
        is asked looked at every class of the project before)."""
        found: dict[str, list[tuple[int, str, str]]] = {}
        for file in self.files:
            if file is None:
                continue
            classes = file.summary["classes"]
            methods: dict[str, list[str]] = {}  # class -> the names `Class.<name>` of its functions
            for key in file.summary["functions"]:
                class_name, dot, name = key.partition(".")
                if dot and class_name in classes:
                    methods.setdefault(class_name, []).append(name)
            for class_name in classes:
                if class_name in methods and class_name in file.summary["defs"]:
                    for name in methods[class_name]:
                        found.setdefault(name, []).append((file.index, class_name, f"{class_name}.{name}"))
        return found

    def record(self, function: tuple) -> dict:
        return self.files[function[0]].summary["functions"].get(function[1], {})  # type: ignore[union-attr]

    def base_grad(self, function: tuple) -> Optional[str]:
        """The grad mode a function's decorators or its framework give it, whoever calls it."""
        record = self.record(function)
        if function[1] == "?":
            return "?"
        if function[1] == "":
            return "on"  # a script's own code runs with gradients on
        if "grad" in record:
            return record["grad"]
        for decorator in record.get("decorators", ()):
            found = self._name(self.files[function[0]], decorator)  # type: ignore[arg-type]
            if found is not None and found[0] == "func" and self.record((found[1], found[2])).get("wraps_no_grad"):
                return "off"
        return None

    def _no_grad(self) -> set[tuple]:
        """Functions every call site of which runs without gradients: the site's own code turns
        them off, or its caller is such a function (least fixed point, from the callers down)."""
        result: set[tuple] = set()
        pending: dict[tuple, int] = {}
        ready: list[tuple] = []
        bases: dict[tuple, Optional[str]] = {}

        def base(function: tuple) -> Optional[str]:
            if function not in bases:
                bases[function] = self.base_grad(function)
            return bases[function]

        for callee in {**self._incoming, **self._may_incoming}:
            open_sites = 0
            for site in [*self._incoming.get(callee, ()), *self._may_incoming.get(callee, ())]:
                if site.grad == "off" or (site.grad is None and base(site.caller) == "off"):
                    continue
                if site.grad is None and base(site.caller) is None:
                    open_sites += 1  # decided by the caller's own callers
                else:
                    open_sites = -1  # on, or cannot tell: never
                    break
            if open_sites == 0:
                ready.append(callee)
            elif open_sites > 0:
                pending[callee] = open_sites
        while ready:
            function = ready.pop()
            if function in result:
                continue
            result.add(function)
            for site in [*self._outgoing.get(function, ()), *self._may_outgoing.get(function, ())]:
                if site.grad is None and site.callee in pending:
                    pending[site.callee] -= 1
                    if pending[site.callee] == 0:
                        ready.append(site.callee)
        return result

    def runs_with_grad(self, site: _Site) -> bool:
        """Does this call certainly run with gradients on (as far as the project shows)?"""
        if site.grad is not None:
            return site.grad == "on"
        base = self.base_grad(site.caller)
        if base is not None:
            return base == "on"
        return site.caller not in self.no_grad

    def _trained(self) -> dict[tuple, str]:
        """Functions called with gradients on from training code: a training step (`training_step`,
        or a function that calls backward or an optimizer's step outside any loop), a loop that
        does, or a function so called."""
        result: dict[tuple, str] = {}
        ready: list[tuple] = []
        for site in self._sites:
            if not self.runs_with_grad(site):
                continue
            record = self.record(site.caller)
            in_training_loop = site.loop is not None and site.loop[2]
            if record.get("hook") == "training" or (record.get("trains") and site.loop is None) or in_training_loop:
                if site.callee not in result:
                    result[site.callee] = self._describe(site.caller, site.loop)
                    ready.append(site.callee)
        for caller, forward in self._own_forwards_trained():
            if forward not in result:
                result[forward] = self._describe(caller, None)
                ready.append(forward)
        while ready:
            function = ready.pop()
            for site in self._outgoing.get(function, ()):
                if site.callee not in result and self.runs_with_grad(site):
                    result[site.callee] = result[function]
                    ready.append(site.callee)
        return result

    def _own_forwards_trained(self):
        """(training code, the `forward` it runs) for each training step that runs its own module,
        `self(x)` in an nn.Module's method with gradients on (summaries' `model` ["c"] and
        `model_grad`): a Lightning `training_step` calling `self(rays)` runs its class's `forward`
        (nerf_pl's, which renders through `render_rays`) with gradients on, and so everything
        `forward` calls.  The call of `self` is no call site of its own, so `_trained` seeds it here."""
        for file, key, record in self._functions():
            if "." not in key or not record.get("model_grad") or ["c"] not in record.get("model", ()):
                continue
            if record.get("grad") == "off" or not (record.get("hook") == "training" or record.get("trains")):
                continue
            caller = (file.index, key)
            if self.base_grad(caller) == "off" or not self.is_module_class(file.index, key.partition(".")[0]):
                continue
            forward = self.resolve(file.index, key, ["s", "forward"])
            if forward is not None and not self.record(forward).get("switches"):
                # (a forward that picks its path by `self.training` or a defaulted parameter runs only
                # part of itself for this call, `if self.training: return loss` before an inference
                # path: which part is not known, so none of it is seeded)
                yield caller, forward

    def _loop_runs_steps(self, site: _Site) -> bool:
        """Is the loop around the site a training or evaluation loop: by its own evidence, or because
        the function the site calls runs a model or computes gradients itself?"""
        if site.loop is None or "runs" in site.loop[3:]:
            return False  # (a loop that sets the run's configuration per item runs a whole run per item: run_loops)
        if site.loop[1] is not None:
            return True
        return all(self._runs_step(callee) for callee in site.group or (site.callee,))  # (a picked class's: every candidate)

    def _runs_step(self, function: tuple) -> bool:
        record = self.record(function)
        if record.get("pass"):
            return False  # it runs a pass over the data itself: the loop calling it is per epoch
        return bool(record.get("trains")) or self._runs_model(function)

    def _runs_model(self, function: tuple) -> bool:
        record = self.record(function)
        file = self.files[function[0]]
        class_name = function[1].partition(".")[0] if "." in function[1] else None
        for alternative in record.get("model", ()):
            if alternative is True:
                return True
            if alternative == ["c"] and class_name and self.is_module_class(function[0], class_name):
                return True
            if alternative[0] == "a" and class_name and self._constructs_module(file, class_name, alternative[1]):  # type: ignore[arg-type]
                return True
        return False

    def _per_step(self) -> dict[tuple, str]:
        """Functions run on every iteration of a training or evaluation loop, or once per batch by a
        framework hook: called unconditionally there, or from such a function unconditionally and
        outside any loop of its own; or a function that trains itself, called in such a loop behind
        any condition (each call is a training step).  A call behind configured choices only
        (`if args.attack == 'pgd':`, `_Site.configured`) counts as unconditional: the run that
        picks it makes it on every iteration."""
        result: dict[tuple, str] = {}
        ready: list[tuple] = []
        model_sites = [site for sites in self._model_outgoing.values() for site in sites]
        for site in sorted([*self._sites, *model_sites], key=lambda site: site.conditional):  # an unconditional call's words first
            if site.callee in result:
                continue
            if site.conditional and not site.configured:
                # A function that trains itself (backward or an optimizer's step in its own body) is
                # one training step per call, however often a branch calls it: `if it % n_d == 0:
                # train_G()` runs the generator's step, and the code in it with that step.
                if site.loop is not None and self.record(site.callee).get("trains") and self._loop_runs_steps(site):
                    result[site.callee] = f"every training step it takes, called in {self._describe(site.caller, site.loop)}"
                    ready.append(site.callee)
                continue
            if self._loop_runs_steps(site):
                where = f"every iteration of {self._describe(site.caller, site.loop)}"
            elif site.loop is None and self.record(site.caller).get("hook") in ("per-batch", "training"):
                where = f"every batch ({self._describe(site.caller, None)} runs once per batch)"
            else:
                continue
            result[site.callee] = where
            ready.append(site.callee)
        while ready:
            function = ready.pop()
            for site in [*self._outgoing.get(function, ()), *self._model_outgoing.get(function, ())]:
                if (not site.conditional or site.configured) and site.loop is None and site.callee not in result:
                    result[site.callee] = result[function]
                    ready.append(site.callee)
        return result

    def _per_forward(self) -> set[tuple]:
        """Functions run with every forward pass (FileView.per_forward): those a class's forward pass
        calls in any branch (a branch there follows the model's configuration), the forward pass
        being `forward` and the methods of its class it calls through `self`, in any branch; and the
        functions those call unconditionally, transitively.  A condition in another helper may be a
        guard that runs its body once (`if SRU_FWD_FUNC is None: load_sru_mod()`), so it is not
        followed."""
        own = [site.caller for site in self._sites if site.caller[1].rpartition(".")[2] == "forward" and "." in site.caller[1]]
        own_set = set(own)
        while own:
            for site in self._outgoing.get(own.pop(), ()):
                if site.ref[0] == "s" and site.callee not in own_set:
                    own_set.add(site.callee)
                    own.append(site.callee)
        ready = [site.callee for caller in own_set for site in self._outgoing.get(caller, ()) if site.ref[0] != "s"]
        result: set[tuple] = own_set | set(ready)
        while ready:
            for site in self._outgoing.get(ready.pop(), ()):
                if not site.conditional and site.loop is None and site.callee not in result:
                    result.add(site.callee)
                    ready.append(site.callee)
        return result

    def _history(self) -> set[tuple]:
        """Functions whose every return carries autograd history when called with gradients on
        (least fixed point: a helper returning another helper's result counts once that one does)."""
        candidates = [
            (file.index, key) for file, key, record in self._functions()
            if record.get("returns") and self.base_grad((file.index, key)) != "off"
        ]  # fmt: skip
        result: set[tuple] = set()
        changed = True
        while changed:
            changed = False
            for function in candidates:
                if function in result:
                    continue
                if all(any(self._holds(function, a, result) for a in returned) for returned in self.record(function)["returns"]):
                    result.add(function)
                    changed = True
        return result

    def _passes_history(self) -> dict[tuple, frozenset[int]]:
        """Module-level functions, undecorated and not run without gradients, each with the positions
        of the parameters whose history every return carries when the caller's argument has it
        (summaries' ["g", position] alternative in every `returns` entry; an entry that certainly
        carries history, `self.history`'s, counts for every position): `l2_norm(input)` returning
        `torch.div(input, norm)`.  A return that may have none (`.detach()`, `.item()`, a value
        computed under `no_grad`) leaves the function out (its `returns` is absent)."""
        found: dict[tuple, frozenset[int]] = {}
        for file, key, record in self._functions():
            returned = record.get("returns")
            if not returned or "." in key or key in ("", "?") or record.get("decorators") or record.get("grad"):
                continue
            function = (file.index, key)
            if function in self.history or self.base_grad(function) == "off":
                continue
            positions: Optional[set[int]] = None
            for alternatives in returned:
                if any(self._holds(function, a, self.history) for a in alternatives if a is True or a[0] != "g"):
                    continue
                given = {a[1] for a in alternatives if a is not True and a[0] == "g"}
                positions = given if positions is None else positions & given
            if positions:
                found[function] = frozenset(positions)
        return found

    def _through_calls(self, index: int) -> frozenset[str]:
        """FileView.history_through: "callee:position" for the callees as file `index` writes them that
        resolve, at every site the file has of that name, to a function of `through`, and that the
        file calls in a loop with gradients possibly on somewhere: a value kept across iterations
        is what the history matters for (ML001), and every file given the fact is screened again
        with it (`widens_screens`), so a helper only called straight through (timm's activations
        in a `forward`) is left out rather than widen the screens of every file that calls it."""
        by_written: dict[str, Optional[frozenset[int]]] = {}
        looped: set[str] = set()
        summary = self.files[index].summary
        several_stars = len(summary.get("stars", ())) > 1  # type: ignore[union-attr]
        for key, record in summary["functions"].items():  # type: ignore[index]
            for ref, grad, loop, *_ in record.get("calls", ()):
                if ref[0] not in ("n", "d"):
                    continue
                if loop is not None and grad != "off":
                    looped.add(ref[1])
                root = ref[1].partition(".")[0]
                if several_stars and root not in summary["defs"] and root not in summary["imports"]:  # type: ignore[index]
                    continue  # brought by one of several star imports: `_member` takes the first, Python the last
                callee = self.resolve(index, key, ref)
                positions = self.through.get(callee) if callee is not None else None  # type: ignore[arg-type]
                known = by_written.get(ref[1], positions) if ref[1] in by_written else positions
                by_written[ref[1]] = known & positions if known is not None and positions is not None else None
        return frozenset(f"{written}:{p}" for written, positions in by_written.items() if positions and written in looped for p in positions)

    def _holds(self, function: tuple, alternative, known: set[tuple]) -> bool:
        if alternative is True:
            return True
        index, key = function
        class_name = key.partition(".")[0] if "." in key else None
        kind = alternative[0]
        if kind == "g":
            return False  # the history of an argument: `_passes_history` asks it of each call
        if kind == "c":
            return class_name is not None and self.is_module_class(index, class_name)
        if kind == "a":
            return class_name is not None and self._constructs_module(self.files[index], class_name, alternative[1])  # type: ignore[arg-type]
        callee = self.resolve(index, key, alternative)
        return callee is not None and callee in known

    def _describe(self, function: tuple, loop: Optional[list]) -> str:
        file = self.files[function[0]]
        key = function[1]
        if key == "":
            where = f"the module code of {file.shown}"  # type: ignore[union-attr]
        elif key == "?":
            where = f"a nested function in {file.shown}"  # type: ignore[union-attr]
        else:
            where = f"`{key}()` in {file.shown}"  # type: ignore[union-attr]
        if loop is not None and loop[1]:
            return f"the loop `{loop[1]}` in {where}"
        return where

    def _updates(self) -> dict[tuple, frozenset[str]]:
        """What part of a training step each function does on every call, outside loops of its own:
        "backward", "step" (its summary's `updates`) and "model" (it runs one), with what the
        functions it calls outside its loops do (least fixed point).  `train_epoch(model, ...)` of
        a full-graph trainer does all three; a loss helper that only backpropagates, "backward"; a
        loss helper that runs the model it is given (TRADES' `trades_loss(model=model, ...)`, whose
        caller backpropagates and steps), "model".  A placeholder method to be overridden (summaries'
        `abstract`: `raise NotImplementedError`) does what every override of it in the project's
        subclasses does (`_placeholders`): `self.forward_backward(data)` in a base engine's loop
        runs one of them, whichever subclass the engine is; with no override it does nothing known.
        "accelerator" joins the work of a function whose file's code puts work on one (summaries'
        `places`: `.cuda()`, `.to(self.device)`; a comment or `torch.device("cpu")` does not), and
        goes to its callers with it (`_placed`): KAIR's `ModelVRT.optimize_parameters` steps
        through `super()` in model_plain.py, which moves the network and batches `.to(self.device)`."""
        result: dict[tuple, frozenset[str]] = {}
        for file, key, record in self._functions():
            own = set(record.get("updates", ()))
            if self._runs_model((file.index, key)):
                own.add("model")
            if own and file.summary.get("places") is True:
                own.add("accelerator")  # its file's code puts work on an accelerator: the work runs there, for its callers too
            if own:
                result[(file.index, key)] = frozenset(own)
        placeholders = self._placeholders()
        by_method: dict[str, list[tuple]] = {}  # a placeholder's name -> the placeholders so named
        for placeholder, (_, method) in placeholders.items():
            by_method.setdefault(method, []).append(placeholder)
        subclasses = self._subclass_map() if placeholders else {}
        ready = list(result)
        changed: set[str] = set()  # names of placeholders some method so named of which did more this round
        while ready:
            while ready:
                function = ready.pop()
                if function[1].partition(".")[2] in by_method:
                    changed.add(function[1].partition(".")[2])
                for site in self._incoming.get(function, ()):
                    if site.loop is not None or site.caller[1] in ("", "?") or site.conditional:
                        continue  # (a call behind an `if` is not made on every call of the caller)
                    known = result.get(site.caller, frozenset())
                    if not result[function] <= known:
                        result[site.caller] = known | result[function]
                        ready.append(site.caller)
            # each placeholder once a round, a pass over the classes for each name (not once per change
            # of one of its overrides: cubic on a long chain of placeholders); the work only grows
            for method in changed:
                below = self._placeholder_work(method, result)
                for placeholder in by_method[method]:
                    found = [below.get(sub) for sub in subclasses.get(placeholders[placeholder][0], ())]
                    known = [w for w in found if w is not None]
                    work = frozenset.intersection(*known) if known else frozenset()
                    if work and work != result.get(placeholder):
                        result[placeholder] = work
                        ready.append(placeholder)
            changed = set()
        return result

    def _placeholders(self) -> dict[tuple, tuple[tuple, str]]:
        """Each placeholder method of a project class (summaries' `unimplemented`: `raise
        NotImplementedError`, an `@abstractmethod`) that the project's subclasses override (a
        method so named that is not itself a placeholder), with its class (file, name) and name.
        An override whose body is only `pass` or a docstring is an override that does nothing.
        Left out, as not known: a placeholder a subclass may override where the pass does not see
        it (`forward_backward = Engine.score` in a class body, a subclass defined inside a function).
        Kept: `_placed` and `_update_calls` ask it again."""
        if self._placeholder_overrides is None:
            found: dict[tuple, tuple[tuple, str]] = {}
            candidates = [(file, key) for file, key, record in self._functions() if record.get("unimplemented") and key.count(".") == 1 and ":" not in key]
            if candidates:
                inner = {base for other in self.files if other is not None for base in other.summary.get("inner", ())}  # type: ignore[union-attr]
                subclasses = self._subclass_map()
                marks: dict[str, dict[tuple, tuple[bool, bool]]] = {}  # method -> class -> (overridden below, unseen binding)
                for file, key in candidates:
                    owner, method = (file.index, key.partition(".")[0]), key.partition(".")[2]
                    if method not in marks:
                        marks[method] = self._override_marks(method, inner)
                    below = marks[method]
                    if below.get(owner, (False, False))[1]:
                        continue
                    if any(below.get(sub, (False, False))[0] for sub in subclasses.get(owner, ())):
                        found[(file.index, key)] = (owner, method)
            self._placeholder_overrides = found
        return self._placeholder_overrides

    def _class_order(self) -> list[tuple]:
        """The classes with a project subclass or base, each after all of its subclasses."""
        if self._ordered_classes is None:
            subclasses = self._subclass_map()
            order: list[tuple] = []
            done: set[tuple] = set()
            for root in list(subclasses):
                if root in done:
                    continue
                done.add(root)
                stack = [(root, iter(subclasses.get(root, ())))]
                while stack:
                    node, children = stack[-1]
                    child = next(children, None)
                    if child is None:
                        stack.pop()
                        order.append(node)
                    elif child not in done:
                        done.add(child)
                        stack.append((child, iter(subclasses.get(child, ()))))
            self._ordered_classes = order
        return self._ordered_classes

    def _override_marks(self, method: str, inner: set[str]) -> dict[tuple, tuple[bool, bool]]:
        """Class -> (does it or a subclass define `method`, not as a placeholder; may it or a
        subclass bind `method` where the pass does not look: an assignment or import in the class
        body, or a subclass defined inside a function, `inner` holding such classes' base names)."""
        subclasses = self._subclass_map()
        marks: dict[tuple, tuple[bool, bool]] = {}
        for owner in self._class_order():  # (subclasses first)
            summary = self.files[owner[0]].summary  # type: ignore[union-attr]
            own = summary["functions"].get(f"{owner[1]}.{method}")
            defines = own is not None and not own.get("unimplemented")
            unseen = owner[1] in inner or method in summary["classes"].get(owner[1], {}).get("binds", ())
            for sub in subclasses.get(owner, ()):
                below = marks.get(sub, (False, False))
                defines, unseen = defines or below[0], unseen or below[1]
            marks[owner] = (defines, unseen)
        return marks

    def _placeholder_work(self, method: str, result: dict[tuple, frozenset[str]]) -> dict[tuple, Optional[frozenset[str]]]:
        """Class -> what every definition of `method` (not a placeholder) in it and its subclasses
        does (`result`), None where there is none: one pass over the classes for all of a method's
        placeholders."""
        subclasses = self._subclass_map()
        work: dict[tuple, Optional[frozenset[str]]] = {}
        for owner in self._class_order():  # (subclasses first)
            key = f"{owner[1]}.{method}"
            own = self.files[owner[0]].summary["functions"].get(key)  # type: ignore[union-attr]
            found = result.get((owner[0], key), frozenset()) if own is not None and not own.get("unimplemented") else None
            for sub in subclasses.get(owner, ()):
                below = work.get(sub)
                if below is not None:
                    found = below if found is None else found & below
            work[owner] = found
        return work

    def _update_calls(self, index: int) -> tuple[tuple[str, str], ...]:
        """FileView.update_calls of file `index`: its calls of other files' functions in `updates`."""
        found: dict[str, str] = {}
        for key, record in self.files[index].summary["functions"].items():  # type: ignore[union-attr]
            for ref, *_ in record.get("calls", ()):
                if ref[0] not in ("n", "d", "s", "r"):
                    continue
                callee = self.resolve(index, key, ref)
                # (a closure of this file too: the rule's own walk does not follow a call of a name
                # bound to a call's result)
                # (a placeholder of this file too: its work is its overrides', which the rule's walk does not see)
                if callee is None or callee not in self.updates or (callee[0] == index and ref[0] != "r" and callee not in self._placeholders()):
                    continue
                if ref[0] == "r":  # `train_step(...)`, bound to another file's closure: keyed as a call on an instance
                    written = tables.scoped_call(key, f"{ref[1]}.__call__")
                elif ref[0] == "s":
                    written = f"{key.partition('.')[0]}.{ref[1]}"
                else:
                    written = ref[1]
                found[written] = ",".join(sorted(self._placed(callee, self.updates[callee])))
        for written, work in self._instance_updates(index).items():
            found.setdefault(written, work)
        return tuple(sorted(found.items()))

    def _placed(self, callee: tuple, work: frozenset[str]) -> frozenset[str]:
        """`work` with "accelerator" added when the callee's file names an accelerator (`device =
        torch.device("cuda" ...)` in TD3.py): the training step it does runs there, even for a
        script that never names one itself."""
        if callee in self._placeholders():
            return work  # the overrides' work: "accelerator" where every one of them runs there (`_updates`)
        if work and self.files[callee[0]].summary.get("host") is not True:  # type: ignore[union-attr]
            return work | {"accelerator"}
        return work

    def _instance_updates(self, index: int) -> dict[str, str]:
        """The calls `obj.m()` of file `index` whose receiver is bound only to instances of project
        classes of other files (`policy = TD3.TD3(...)`, or `DDPG.DDPG(...)` in another branch) and
        the training work every one of those classes' `m` does ("policy.train" -> "backward,model,step").
        Keyed by the call as written; where two functions write the same call with different
        classes, only the work both do counts."""
        found: dict[str, frozenset[str]] = {}
        file = self.files[index]
        for key, record in file.summary["functions"].items():  # type: ignore[union-attr]
            references = [entry[0] for entry in record.get("calls", ()) if entry[0][0] == "i"]
            references += [entry[0] for entry in record.get("may", ()) if entry[0][0] == "k" and entry[1] != "off"]
            for ref in references:
                if len(ref) <= 3:
                    continue  # `self.attr.m()`: no receiver written to key it by
                constructors = [ref[1]] if ref[0] == "i" else ref[1]
                work: Optional[frozenset[str]] = None
                for constructor in constructors:
                    if self._is_picked(file, constructor):  # type: ignore[arg-type]
                        # a class picked at run time: the work every method the call may reach does
                        for callee in self._instance_callees(file, constructor, ref[2]) or [None]:  # type: ignore[arg-type]
                            done = self._placed(callee, self.updates.get(callee, frozenset())) if callee is not None else frozenset()
                            work = done if work is None else work & done
                        continue
                    classes = self._instances_built(file, constructor)  # type: ignore[arg-type]
                    for owner in classes or [None]:
                        method = self._instance_method(owner, ref[2]) if owner is not None else None
                        callee = (method[1], method[2]) if method is not None and method[0] == "func" else None
                        # (a class of this file too: the rule's own walk follows calls of functions
                        # and `self.m()`, not a method reached through an instance)
                        done = self._placed(callee, self.updates.get(callee, frozenset())) if callee is not None else frozenset()
                        work = done if work is None else work & done
                if not work:
                    continue
                # the receiver is the function's own name (`summaries._instance_class`): two functions
                # binding `policy` to different classes each get their own answer (sfujim/BCQ)
                written = tables.scoped_call(key, f"{ref[3]}.{ref[2]}")
                found[written] = found[written] & work if written in found else work
        return {written: ",".join(sorted(work)) for written, work in found.items() if work}

    def _mover_calls(self, index: int) -> tuple[tuple[str, str], ...]:
        """FileView.mover_calls of file `index`: its calls of the project's functions that return
        their parameter moved to a device (here or in another file)."""
        found: dict[str, str] = {}
        for key, record in self.files[index].summary["functions"].items():  # type: ignore[union-attr]
            for ref, *_ in record.get("calls", ()):
                if ref[0] not in ("n", "d") or ref[1] in found:
                    continue
                callee = self.resolve(index, key, ref)
                moves = self.record(callee).get("moves") if callee is not None else None
                if moves:
                    found[ref[1]] = ",".join(map(str, moves))
        return tuple(sorted(found.items()))

    def _project_calls(self, index: int, field: str) -> frozenset[str]:
        """The callees as file `index` writes them that are functions of the project (here or in
        another file) whose summary record has `field`: "fresh" for FileView.host_calls (they return
        a tensor just made on the host; a method called on `self` as "Class.method", Class the caller's), "unsaved" for FileView.unsaved_calls (a new tensor nothing
        keeps for backward)."""
        found: set[str] = set()
        for key, record in self.files[index].summary["functions"].items():  # type: ignore[union-attr]
            for ref, *_ in record.get("calls", ()):
                if ref[0] == "s" and field == "fresh" and "." in key:
                    if not self._every_method_fresh(ref[1]):
                        continue  # another class (a subclass, here or in another file) has its own, which `self` may reach
                    written = f"{key.partition('.')[0]}.{ref[1]}"  # `self.create_mask(H, W)` in a method of the class
                elif ref[0] in ("n", "d"):
                    written = ref[1]
                else:
                    continue
                if written in found:
                    continue
                callee = self.resolve(index, key, ref)
                if callee is not None and self.record(callee).get(field):
                    found.add(written)
        return frozenset(found)

    def _every_method_fresh(self, method: str) -> bool:
        """Is every method named `method` of the project's classes (in any file) `fresh`?  A
        subclass in another file may override it (`CachedBlock.make_mask` returning a kept tensor),
        and `self.make_mask(...)` may reach that one.  The names found once, on the first question."""
        if self._unfresh_methods is None:
            self._unfresh_methods = {
                key.partition(".")[2] for _, key, record in self._functions() if key.count(".") == 1 and not record.get("fresh")
            }
        return method not in self._unfresh_methods

    def _reaching(self, own: Callable[[tuple, dict], bool]) -> set[tuple]:
        """The functions for which `own(function, record)` holds, or that call one (any call the
        pass resolves: in a loop, behind an `if`), transitively: least fixed point over callers."""
        found = {(file.index, key) for file, key, record in self._functions() if own((file.index, key), record)}
        ready = list(found)
        while ready:
            function = ready.pop()
            for site in self._incoming.get(function, ()):
                if site.caller not in found and site.caller[1] not in ("", "?"):
                    found.add(site.caller)
                    ready.append(site.caller)
        return found

    def _classes_named_in(self, index: int) -> Iterator[tuple[str, tuple]]:
        """(the name as written in file `index`, ("class", file, name)) for the file's own classes and
        the names it imports that are project classes."""
        file = self.files[index]
        for name in file.summary["classes"]:  # type: ignore[union-attr]
            if name in file.summary["defs"]:  # type: ignore[union-attr]
                yield name, ("class", index, name)
        for local in file.summary["imports"]:  # type: ignore[union-attr]
            owner = self._name(file, local)  # type: ignore[arg-type]
            if owner is not None and owner[0] == "class":
                yield local, owner

    def _gradient_classes(self, index: int) -> frozenset[str]:
        """FileView.gradient_classes of file `index`: the nn.Module classes it names whose `forward`
        computes gradients (summaries' `grads`, here or in a function the forward reaches)."""
        return frozenset(written for written, owner in self._classes_named_in(index) if self._gradient_switch(owner) == ("", -1))

    def _gradient_switches(self, index: int) -> tuple[tuple[str, str, int], ...]:
        """FileView.gradient_switches of file `index`: the nn.Module classes it names whose `forward`
        computes gradients only behind `if flag:` of a parameter defaulting to False."""
        found = []
        for written, owner in self._classes_named_in(index):
            switch = self._gradient_switch(owner)
            if switch is not None and switch[0]:
                found.append((written, *switch))
        return tuple(sorted(found))

    def _gradient_factories(self, index: int) -> tuple[tuple[str, str, int], ...]:
        """FileView.gradient_factories of file `index`: the project functions it names (its own, or
        imported) that return, alone or first in a tuple, an instance of an nn.Module class whose
        `forward` computes gradients (summaries' `builds` / `makes`), with its switch as in
        `_gradient_switch`: robustness's `make_and_restore_model`, whose `AttackerModel` attacks
        its input when called with `make_adv=True`."""
        file = self.files[index]
        named = [(name, ("func", index, name)) for name in file.summary["defs"] if name in file.summary["functions"]]  # type: ignore[union-attr]
        for local in file.summary["imports"]:  # type: ignore[union-attr]
            owner = self._name(file, local)  # type: ignore[arg-type]
            if owner is not None and owner[0] == "func":
                named.append((local, owner))
        found = []
        for written, owner in named:
            record = self.record((owner[1], owner[2]))
            made = record.get("builds") or record.get("makes") or ()
            switches = {self._gradient_switch(self._built_class(self.files[owner[1]], m) or ("?",)) for m in made}  # type: ignore[arg-type]
            if len(switches) == 1 and None not in switches:
                found.append((written, *switches.pop()))
        return tuple(sorted(found))

    def _gradient_switch(self, owner: tuple) -> Optional[tuple[str, int]]:
        """For a project nn.Module class whose `forward` may compute gradients: ("", -1) when running
        it may do so whatever its arguments; (flag, position) when only a run of a submodule behind
        `if flag:` does (summaries' `subs`; position: the flag's among the call's positional
        arguments, -1 for keyword-only); None when it computes none (or `owner` is no such class).
        Kept per class: every file naming it asks."""
        if owner not in self._switches:
            self._switches[owner] = self._gradient_switch_of(owner)
        return self._switches[owner]

    def _gradient_switch_of(self, owner: tuple) -> Optional[tuple[str, int]]:
        if owner[0] != "class" or not self.is_module_class(owner[1], owner[2]):
            return None
        forward = self._method(owner, "forward")
        if forward is None or forward[0] != "func":
            return None
        if self._gradients is None:
            self._gradients = self._gradient_work()
        if (forward[1], forward[2]) in self._gradients:
            return ("", -1)
        file = self.files[forward[1]]
        attrs = file.summary["classes"][forward[2].partition(".")[0]].get("attrs", {})  # type: ignore[union-attr]
        for attr, guard in self.record((forward[1], forward[2])).get("subs", ()):
            if guard is not None and self._runs_gradient_forward(file, attrs.get(attr)):  # type: ignore[arg-type]
                return (guard[0], guard[1] - 1 if guard[1] > 0 else -1)
        return None

    def _runs_gradient_forward(self, file: _File, constructor: Optional[str]) -> bool:
        """Is `constructor` (as a class's `attrs` write it) a project nn.Module class whose `forward`
        computes gradients (`_gradient_work`)?"""
        classes = self._instances_built(file, constructor) if constructor is not None else []
        forward = self._instance_method(classes[0], "__call__") if len(classes) == 1 else None
        return forward is not None and forward[0] == "func" and (forward[1], forward[2]) in self._gradients  # type: ignore[operator]

    def _gradient_work(self) -> set[tuple]:
        """The functions that may compute gradients: summaries' `grads` (their own body, nested
        functions included), or a call of one (any call the pass resolves), or a run of a submodule
        whose class's `forward` is one (summaries' `subs`: robustness's `AttackerModel.forward` runs
        `self.attacker(...)`, built as `Attacker(model, dataset)`, whose forward takes
        `torch.autograd.grad` of its input every step): least fixed point over callers."""
        runners: dict[tuple, list[tuple]] = {}  # a forward -> the methods that run its class as a submodule
        for file, key, record in self._functions():
            for attr, guard in record.get("subs", ()):
                if guard is not None:
                    continue  # (only `if flag:` runs it: `_gradient_switch`)
                constructor = file.summary["classes"][key.partition(".")[0]].get("attrs", {}).get(attr)  # type: ignore[union-attr]
                classes = self._instances_built(file, constructor) if constructor is not None else []
                forward = self._instance_method(classes[0], "__call__") if len(classes) == 1 else None
                if forward is not None and forward[0] == "func":
                    runners.setdefault((forward[1], forward[2]), []).append((file.index, key))
        found = {(file.index, key) for file, key, record in self._functions() if record.get("grads")}
        ready = list(found)
        while ready:
            function = ready.pop()
            callers = [site.caller for site in self._incoming.get(function, ())]
            for caller in [*callers, *runners.get(function, ())]:
                if caller not in found and caller[1] not in ("", "?"):
                    found.add(caller)
                    ready.append(caller)
        return found

    def _model_methods_called(self, index: int) -> frozenset[str]:
        """FileView.model_methods of file `index`: of the methods it calls on a model or on an
        object of unknown class (`model.loss(sample)`), those that the nn.Module classes of the files
        connected to it by imports define and every one of them runs a model in, directly or through
        the functions it calls."""
        found = set()
        component = self._component(index)
        for name in self._methods_called_on_objects(index):
            if never_runs_module(name):
                continue  # (no project fact changes method_runs_module's answer; a name its words
                # accept is kept: it alone may open a torch-free file to the rules, runs_other_files_models)
            methods = [method for method in self._model_methods(name) if self._component(method[0]) == component]
            if not methods:
                continue
            if self._model_runners is None:
                self._model_runners = self._reaching(lambda function, record: self._runs_model(function))
            if all(method in self._model_runners for method in methods):
                found.add(name)
        return frozenset(found)

    def _mode_methods_called(self, index: int) -> frozenset[str]:
        """FileView.mode_methods of file `index`: of the methods it calls on an object other than
        `self` (under any grad mode), "name:eval" where every method so named in the files connected
        to it by imports only puts the models its object holds in eval mode, "name:train" where
        one may put a model in training mode (summaries' `mode`)."""
        names = set()
        for record in self.files[index].summary["functions"].values():  # type: ignore[union-attr]
            names.update(ref[1] if ref[0] == "m" else ref[2] for ref, *_ in record.get("calls", ()) if ref[0] in ("m", "i"))
            names.update(ref[1] if ref[0] == "u" else ref[2] for ref, *_ in record.get("may", ()))
        component = self._component(index)
        found = set()
        for name in names:
            mode = self._named_mode.get((component, name), "")
            if mode == "":
                # (once per import component and name: every file of a program calls the same ones)
                modes = [self.record(method).get("mode") for method in self._methods_named(index, name)]
                mode = self._named_mode[(component, name)] = "eval" if modes and all(m == "eval" for m in modes) else "train" if "train" in modes else None
            if mode is not None:
                found.add(f"{name}:{mode}")
        if any(entry.endswith(":eval") for entry in found):
            # where the file has such a wrapper: the names it calls of which some method may
            # backpropagate or step (`gan.step_g(loss)`): a function calling one trains, whatever
            # the wrapper put in eval mode
            if self._gradients is None:
                self._gradients = self._gradient_work()
            for name in names:
                steps = self._named_backprop.get((component, name))
                if steps is None:
                    steps = self._named_backprop[(component, name)] = any(
                        method in self._gradients or self.record(method).get("updates") for method in self._methods_named(index, name)
                    )  # fmt: skip
                if steps:
                    found.add(f"{name}:backprop")
        return frozenset(found)

    def _methods_called_on_objects(self, index: int) -> set[str]:
        """The method names file `index` calls on something other than `self`: on a model
        (`model.loss(x)`), an instance of a known class, or an object of unknown class."""
        names = set()
        for record in self.files[index].summary["functions"].values():  # type: ignore[union-attr]
            names.update(ref[1] if ref[0] == "m" else ref[2] for ref, *_ in record.get("calls", ()) if ref[0] in ("m", "i"))
            names.update(ref[1] if ref[0] == "u" else ref[2] for ref, grad, *_ in record.get("may", ()) if grad != "off")
        return names

    def _component(self, index: int) -> int:
        """A representative of the files connected to file `index` by imports, either way and
        transitively: one program's code.  A match by method name alone (`agent.select_action(obs)`,
        whatever `agent` is) looks only there: a run over several repositories is not one program."""
        if self._components is None:
            self._resolve_imports()
            parent = list(range(len(self.files)))

            def root(i: int) -> int:
                while parent[i] != i:
                    parent[i] = parent[parent[i]]
                    i = parent[i]
                return i

            for importer, imported in self._imports.items():
                for other in imported:
                    parent[root(importer)] = root(other)
            self._components = [root(i) for i in range(len(self.files))]
        return self._components[index]

    def _methods_named(self, index: int, name: str) -> list[tuple]:
        """The project's methods `name` in the files connected to file `index` by imports (kept per
        import component and name: every call site so written asks it)."""
        component = self._component(index)
        if self._named_by_component is None:
            # one pass over the project's methods, grouped by import component and name: asking each
            # component of each name would cost files x methods so named (many small programs)
            self._named_by_component = {}
            for method_name, methods in self._all_methods_named().items():
                for method in methods:
                    self._named_by_component.setdefault((self._component(method[0]), method_name), []).append(method)
        return self._named_by_component.get((component, name), [])

    def _grad_free_methods(self, index: int, model_methods: frozenset[str]) -> frozenset[str]:
        """FileView.grad_free_methods of file `index`: of the methods of the files connected to it by
        imports, whichever file calls them (a nested function's calls, curl's `run_eval_loop`, are
        in no summary's call sites), those `method_runs_module` accepts with the file's
        `model_methods` (the rules ask only about those: fewer names, less churn in the view's digest).
        A method whose decorator turns gradients off (`@torch.no_grad() def sample(...)`) is one
        whatever it runs: its whole body runs without them, in this file or the one that calls it."""
        component = self._component(index)
        found = self._grad_free.get(component)
        if found is None:
            names = set()
            for other in self.files:
                if other is not None and self._component(other.index) == component:
                    names.update(key.partition(".")[2] for key in other.summary["functions"] if "." in key)
            found = frozenset(
                name for name in names
                if (methods := self._methods_named(index, name))
                and all(self.base_grad(m) == "off" or self._runs_models_without_grad(m) for m in methods)
            )  # fmt: skip
            self._grad_free[component] = found
        return frozenset(name for name in found if method_runs_module(name, model_methods))

    def _gradient_methods(self, index: int, model_methods: frozenset[str]) -> frozenset[str]:
        """FileView.gradient_methods of file `index`: the names of the methods of the files connected
        to it by imports that may compute gradients (`_gradient_work`), those `method_runs_module`
        accepts with the file's `model_methods` (the rules ask only about those)."""
        component = self._component(index)
        found = self._gradient_named.get(component)
        if found is None:
            if self._gradients is None:
                self._gradients = self._gradient_work()
            found = frozenset(key.rpartition(".")[2] for where, key in self._gradients if "." in key and self._component(where) == component)
            self._gradient_named[component] = found
        return frozenset(name for name in found if method_runs_module(name, model_methods))

    def _runs_models_without_grad(self, function: tuple) -> bool:
        """Does the function run a model, every run of its own under no_grad (its decorator, or a
        `no_grad` block of its body), and call no project function that runs one with gradients on
        from outside such a block?"""
        record = self.record(function)
        if not record.get("model"):
            return False
        if self.base_grad(function) == "off":
            return True  # (its own decorator, or a project decorator that wraps it in no_grad)
        if record.get("model_grad"):
            return False
        if self._model_runners is None:
            self._model_runners = self._reaching(lambda function, record: self._runs_model(function))
        return not any(site.grad != "off" and site.callee in self._model_runners for site in self._outgoing.get(function, ()))

    def _eval_contexts(self, index: int) -> frozenset[str]:
        """FileView.eval_contexts of file `index`: its calls of project classes (as written) whose
        `__enter__` (or a base's) puts something in eval mode (summaries' `evals`)."""
        file = self.files[index]
        found = set()
        for record in file.summary["functions"].values():  # type: ignore[union-attr]
            for ref, *_ in record.get("calls", ()):
                if ref[0] not in ("n", "d") or ref[1] in found:
                    continue
                owner = self._name(file, ref[1])  # type: ignore[arg-type]
                enter = self._method(owner, "__enter__") if owner is not None and owner[0] == "class" else None
                if enter is not None and enter[0] == "func" and self.record((enter[1], enter[2])).get("evals"):
                    found.add(ref[1])
        return frozenset(found)

    def _meter_classes(self, index: int) -> frozenset[str]:
        """FileView.meter_classes of file `index`: the names it imports that are classes of another
        file whose `update` / `add` (or a base's) keeps a parameter (summaries' `keeps`)."""
        found: set[str] = set()
        for local, owner in self._imported_classes(index):
            for method in METER_METHODS:
                resolved = self._method(owner, method)
                if resolved is not None and resolved[0] == "func" and self.record((resolved[1], resolved[2])).get("keeps"):
                    found.add(local)
                    break
        return frozenset(found)

    def _wrapper_classes(self, index: int) -> frozenset[str]:
        """FileView.wrapper_classes of file `index`: the names it imports that are classes of another
        file forwarding every call to the module they are given (summaries' `forwards`)."""
        found: set[str] = set()
        for local, owner in self._imported_classes(index):
            record = self.files[owner[1]].summary["classes"].get(owner[2], {})  # type: ignore[union-attr]
            if record.get("forwards"):
                found.add(local)
        return frozenset(found)

    def _imported_classes(self, index: int) -> Iterator[tuple[str, tuple]]:
        """The names file `index` imports that are classes of another file, with where each is defined."""
        file = self.files[index]
        for local in file.summary["imports"]:  # type: ignore[union-attr]
            owner = self._name(file, local)  # type: ignore[arg-type]
            if owner is not None and owner[0] == "class" and owner[1] != index:
                yield local, owner

    # ------------------------------------------------------------------ one file's view

    def view(self, index: int) -> FileView:
        file = self.files[index]
        if file is None:
            return EMPTY_VIEW
        functions = file.summary["functions"]
        keys = [k for k in functions if k and k != "?"]
        grad_elsewhere = set()
        for key in keys:
            for site in self._incoming.get((index, key), ()):
                if site.caller[0] != index and self.runs_with_grad(site):
                    grad_elsewhere.add(key)
                    break
            # A call that may reach the method, in this file too: the file's own analysis sees no
            # such call (it follows calls it can resolve), so for it the call is elsewhere.
            if any(self.runs_with_grad(site) for site in self._may_incoming.get((index, key), ())):
                grad_elsewhere.add(key)
        history_calls: set[str] = set()
        history_methods: set[str] = set()
        for key, record in functions.items():
            for ref, *_ in record.get("calls", ()):
                if ref[0] not in ("n", "d", "s"):
                    continue
                callee = self.resolve(index, key, ref)
                if callee is None or callee not in self.history:
                    continue
                if ref[0] == "s":
                    history_methods.add(f"{key.partition('.')[0]}.{ref[1]}")
                else:
                    history_calls.add(ref[1])
        model_methods = self._model_methods_called(index)
        return FileView(
            no_grad=frozenset(k for k in keys if (index, k) in self.no_grad),
            grad_elsewhere=frozenset(grad_elsewhere),
            trained=tuple(sorted((k, self.trained[(index, k)]) for k in keys if (index, k) in self.trained)),
            per_step=tuple(sorted((k, self.per_step[(index, k)]) for k in keys if (index, k) in self.per_step)),
            module_classes=frozenset(c for c in file.summary["classes"] if c in file.summary["defs"] and self.is_module_class(index, c)),
            history_calls=frozenset(history_calls),
            history_methods=frozenset(history_methods),
            imported_names=self._imported_from(index),
            host_importers=self._host_importers(index),
            star_torch=self._star_torch(index),
            update_calls=self._update_calls(index),
            mover_calls=self._mover_calls(index),
            per_forward=frozenset(k for k in keys if (index, k) in self.per_forward),
            host_calls=self._project_calls(index, "fresh"),
            unsaved_calls=self._project_calls(index, "unsaved"),
            unimported=self._unimported(index),
            adam_classes=self._adam_classes(file.directory),
            meter_classes=self._meter_classes(index),
            torch_importers=self._torch_importers(index),
            gradient_classes=self._gradient_classes(index),
            gradient_switches=frozenset(f"{c}:{flag}:{position}" for c, flag, position in self._gradient_switches(index)),
            gradient_factories=frozenset(f"{f}:{flag}:{position}" for f, flag, position in self._gradient_factories(index)),
            imported_modules=frozenset(local for local, owner in self._imported_classes(index) if self.is_module_class(owner[1], owner[2])),
            model_methods=model_methods,
            eval_contexts=self._eval_contexts(index),
            grad_free_methods=self._grad_free_methods(index, model_methods),
            gradient_methods=self._gradient_methods(index, model_methods),
            other_framework=self._other_framework(index),
            wrapper_classes=self._wrapper_classes(index),
            flags_on=self._flags_on(index),
            frozen_parameters=frozenset(f"{key}:{name}" for where, key, name in self._frozen_parameters() if where == index),
            history_through=self._through_calls(index) if self.through else frozenset(),
            mode_methods=self._mode_methods_called(index),
        )

    def _frozen_parameters(self) -> frozenset[tuple]:
        """(file, key, parameter) of module-level functions whose `held` parameter every call site the
        project resolves (one at least; no call that may reach it on a receiver of unknown class)
        hands a model the caller froze (summaries' fifth `calls` entry), or passes on a parameter of
        its own that is so held, or runs without gradients.  Least fixed point, from the callers down:
        a cycle of calls proves nothing.  Computed once, for every file."""
        if self._frozen_memo is not None:
            return self._frozen_memo
        wanted = [((file.index, key), name, position) for file, key, record in self._functions()
                  if "." not in key and key not in ("", "?") for name, position in record.get("held", ())]  # fmt: skip
        found: set[tuple] = set()
        grown = bool(wanted)
        while grown:
            grown = False
            for function, name, position in wanted:
                if (*function, name) in found:
                    continue
                sites = self._incoming.get(function, ())
                if sites and not self._may_incoming.get(function) and all(self._hands_frozen(site, name, position, found) for site in sites):
                    found.add((*function, name))
                    grown = True
        self._frozen_memo = frozenset(found)
        return self._frozen_memo

    def _hands_frozen(self, site: _Site, name: str, position: int, found: set[tuple]) -> bool:
        """Does the call `site` hand its callee's parameter (`name` at `position`) a frozen model,
        or run without gradients?"""
        if site.grad == "off":
            return True
        if site.grad is None:
            base = self.base_grad(site.caller)
            if base == "off" or (base is None and site.caller in self.no_grad):
                return True
        for slot, source in site.handed:
            if slot == name or (position >= 0 and slot == position):
                return source is True or (*site.caller, source) in found
        return False

    def _flags_on(self, index: int) -> frozenset[str]:
        """FileView.flags_on of file `index`: "function:flag" for its module-level functions' and
        constructors' flags (summaries' `flags`) that every call of the function the pass resolves turns on (`passes`)."""
        functions = self.files[index].summary["functions"]  # type: ignore[union-attr]
        wanted = {(index, key): record["flags"] for key, record in functions.items() if record.get("flags")}
        if not wanted:
            return frozenset()
        counts = self._flag_counts()
        found = set()
        for function, flags in wanted.items():
            calls, on = counts.get(function, (0, {}))
            found.update(f"{function[1]}:{name}" for name, _ in flags if calls and on.get(name) == calls)
            if function[1].endswith(".__init__"):  # a construction that leaves a flag off: its `self.flag` branch is opt-in
                found.update(f"{function[1]}:{name}:left-off" for name, _ in flags if on.get(name, 0) < calls)
        return frozenset(found)

    def _flag_counts(self) -> dict[tuple, tuple[int, dict[str, int]]]:
        """(file, key) of a function with flags -> (how many calls of it the project's functions
        make, how many of those turn each flag on).  Computed once, for every file."""
        if self._flag_count_memo is not None:
            return self._flag_count_memo
        flagged = {(file.index, key): record["flags"] for file, key, record in self._functions() if record.get("flags")}
        counts: dict[tuple, list] = {}
        if flagged:
            for file, key, record in self._functions():
                for ref, *_ in record.get("calls", ()):
                    if ref[0] in ("n", "d"):
                        callee = self.resolve(file.index, key, ref)
                        if callee in flagged:
                            counts.setdefault(callee, [0, {}])[0] += 1
                for ref, positions, keywords in record.get("passes", ()):
                    callee = self.resolve(file.index, key, ref)
                    if callee in flagged:
                        on = counts.setdefault(callee, [0, {}])[1]
                        for name, position in flagged[callee]:
                            if name in keywords or (position >= 0 and position in positions):
                                on[name] = on.get(name, 0) + 1
        self._flag_count_memo = {function: (calls, on) for function, (calls, on) in counts.items()}
        return self._flag_count_memo

    def _other_framework(self, index: int) -> bool:
        """FileView.other_framework of file `index`: a file of another framework (summaries' `deep`,
        no torch) each of whose imports is known to bring no torch in.  The modules that may
        (summaries' `reach`) are resolved as a script run from its folder finds them (a module of
        another folder that only a generous match would name, face.evoLVe's paddle detector
        importing a `first_stage` that exists only beside the torch detector, is not what it
        imports); each must be a file of the project that imports no torch and whose own such
        imports are resolved likewise.  Any import not resolved (a file linted alone, a notebook, a
        src/ layout, an unknown library) keeps the file PyTorch code: direct evidence only."""
        file = self.files[index]
        if file is None:
            return False
        frameworks = file.summary.get("deep", ())
        if not frameworks or "torch" in frameworks:
            return False
        self._resolve_imports()
        pending = [index]
        seen: set[int] = set()
        while pending:
            current = self.files[pending.pop()]
            if current is None:
                return False  # a file the pass could not summarise: cannot tell
            if current.index in seen:
                continue
            seen.add(current.index)
            reached = current.summary.get("reach", ())
            if "torch" in current.summary.get("deep", ()):
                return False
            for module, name, level, _star in reached:
                target = self._reached_module(current, module, name, level)
                if target is None:
                    return False
                pending.append(target)
        return True

    def _reached_module(self, file: _File, module: str, name: Optional[str], level: int) -> Optional[int]:
        """The file of the project an import of `file` executes (`from pkg import mod` runs
        pkg/mod.py, `from pkg.mod import f` pkg/mod.py), or None; an absolute import only where
        the file's folder is at or below the folder Python finds it from (the pass's `_imports`,
        read before this, are resolved)."""
        absolute = self._import_target(file, [module, name, level])
        candidates = [absolute] if absolute else []
        if name is not None:
            candidates.append(self._import_target(file, [module, None, level]))
        script = not level and not self._importers.get(file.index)
        for dotted in candidates:
            if not dotted:
                continue
            # A file no other file imports is run as a script: its own folder comes first on
            # sys.path, so a module beside it wins (face.evoLVe's paddle/mult_gpu_training.py
            # imports paddle/head/metrics.py, not the torch head/metrics.py of the folder above).
            beside = self._beside(dotted, file) if script else None
            if beside is not None:
                return beside
            target = self._module(dotted, file)
            if target is None:
                continue
            found = self.files[target]
            if level or found is None or _within(file.directory, str(_import_root(found, dotted))):
                return target
            return None  # found only by a generous match: not on the script's path
        return None

    def _torch_importers(self, index: int) -> bool:
        """FileView.torch_importers of file `index`: a torch-free file that the project's torch code
        imports and that does training work itself (its summary's `updates` or `grads`: an optimizer
        step or a backward, protonets' Engine); a torch-free config or utility module imported by torch code gains
        nothing from the rules that follow training steps and would only be analysed again."""
        summary = self.files[index].summary  # type: ignore[union-attr]
        if _imports_torch(summary) or summary.get("stars"):
            return False
        if not any(record.get("updates") or record.get("grads") for record in summary["functions"].values()):
            return False
        self._resolve_imports()
        importers = (self.files[importer] for importer in self._importers.get(index, ()))
        return any(importer is not None and _imports_torch(importer.summary) for importer in importers)

    def _adam_classes(self, directory: str) -> tuple[tuple[str, str], ...]:
        """FileView.adam_classes of a file in `directory`: the classes of the files in it and below
        (where a script's models live; a run over several repositories, or a sibling package, is
        not one project for a name-only match)."""
        found = self._adam.get(directory)
        if found is None:
            skips: dict[str, Optional[set[str]]] = {}  # None: a class so named builds none
            inside = directory.rstrip(os.sep) + os.sep
            for file in self.files:
                if file is None or not (file.directory == directory or file.directory.startswith(inside)):
                    continue
                for name, record in file.summary["classes"].items():
                    own = record.get("adam")
                    known = skips.get(name, set())
                    skips[name] = None if own is None or known is None else known | set(own)
            found = self._adam[directory] = tuple(sorted((name, ",".join(sorted(found))) for name, found in skips.items() if found is not None))
        return found

    def _star_torch(self, index: int) -> Optional[tuple[tuple[str, str], ...]]:
        """What file `index`'s star imports bring of torch (FileView.star_torch), or None."""
        file = self.files[index]
        if file is None or not file.summary.get("stars"):
            return None
        found: dict[str, Optional[str]] = {}
        if not self._star_names(file, found, {index}):
            return None
        return tuple(sorted((name, qualified) for name, qualified in found.items() if qualified is not None))

    def _star_names(self, file: _File, found: dict[str, Optional[str]], seen: set[int]) -> bool:
        """Add to `found` the names `file`'s star imports bring (torch's qualified name, None for
        anything else; a nearer binding wins); False where one of them is not a file of the project."""
        for module, level in file.summary.get("stars", ()):
            absolute = self._import_target(file, [module, None, level])
            target = self._module(absolute, file) if absolute is not None else None
            source = self.files[target] if target is not None else None
            if source is None:
                return False
            if target in seen:
                continue
            seen.add(target)
            for local, (imported, name, imported_level) in source.summary["imports"].items():
                qualified = f"{imported}.{name}" if name else imported
                is_torch = not imported_level and (qualified == "torch" or qualified.startswith("torch."))
                found.setdefault(local, qualified if is_torch else None)
            for defined in source.summary["defs"]:
                found.setdefault(defined, None)
            if not self._star_names(source, found, seen):
                return False
        return True

    def _host_importers(self, index: int) -> bool:
        """Is file `index` imported by files of the project, none of which (nor it, nor the files
        that import them: a package's `__init__.py` re-exports for a script) mentions an accelerator,
        nor does any project module it uses (`from ..utils import *` where utils picks the device:
        the device then comes from the project's own code, whoever calls the file)?"""
        self._resolve_imports()
        if self._uses_accelerator_module(index):
            return False
        seen, todo = {index}, [index]
        while todo:
            current = todo.pop()
            file = self.files[current]
            if file is None or file.summary.get("host") is not True:
                return False
            for importer in self._importers.get(current, ()):
                if importer not in seen:
                    seen.add(importer)
                    todo.append(importer)
        return len(seen) > 1

    def _uses_accelerator_module(self, index: int) -> bool:
        """Does file `index` import, directly or through the project's modules it imports, a
        module of the project that mentions an accelerator?"""
        seen, todo = {index}, [index]
        while todo:
            for imported in self._imports.get(todo.pop(), ()):
                if imported in seen:
                    continue
                seen.add(imported)
                file = self.files[imported]
                if file is not None and file.summary.get("host") is not True:
                    return True
                todo.append(imported)
        return False

    def _unimported(self, index: int) -> bool:
        """FileView.unimported of file `index`: no file of the project imports it (`import m`,
        `from m import x`, `from m import *`), nor anything named as it is (`from pkg import m`: by
        name, erring towards "imported"), and it is no package's `__init__.py`."""
        target = self.files[index]
        if target is None or target.is_package:
            return False
        self._resolve_imports()
        return not self._importers.get(index) and target.path.stem not in self._imported_stems

    def _imported_from(self, index: int) -> frozenset[str]:
        """The names other files import from file `index` (`from pkg.mod import name`), with "*" for
        a star import of it or when it is a package's `__init__.py`."""
        target = self.files[index]
        if target is None:
            return frozenset()
        if target.is_package:
            return frozenset({"*"})
        self._resolve_imports()
        assert self._imported is not None
        return frozenset(self._imported.get(index, ()))

    def _resolve_imports(self) -> None:
        """Every file's imports resolved once, for all the views: the names imported from each file
        and the files that import it."""
        if self._imported is not None:
            return
        self._imported, self._importers, self._imports = {}, {}, {}
        self._imported_stems = set()
        for importer in self.files:
            if importer is None:
                continue
            found = [(name, [module, None, level]) for module, name, level in importer.summary["imports"].values() if name is not None]
            found += [("*", [module, None, level]) for module, level in importer.summary.get("stars", ())]
            whole = [[module, None, level] for module, name, level in importer.summary["imports"].values() if name is None]
            for name, where in [*found, *((None, where) for where in whole)]:
                absolute = self._import_target(importer, where)
                source = self._module(absolute, importer) if absolute is not None else None
                if source is not None and source != importer.index:
                    if name is not None:
                        self._imported.setdefault(source, set()).add(name)
                    self._importers.setdefault(source, set()).add(importer.index)
                    self._imports.setdefault(importer.index, set()).add(source)
                # By name too, whichever file it resolves to (`from pkg import mod`, `from . import
                # mod`, a name several files bear): a module so named may be imported.
                self._imported_stems.update(part.rpartition(".")[2] for part in (where[0], name) if part and part != "*")


def _imports_torch(summary: dict) -> bool:
    return any(target[0].partition(".")[0] == "torch" for target in summary["imports"].values())


def _import_root(file: _File, name: str) -> Path:
    """The folder on sys.path from which `import name` finds `file`: up one level per dotted part,
    one more for a package (`utils/__init__.py` as `utils` is found from the folder above `utils/`)."""
    root = Path(file.directory)
    for _ in range(name.count(".") + 1 - (0 if file.is_package else 1)):
        root = root.parent
    return root


def _within(directory: str, above: str) -> bool:
    """Is `directory` the directory `above` or one below it?"""
    return directory == above or directory.startswith(above.rstrip(os.sep) + os.sep)


def _is_torch_module_name(qualified: str) -> bool:
    if qualified in tables.MODULE_BASES:
        return True
    module, _, name = qualified.rpartition(".")
    return module.startswith("torch.nn") and module != "torch.nn.functional" and name[:1].isupper()


def single_file_view(summary: Optional[dict], filename: str) -> FileView:
    """The view of a file linted alone (standard input, the flake8 plugin, a notebook): the project
    is that one file."""
    if summary is None:
        return EMPTY_VIEW
    path = Path(filename) if filename not in ("-", "<stdin>") else Path("stdin.py")
    return Project([(path, filename, summary)]).view(0)
