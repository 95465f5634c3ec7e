"""ML008 eval-loader-full-batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from memlint.analysis.loaders import handed_to_model, loader_feeds_model
from memlint.analysis.precision_api import keyword
from memlint.analysis.walk import code_with_parents
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml008_eval_loader_full_batch.meta import META

_DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


@dataclass
class _Candidate:
    call: cst.Call
    batch: str  # the batch_size expression, for the message
    name: Optional[str] = None  # the name the loader is bound to
    feeds: bool = False  # known to feed a model where it is created


class EvalLoaderFullBatch(Rule):
    """
    ## What it does
    Finds a `DataLoader` whose batch size is its whole dataset, when the loader feeds a model. The
    batch size is the dataset's size when it is `batch_size=len(dataset)`, `len(x.dataset)`,
    `dataset.__len__()`, the rows the dataset holds (`len(ds.tensors[0])`, `ds.data.shape[0]`),
    the length of what the dataset was built from (`len(X)`, `X.shape[0]` or `X.size(0)` for
    `TensorDataset(X, y)`, `MyDataset(X)` or `MyData(X, y)` where `MyData` is a dataset class of
    the file, through `torch.as_tensor(X).float()`: the semantic model's datasets fact), or a
    variable holding one of those; a `torch.utils.data.DataLoader` feeds a
    model when it is iterated by a loop that calls a model (or moves the
    batch to the device), handed to a call that runs one (`trainer.fit(model, loader)`,
    `evaluate(model, loader)`), or returned from a `*_dataloader` hook (Lightning). A loader that a
    function of the file builds and returns (alone or in a tuple: `return train_loader,
    test_loader`) is followed to the callers in the file that feed a model with it.

    Not reported: a loader no model consumes in the file (it only materialises data on the CPU,
    e.g. to compute normalisation statistics), a batch size that is the length of some other
    collection, and any function merely named `DataLoader`.

    ## Why is this bad?
    The whole split goes through the model in one forward pass, so activation memory scales with
    the dataset instead of the batch: an evaluation that fits with the training batch size runs
    out of memory once the validation set grows.

    ## Example
    ```python
    val_loader = DataLoader(val_set, batch_size=len(val_set))
    for x, y in val_loader:
        preds = model(x)
    ```

    ## Use instead
    ```python
    val_loader = DataLoader(val_set, batch_size=train_batch_size)
    for x, y in val_loader:
        preds = model(x)
    ```

    ## Fix safety
    No automatic fix: the right batch size (usually the training one) is not in the code, and
    metrics computed per batch (a mean of batch means) change with it.

    ## Measured effect
    `fixtures/ml008_full_batch_loader.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): an evaluation loader with
    `batch_size=len(dataset)` peaks at 26,296,360 B; with a fixed batch size, 8,586,280 B
    (16.9 MiB, 67.3% less), same result.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "none"

    VALID = [
        Valid(  # a row count of something else than the dataset's rows (a feature count)
            """
import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(X, y)
loader = DataLoader(ds, batch_size=X.shape[1])
for x, y in loader:
    out = model(x)
"""
        ),
        Valid(  # a class that is no dataset, called with the array
            """
import torch
from torch.utils.data import DataLoader
class Scaler:
    def __init__(self, x):
        self.x = x
loader = DataLoader(Scaler(X), batch_size=len(X))
for x in loader:
    out = model(x)
"""
        ),
        Valid(
            """
import torch
from torch.utils.data import DataLoader
val_loader = DataLoader(val_set, batch_size=64)
for x, y in val_loader:
    preds = model(x)
"""
        ),
        Valid(  # only materialises the data on the CPU: no model in sight
            """
import torch
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=len(train_set))
images, _ = next(iter(loader))
mean, std = images.mean(dim=(0, 2, 3)), images.std(dim=(0, 2, 3))
"""
        ),
        Valid(  # a project's own DataLoader
            """
import torch
from mydata import DataLoader
loader = DataLoader(ds, batch_size=len(ds))
for x in loader:
    out = model(x)
"""
        ),
        Valid(  # the length of something else
            """
import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=len(devices) * 8)
for x in loader:
    out = model(x)
"""
        ),
        Valid(  # returned by a helper whose callers only compute statistics with it
            """
import torch
from torch.utils.data import DataLoader
def stats_loader(ds):
    return DataLoader(ds, batch_size=len(ds))
images, _ = next(iter(stats_loader(train_set)))
mean = images.mean(dim=(0, 2, 3))
"""
        ),
        Valid(  # the length of a dataset's other argument (a vocabulary), not of its rows
            """
import torch
from torch.utils.data import DataLoader
ds = TextDataset(texts, vocab)
loader = DataLoader(ds, batch_size=len(vocab))
for x in loader:
    out = model(x)
"""
        ),
    ]

    INVALID = [
        Invalid(  # the row count of the array the dataset was built from (issue 27)
            """
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
val_ds = TensorDataset(torch.from_numpy(X_val), torch.from_numpy(y_val))
val_loader = DataLoader(val_ds, batch_size=X_val.shape[0])
with torch.no_grad():
    for x, y in val_loader:
        preds = model(x)
""",
            line=5,
            column=14,
            message="whole",
        ),
        Invalid(  # the rows a TensorDataset holds
            """
import torch
from torch.utils.data import DataLoader, TensorDataset
valid_data = TensorDataset(X_valid, y_valid)
valid_loader = DataLoader(valid_data, batch_size=len(valid_data.tensors[0]))
for x, y in valid_loader:
    out = net(x)
""",
            line=4,
            column=16,
        ),
        Invalid(  # a dataset class of the file, built from the array whose length is the batch size
            """
import torch
from torch.utils.data import DataLoader, Dataset
class Signals(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i], self.y[i]
test_loader = DataLoader(Signals(X_test, y_test), batch_size=len(X_test))
for x, y in test_loader:
    out = model(x)
""",
            line=10,
            column=15,
        ),
        Invalid(
            """
import torch
from torch.utils.data import DataLoader
val_loader = DataLoader(val_set, batch_size=len(val_set))
model.eval()
with torch.no_grad():
    for x, y in val_loader:
        preds = model(x)
""",
            line=3,
            column=14,
            message="whole",
        ),
        Invalid(  # a variable holding the length, handed to an evaluation function
            """
import torch.utils.data as data
n = len(test_data)
loader = data.DataLoader(test_data, n, shuffle=False)
evaluate(net, loader)
""",
            line=3,
            column=10,
        ),
        Invalid(  # a Lightning hook returning the loader
            """
import torch
from torch.utils.data import DataLoader
import lightning as L
class Model(L.LightningModule):
    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=self.val_ds.__len__())
""",
            line=6,
            column=16,
        ),
        Invalid(  # built in a helper that returns it, fed to the model by the caller
            """
import torch
from torch.utils.data import DataLoader
def get_loaders(train_set, test_set):
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=len(test_set))
    return train_loader, test_loader
train_dl, test_dl = get_loaders(train_set, test_set)
with torch.no_grad():
    for x, y in test_dl:
        preds = net(x)
""",
            line=5,
            column=19,
            message="whole",
        ),
        Invalid(  # returned directly, the call handed to an evaluation function
            """
from torch.utils.data import DataLoader
def full_loader(ds):
    return DataLoader(ds, batch_size=len(ds))
evaluate(model, full_loader(test_set))
""",
            line=3,
            column=12,
        ),
        Invalid(  # the length of the tensor the dataset was built from
            """
import torch
from torch.utils.data import DataLoader, TensorDataset
test_ds = TensorDataset(torch.from_numpy(X_test).float(), torch.from_numpy(y_test))
test_loader = DataLoader(test_ds, batch_size=len(X_test))
with torch.no_grad():
    for x, y in test_loader:
        preds = model(x)
""",
            line=4,
            column=15,
            message="whole",
        ),
        Invalid(  # inline, with the project's own dataset class, in a function
            """
from torch.utils.data import DataLoader
def evaluate_all(model, X):
    loader = DataLoader(SignalDataset(X.values), batch_size=len(X), shuffle=False)
    for batch in loader:
        model(batch)
""",
            line=3,
            column=14,
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._candidates: dict[int, _Candidate] = {}
        self._lengths: dict[tuple, str] = {}  # (function, name) -> the code of X in `name = len(X)`
        self._bound: dict[int, str] = {}  # id(DataLoader call) -> the name it is assigned to
        self._fed: set[int] = set()  # DataLoader calls known to feed a model where they are created
        # function key -> what its returns give back: (position in a returned tuple or None, the code
        # of a returned name, or the id of a returned call)
        self._returns: dict[tuple, list[tuple[Optional[int], object]]] = {}
        self._functions: dict[int, Optional[tuple]] = {}  # id(DataLoader call) -> the function it is in

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        name = target.value if isinstance(target, cst.Name) else (
            target.attr.value if isinstance(target, cst.Attribute) else None
        )
        if name is None:
            return
        length = self._length_of(node.value)
        if length is not None and isinstance(target, cst.Name):
            self._lengths[(self.ctx.function_key, name)] = length
        elif isinstance(target, cst.Name):
            self._lengths.pop((self.ctx.function_key, name), None)
        if isinstance(node.value, cst.Call):
            self._bound[id(node.value)] = name

    def visit_Return(self, node: cst.Return) -> None:
        function = self.ctx.function_node
        if isinstance(node.value, cst.Call) and function is not None and function.name.value.endswith("dataloader"):
            self._fed.add(id(node.value))
        key = self.ctx.function_key
        if key is None or node.value is None:
            return
        values = [(i, e.value) for i, e in enumerate(node.value.elements)] if isinstance(node.value, cst.Tuple) else [(None, node.value)]
        returned = self._returns.setdefault(key, [])
        for position, value in values:
            if isinstance(value, cst.Name):
                returned.append((position, value.value))
            elif isinstance(value, cst.Call):
                returned.append((position, id(value)))

    def visit_Call(self, node: cst.Call) -> None:
        for arg in node.args:
            if isinstance(arg.value, cst.Call) and handed_to_model(node):
                self._fed.add(id(arg.value))
        if self.ctx.resolve(node.func) not in _DATALOADER:
            return
        dataset = _argument(node, 0, "dataset")
        batch = _argument(node, 1, "batch_size")
        if dataset is None or batch is None:
            return
        if not self._is_whole_split(batch, dataset):
            return
        code = self.ctx.module.code_for_node
        self._candidates[id(node)] = _Candidate(node, " ".join(code(batch).split()), self._bound.get(id(node)))
        self._functions[id(node)] = self.ctx.function_key

    def _is_whole_split(self, batch: cst.BaseExpression, dataset: cst.BaseExpression) -> bool:
        code = self.ctx.module.code_for_node
        length = self._length_of(batch)
        if length is None and isinstance(batch, cst.Name):
            length = self._lengths.get((self.ctx.function_key, batch.value))
        if length is None:
            return False
        if length == code(dataset) or length.endswith(".dataset"):
            return True
        # `len(ds.tensors[0])`, `ds.data.shape[0]`: the rows the dataset holds
        held = code(dataset)
        if length in (held + ".data", held + ".targets") or length.startswith(held + ".tensors["):
            return True
        # `len(X)` of what the dataset was built from (`TensorDataset(X, y)`): at least its length
        model = self.ctx.model
        if isinstance(dataset, cst.Name):
            scope = self.ctx.function_node or self.ctx.module
            return length in model.dataset_sources(scope).get(dataset.value, ())
        return length in model.built_from(dataset)

    def _length_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """`len(X)` / `X.__len__()` / `X.shape[0]` / `X.size(0)` / `X.size()[0]` -> the code of X."""
        rows = _rows_counted(expr)
        if rows is not None:
            return self.ctx.module.code_for_node(rows)
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        code = self.ctx.module.code_for_node
        if isinstance(func, cst.Name) and func.value == "len" and self.ctx.is_builtin("len") and len(expr.args) == 1:
            return code(expr.args[0].value)
        if isinstance(func, cst.Attribute) and func.attr.value == "__len__" and not expr.args:
            return code(func.value)
        return None

    def finish(self, facts) -> None:
        for candidate in self._candidates.values():
            name = self._bound.get(id(candidate.call))
            feeds = id(candidate.call) in self._fed or (
                name is not None and loader_feeds_model(self.ctx.module, name)
            )
            if not feeds:
                feeds = self._returned_and_fed(candidate, name)
            if not feeds:
                continue
            self.report(
                candidate.call,
                f"`batch_size={candidate.batch}` puts the whole split through the model in one forward pass: "
                "activation memory grows with the size of the dataset; use the training batch size",
            )


    def _returned_and_fed(self, candidate: _Candidate, name: Optional[str]) -> bool:
        """A helper that builds the loader and returns it (`def get_loaders(): ...; return train_loader,
        test_loader`): does a caller in this file feed a model with what it gets back?"""
        key = self._functions.get(id(candidate.call))
        if key is None:
            return False
        positions = {p for p, value in self._returns.get(key, ()) if value == id(candidate.call) or (name is not None and value == name)}
        if not positions:
            return False
        module = self.ctx.module
        for node, parents in code_with_parents(module):
            if type(node) is not cst.Call or not _calls_function(node, key):
                continue
            if id(node) in self._fed:  # `evaluate(model, get_test_loader(ds))`
                return True
            parent = parents[-1]
            if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
                continue
            target = parent.targets[0].target
            for position in positions:
                bound = target if position is None else _element(target, position)
                if isinstance(bound, cst.Name) and loader_feeds_model(module, bound.value):
                    return True
        return False


def _calls_function(call: cst.Call, key: tuple) -> bool:
    """Is this a call of the file's function `key` (`get_loaders(...)`, `self.make_loader(...)`)?"""
    func = call.func
    if key[0] == "func":
        return isinstance(func, cst.Name) and func.value == key[1]
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and func.attr.value == key[-1]


def _element(target: cst.BaseExpression, position: int) -> Optional[cst.BaseExpression]:
    """The `position`-th name of a tuple target (`train_loader, test_loader = ...`), if it is one."""
    if isinstance(target, (cst.Tuple, cst.List)) and position < len(target.elements):
        element = target.elements[position]
        if not isinstance(element, cst.StarredElement) and not any(isinstance(e, cst.StarredElement) for e in target.elements[:position]):
            return element.value
    return None


def _argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    arg = keyword(call, name)
    if arg is not None:
        return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: position + 1]):
        return None
    return positional[position].value if len(positional) > position else None


def _rows_counted(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`X.shape[0]`, `X.size()[0]`, `X.size(0)`: the number of rows of X; X, or None."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        index = expr.slice[0].slice.value  # type: ignore[attr-defined]
        if type(index) is not cst.Integer or index.value != "0":  # type: ignore[attr-defined]
            return None
        held = expr.value
        if type(held) is cst.Attribute and held.attr.value == "shape":
            return held.value
        if type(held) is cst.Call and not held.args and type(held.func) is cst.Attribute and held.func.attr.value == "size":
            return held.func.value
        return None
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" and len(expr.args) == 1:
        argument = expr.args[0]
        if argument.keyword is None and not argument.star and type(argument.value) is cst.Integer and argument.value.value == "0":
            return expr.func.value
    return None
