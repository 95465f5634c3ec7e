"""What a call returns, as far as autograd history and models go, decided on names alone: the one
definition that the semantic model's values (memlint/analysis/values.py, on libcst's tree), the
project pass's summaries (memlint/analysis/summaries.py) and the screens
(memlint/prescreen/history.py, both on CPython's AST) read.  No tree of either parser here: each
caller takes the names from its own tree and applies the answer in its own terms (values: a
tri-state `graph`; summaries: "certainly"; the screens: "possibly").

- A torch function (`torch_call`): a layer or loss constructor builds a module and runs nothing; a
  functional loss returns history when the model output it is given has it; a factory, a legacy
  constructor (`torch.FloatTensor`) or an index / comparison function (`torch.argmax`) returns a
  fresh tensor without history; any other function of `torch` or `torch.nn.functional` returns
  the history of its tensor arguments; anything else of torch's is not known.
- A callee the analysis cannot see into (`named_like_model_or_loss`): a name like `model`,
  `self.net`, `criterion` or `loss_fn` is taken to run a model or a loss, whose result carries
  history under grad.
"""

from __future__ import annotations

from typing import Optional

from memlint.analysis import tables
from memlint.analysis.naming import named_like_model

# What `torch_call` answers.
MODULE = "module"  # `nn.Linear(...)`, `nn.CrossEntropyLoss()`: builds a module (or a loss module)
LOSS = "loss"  # `F.cross_entropy(out, y)`: history when its input has it; a loss value
FRESH = "fresh"  # `torch.zeros(...)`, `torch.FloatTensor(3)`, `torch.argmax(p)`: never history
ARGUMENTS = "arguments"  # `torch.cat([a, b])`, `F.relu(x)`: the history of its tensor arguments


def torch_call(qualified: str) -> Optional[str]:
    """What calling torch's `qualified` ("torch.nn.functional.mse_loss") returns: one of the
    constants above, or None when it is not torch's or nothing is known of it
    (`torch.utils.checkpoint.checkpoint`, `torch.cuda.empty_cache`)."""
    if not qualified.startswith("torch"):
        return None
    module, _, name = qualified.rpartition(".")
    if module == "torch.nn.functional":
        return LOSS if name in tables.FUNCTIONAL_LOSSES else ARGUMENTS
    if module.startswith("torch.nn") and name[:1].isupper():
        return MODULE
    if module == "torch":
        if name in tables.TENSOR_FACTORIES or name in tables.GRAPH_FREE_FUNCTIONS or (name.endswith("Tensor") and name[:1].isupper()):
            return FRESH
        return ARGUMENTS
    return None


def named_like_model_or_loss(name: str) -> bool:
    """`model`, `net`, `encoder`, `criterion`, `loss_fn`: a callee the analysis cannot see into that
    it takes for a model or a loss (tables.MODEL_NAME, tables.LOSS_NAME)."""
    return named_like_model(name) or bool(tables.LOSS_NAME.match(name))


def is_loss_name(name: str) -> bool:
    """`criterion`, `loss_fn`, `compute_loss`: named like a loss (its result is not known to be 0-d)."""
    return tables.LOSS_NAME.match(name) is not None
