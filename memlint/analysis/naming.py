"""What identifiers say, as plain string tests: no libcst here, so the prescreen
(memlint/prescreen) can ask the same questions as the analysis without parsing."""

from __future__ import annotations

import ast
import functools
import re
from typing import Optional

from memlint.analysis import tables

# Iterables whose name says they yield batches: `train_loader`, `dataloader`, `tqdm(val_dl)`, `batches`,
# `data_iter` / `dataiterator`.
BATCH_SOURCE = re.compile(
    r"(?:^|_)(?:loader|dataloader|dl|batches|(?:batch|data|train|val|test|eval)_?iter(?:ator)?)(?:_|$|\d)"
    r"|loader$|^(?:train|val|valid|validation|test|eval)_(?:data|dataset|set|ds)$",
    re.I,
)

# A collection named like a dataset (`dataset`, `val_dataset`, `self.test_set`, `ds`): indexed one
# item at a time (`dataset[idx]`), it yields one sample per index (dataset_walks.py).
DATASET_NAME = re.compile(r"(?:^|_)(?:dataset|data_?set|ds)$|^(?:train|val|valid|validation|test|eval)_?set$", re.I)

# An iterator named only as one (`for i, batch in enumerate(iterator)`): a pass over batches where the
# loop binds a name `batch` (naming.BATCH_TARGET); a bare `iterator` may walk anything else.
GENERIC_ITERATOR = re.compile(r"^(?:data_?)?iter(?:ator)?$", re.I)
BATCH_TARGET = re.compile(r"^batch$", re.I)

# The step of `range(0, len(X), batch_size)`: a loop that walks a data split by index, one batch per
# iteration (`X[i:i + batch_size]`), as a loop over a loader does.  A step named otherwise (`n`,
# `chunk`, `self.block_size`) may walk a sequence inside a model: not taken for a pass over data.
# A collection of loaders keyed by split (`dataloaders[phase]`, `loaders["val"]`): one of them,
# subscripted, yields batches; iterated itself (`for loader in loaders`) it yields whole passes.
LOADERS_BY_KEY = re.compile(r"(?:^|_)(?:data)?loaders$|^dls$", re.I)
# The key that picks one split's loader from a collection of them (`self.data[phase]`; iteration
# takes it only from a collection named `data`, as `transforms[phase]` holds no loaders): a variable
# naming the split a pass runs over.
SPLIT_KEY = re.compile(r"^(?:phase|split|data_?split)$", re.I)

# The bound of a loop that collects until it holds that many samples (`num_inception_images`,
# `n_samples`, `args.num_examples`, `self.max_images`): a count of data items, not a sequence length.
SAMPLE_COUNT = re.compile(r"^(?:num|n|max|total|nb)_?(?:\w+_)?(?:samples?|images?|imgs?|examples?|instances?)$", re.I)

# A prefix says which split or part the size is for (`eval_batch_size`, `text_bs`).
BATCH_STRIDE = re.compile(r"^(?:\w*_)?(?:mini)?batch_?size$|^(?:\w+_)?(?:bs|bsize)$|^batch$", re.I)

_EVAL_WORDS = frozenset(
    {"evaluate", "evaluation", "eval", "validate", "validation", "val", "test", "testing", "predict",
     "prediction", "predictions", "infer", "inference"}
)  # fmt: skip
# Words that say a function trains: with an evaluation word too, it is a driver of both, no evaluation.
_TRAIN_WORDS = frozenset({"train", "training", "trainval"})
# Function names with an evaluation word that are about something else: argument checking, config.
_NOT_EVALUATION = frozenset(
    {"args", "arguments", "config", "configs", "kwargs", "input", "inputs", "shape", "shapes", "params",
     "param", "dtype", "type", "types", "options", "settings", "path", "paths", "file", "files", "name",
     "names", "key", "keys", "mode", "split", "splits", "size", "sizes", "format", "schema", "device",
     "state", "dict", "attention", "mask", "transform", "transforms", "dataset", "datasets", "loader",
     "dataloader", "dataloaders", "metric", "metrics", "set", "fn", "func", "function", "hook",
     "hooks", "callback", "callbacks", "is", "should", "can", "has", "get", "set", "setup", "prepare",
     "init", "load", "save", "log", "reset", "update", "end", "start"}
)  # fmt: skip
_LOADER_WORDS = frozenset(
    {"loader", "loaders", "dataloader", "dataloaders", "dl", "dls", "iter", "iterator", "batches", "ds",
     "dataset"}
)  # fmt: skip
_SPLIT_WORDS = frozenset({"val", "valid", "validation", "test", "eval", "evaluation", "dev", "holdout"})
_JOINED_LOADER = re.compile(r"^(?:val|valid|validation|test|eval|dev)(?:loader|dataloader|dl|ds|dataset|iter|batches)s?$")


