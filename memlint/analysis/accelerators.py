"""Does the file name an accelerator at all, and does it run code of its own: the two facts that
tell a CPU-only script from code that may run on a GPU (issue 27; the semantic model's
`accelerator_named` and `runs_at_module_level`).

`DeviceFacts.accelerator` (model.py) answers "does the file put something on an accelerator": a
`.cuda()`, a `.to(<not the CPU>)`, a `device=` keyword.  A file can run on one without any such
call: the placement may be in a helper of another file (`model = build(args)`), the device only
picked (`device = torch.device(args.device)`, `args.gpu`, `"cuda:0"` passed to a function), or a
launcher's name used (`accelerator.backward(loss)`).  The weaker fact asked here is whether any
identifier or string of the file names an accelerator (tables.ACCELERATOR_IDENTIFIER and
ACCELERATOR_STRING); the evidence is the first such node, in source order.  Seeding or querying
CUDA (`torch.cuda.manual_seed(0)`, `torch.cuda.is_available()`: tables.CUDA_QUERIES) places
nothing and is not a mention, nor is switching CUDA off (`os.environ["CUDA_VISIBLE_DEVICES"] = ""`:
tables.CUDA_SWITCHED_OFF), which is evidence of a CPU-only run.  Comments are not code and do not count.

A file that names no accelerator and runs code at module level (a script, a notebook: a loop, a
`with`, a call statement or `if __name__ == "__main__":` at module level) runs on the CPU: CUDA
autocast or a `.cpu()` has nothing to apply to there.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.tables import ACCELERATOR_IDENTIFIER, ACCELERATOR_LETTERS, ACCELERATOR_STRING, CUDA_QUERIES, CUDA_SWITCHED_OFF
from memlint.analysis.walk import code_descendants, dotted_name


def accelerator_named(module: cst.Module, text: Optional[str]) -> Optional[cst.CSTNode]:
    """The first name or string of the module that names an accelerator (not as a CUDA query), or
    None."""
    if text is not None and not ACCELERATOR_LETTERS.search(text):
        return None
    queries: set[int] = set()  # ids of the `cuda` names of `torch.cuda.manual_seed` and the like
    torch_names: Optional[frozenset[str]] = None
    switches_off = text is None or CUDA_SWITCHED_OFF.search(text) is not None
    for node in code_descendants(module):  # pre-order: an Attribute comes before its names
        kind = type(node)
        if kind is cst.Assign and switches_off:
            key = _cuda_switched_off(node)  # type: ignore[arg-type]
            if key is not None:
                queries.add(id(key))
        elif kind is cst.Name:
            if id(node) not in queries and ACCELERATOR_IDENTIFIER.search(node.value):  # type: ignore[attr-defined]
                return node
        elif kind is cst.SimpleString:
            if id(node) not in queries and ACCELERATOR_STRING.search(node.value):  # type: ignore[attr-defined]
                return node
        elif kind is cst.Attribute and node.attr.value in CUDA_QUERIES:  # type: ignore[attr-defined]
            owner = node.value  # type: ignore[attr-defined]
            if type(owner) is cst.Attribute and owner.attr.value == "cuda":
                if torch_names is None:
                    torch_names = _torch_names(module)
                if dotted_name(owner.value) in torch_names:
                    queries.add(id(owner.attr))
    return None


def _cuda_switched_off(node: cst.Assign) -> Optional[cst.SimpleString]:
    """The `"CUDA_VISIBLE_DEVICES"` key of `os.environ["CUDA_VISIBLE_DEVICES"] = ""` (or `"-1"`), an
    assignment that hides every GPU; None for any other assignment."""
    if len(node.targets) != 1 or type(node.value) is not cst.SimpleString:
        return None
    if node.value.evaluated_value not in ("", "-1"):
        return None
    target = node.targets[0].target
    if type(target) is not cst.Subscript or len(target.slice) != 1:
        return None
    if not (dotted_name(target.value) or "").endswith("environ"):
        return None
    index = target.slice[0].slice
    key = index.value if isinstance(index, cst.Index) else None
    if type(key) is cst.SimpleString and key.evaluated_value == "CUDA_VISIBLE_DEVICES":
        return key
    return None


def runs_at_module_level(module: cst.Module) -> bool:
    """A loop, a `with`, a call statement or an `if __name__ == "__main__":` at module level."""
    return any(_runs(statement) for statement in module.body)


def _runs(statement: cst.CSTNode) -> bool:
    if isinstance(statement, (cst.For, cst.While, cst.With)):
        return True
    if isinstance(statement, cst.If):
        return "__name__" in cst.Module(body=[]).code_for_node(statement.test)
    if isinstance(statement, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) for small in statement.body)
    return False


def _torch_names(module: cst.Module) -> frozenset[str]:
    """The names any import of the file binds to torch itself (`import torch`, `import torch as th`)."""
    found = set()
    for node in code_descendants(module):
        if type(node) is cst.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                if dotted_name(alias.name) == "torch" and alias.asname is not None and type(alias.asname.name) is cst.Name:
                    found.add(alias.asname.name.value)
                elif (dotted_name(alias.name) or "").partition(".")[0] == "torch" and alias.asname is None:
                    found.add("torch")
    return frozenset(found)