def name_tokens(name: str) -> list[str]:
    """`evalEpoch` / `eval_epoch` / `_EvalEpoch2` -> ["eval", "epoch"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [t for t in re.split(r"[_\W\d]+", spaced.lower()) if t]


def is_evaluation_function_name(name: str) -> bool:
    tokens = name_tokens(name)
    if not tokens or not any(t in _EVAL_WORDS for t in tokens):
        return False
    if name.startswith("test_") and len(tokens) > 1 and tokens[1] not in ("epoch", "loop", "step", "model"):
        return False  # pytest's convention: a unit test, not an evaluation
    first_eval = next(i for i, t in enumerate(tokens) if t in _EVAL_WORDS)
    if any(t in _TRAIN_WORDS for t in tokens[:first_eval]):
        return False  # `trainValidateSegmentation`, `train_and_evaluate`: a driver that trains too (its
        # `.eval()` calls, if any, still open regions); after the evaluation word, a train word names
        # the data split evaluated (`eval_train`, `predict_trainval`): still evaluation
    return not any(t in _NOT_EVALUATION for t in tokens)


# A function that draws samples from a generative model to look at (`sample_images`, `save_samples`,
# `generate_images`, `visualize_samples`): a verb of drawing or showing with a noun of what is shown.
# Both are needed: `sample_batch`, `sample_actions` (a policy's, trained through) and `generate` (a
# language model's decoding step, maybe trained through) are not.
_SAMPLING_VERBS = frozenset({"sample", "sampling", "generate", "visualize", "visualise", "show", "save", "plot", "draw"})
_SAMPLING_NOUNS = frozenset({"image", "images", "img", "imgs", "samples", "grid", "pictures", "faces", "digits"})


def is_sampling_function_name(name: str) -> bool:
    """`sample_images`, `save_samples`, `generate_imgs`: a function that draws samples to look at."""
    tokens = name_tokens(name)
    return any(t in _SAMPLING_VERBS for t in tokens) and any(t in _SAMPLING_NOUNS for t in tokens) and not name.startswith("test_")


def names_evaluation_data(name: str) -> bool:
    """`val_loader`, `test_dl`, `valloader`: a name that marks an iterable as validation / test data."""
    tokens = name_tokens(name)
    if any(t in _SPLIT_WORDS for t in tokens) and any(t in _LOADER_WORDS for t in tokens):
        return True
    return any(_JOINED_LOADER.match(t) for t in tokens)  # `testloader`, `valloader` (tutorial style)


@functools.lru_cache(maxsize=4096)  # asked for the same few names again and again
def named_like_model(name: str) -> bool:
    """`model`, `self.encoder`, `teacher_net`; not `build_model` or `prepare_model` (verbs), not a loss."""
    tokens = name_tokens(name)
    if tokens and tokens[0] in tables.NON_MODEL_VERBS:
        return False
    return bool(tables.MODEL_NAME.match(name)) and not tables.LOSS_NAME.match(name)


def is_forward_name(name: str) -> bool:
    """A function that computes a model's forward pass: `forward`, `_forward_impl`,
    `forward_features`, `__call__`."""
    return "forward" in name or name == "__call__"


# Receivers of `.step()` that update weights (not a learning-rate scheduler's step).
# `optimizer`, `d_optim`, `opt_G`, `OPTIMIZER`, and, case-sensitively, a camel-case suffix naming the network it
# steps (`optimizerD`, `optimG`: DCGAN-style scripts), not `options` or `optimal`.  OPTIMIZER_NAME also takes
# GradScaler's `scaler.step(optimizer)`; OPTIMIZER_ONLY_NAME does not (ML017: a scaler means mixed precision).
# Neither takes a name that ends in a schedule (`model_optimizer_scheduler`, `opt_sched`, `optimizerScheduler`):
# the last word says what the object is, the scheduler of that optimizer, and its `step()` trains nothing (an
# epoch loop that steps one per epoch is no step loop).  Not `custom_lr_optimizer` or `scheduled_optim`.
_ENDS_IN_SCHEDULE = r"(?!(?i:.*sched(?:ule|uler)?s?\W*$))"


def _optimizer_pattern(words: str) -> re.Pattern[str]:
    return re.compile(
        rf"^{_ENDS_IN_SCHEDULE}.*?"
        rf"(?:(?i:(?:^|_)(?:{words})(?:_|$|\d)|optimizer$)|(?:^|_)(?:optimizer|optimiser|optim|opt)[A-Z][A-Za-z0-9]*$)"
    )


OPTIMIZER_NAME = _optimizer_pattern("optim|optimizer|optimiser|opt|scaler")
OPTIMIZER_ONLY_NAME = _optimizer_pattern("optim|optimizer|optimiser|opt")
# Collections of optimizers (`optimizers`, `self.optims`, `optimizer_list`): a loop over one steps
# each optimizer of a single training step (CSAIL semantic segmentation, PreSumm).
OPTIMIZERS_NAME = re.compile(r"(?:^|_)(?:optims|optimizers|optimisers)(?:_|$)|(?:optim|optimizer|optimiser)_?(?:list|s)$", re.I)


# A name that says it holds a learning-rate schedule (`opt_sched`, `schedulers`, `lr_opt`, `lrs`).
_SCHEDULE_NAME = re.compile(r"sched|(?:^|_)lrs?(?:_|$)|^lr|lr$", re.I)


def names_schedule(name: str) -> bool:
    """Does `name` say it holds a learning-rate schedule (`scheduler`, `lr_sched`, `opt_scheds`,
    `lrs`, `warmup_lr`)?  Its `step()` steps no parameters (step_calls.is_schedule_step, is_parameter_step)."""
    return _SCHEDULE_NAME.search(name) is not None


def steps_each_optimizer(target: str, collection: Optional[str]) -> bool:
    """Does `for <target> in <collection>:` (`collection`: the iterable's last name, None when it
    has none) iterate optimizers, so that `<target>.step()` in it steps each optimizer of one
    training step?  By the collection's name (`optimizers`, `self.optims`) or the element's (`for
    opt in opt_list`, `for optimizer in [enc_opt, dec_opt]`).  Never where either name also names a
    learning-rate schedule (`for opt_sched in opt_scheds`, `lr_opts`): a scheduler's `step()` trains
    nothing, and the name is the only evidence here."""
    if names_schedule(target) or (collection is not None and names_schedule(collection)):
        return False
    return OPTIMIZER_ONLY_NAME.search(target) is not None or (collection is not None and OPTIMIZERS_NAME.search(collection) is not None)


# CapWords with a lower-case letter: a class by Python's naming convention (`G`, `D`, `VAE` are
# often instances: GAN generators and discriminators, autoencoders).
_CLASS_NAME = re.compile(r"^_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")


def looks_like_class_name(name: str) -> bool:
    """`Model`, `QNetwork`: calling it builds an object, it runs nothing (`Model(envs)`)."""
    return _CLASS_NAME.match(name) is not None


def dotted(expr: ast.AST) -> Optional[str]:
    """`a.b.c` (CPython's AST) -> "a.b.c"; None for anything that is not a chain of names."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


# Methods of a module that do not run it (or, like `generate` in transformers, turn gradients off).
_NON_RUNNING_METHODS = frozenset(
    {"eval", "train", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "type", "apply", "zero_grad",
     "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
     "named_children", "state_dict", "load_state_dict", "requires_grad_", "share_memory", "add_module",
     "generate", "save_pretrained", "push_to_hub", "resize_token_embeddings"}
)  # fmt: skip


# Words of a method that runs the module on its input: an RL policy's `get_action(obs)` /
# `get_action_and_value(obs)`, DINO's `get_last_selfattention(img)`, `feature_extraction(x)`,
# `encode(x)`, `predict(x)`, tabnet's `forward_masks(x)`, a language model's `log_prob(words)` /
# `likelihood(x)` / `nll(x)` (the model's distribution over its input: computing it runs the model).
# A method fed a configuration (`adjust_generation_fn(config)`) is not one.
_RUNNING_METHOD_WORDS = re.compile(
    r"(?:^|_)(?:act|action|actions|value|values|q|logits|predict|prediction|infer|inference|encode|decode|forward|"
    r"embed|embedding|embeddings|feature|features|extract|extraction|attention|selfattention|sample|score|"
    r"scores|policy|generate_images?|reconstruct|reconstruction|prob|probs|logprob|logprobs|likelihood|nll)(?:_|$)"
)


def method_runs_module(name: str, project_methods: frozenset[str] = frozenset()) -> bool:
    """Does a method of this name, called on a module with data, run the module (ML002 after `.eval()`)?
    By its words, or because every nn.Module class of the project that defines it runs a model in
    it (`project_methods`, the project pass's FileView.model_methods: protonets' `model.loss(sample)`)."""
    if never_runs_module(name):
        return False
    return name in project_methods or _RUNNING_METHOD_WORDS.search(name) is not None


def never_runs_module(name: str) -> bool:
    """Does `method_runs_module` reject a method of this name whatever the project's facts
    (`_helper`, `register_buffer`, `state_dict`)?"""
    return name in _NON_RUNNING_METHODS or name.startswith(("_", "register_"))

# Callees whose names say they draw data (`get_batch("train")`, `sample_batch()`, `load_data()`,
# `next(it)`): a loop calling one takes new data on each iteration.
# Whole words of the name only: `criterion_kl` holds "iter" but draws nothing.
DRAWS_DATA = re.compile(r"(?:^|_)(?:batch(?:es)?|samples?|data|load|next|iter|read|fetch)(?:_|$)", re.I)
