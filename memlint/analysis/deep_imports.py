"""Which deep-learning framework a file is written for, by its own import statements.

Every rule reads `.eval()`, `nn.X`, optimizers and loops as PyTorch's.  A file of a repository that
also ships a PaddlePaddle port (face.evoLVe's `paddle/`) or MXNet Gluon scripts (ResNeSt's
`scripts/gluon/`) has the same shapes with other semantics: a `paddle.nn.Layer` records no
autograd graph under `torch.no_grad`'s rules, a Gluon network records none outside
`autograd.record()`.  Such a file is recognised by its imports, all of them (in functions and
under `try` too, read on CPython's AST through the prescreen's node index):

- `frameworks`: the frameworks it imports: "torch" for torch and every library built on it
  (tables.TORCH_LIBRARIES, any dotted name with a `torch*` / `pytorch*` part, `torchvision.transforms`
  and `from horovod import torch` too), the package's own name for another framework
  (tables.OTHER_FRAMEWORKS).  A file that names `torch` in its code without importing it, or names
  the module in a string (`th = __import__("torch")`, `importlib.import_module("torch.nn")`),
  counts as importing it.
- `reached`: for a file that does not import torch, every module it imports that is neither the
  standard library's, a framework's, nor a library known to bring no torch
  (tables.NON_TORCH_LIBRARIES), each as [module, name imported from it or None, level, whether it
  is a star import]: the project pass (memlint/pipeline/project.py, `FileView.other_framework`)
  must resolve each to a file of the project that brings no torch in, or the file stays PyTorch code.
"""

from __future__ import annotations

import ast
from typing import Optional

from memlint.analysis.stdlib_modules import STDLIB_MODULE_NAMES
from memlint.analysis.tables import NON_TORCH_LIBRARIES, OTHER_FRAMEWORKS, TORCH_LIBRARIES


def imported_frameworks(source) -> tuple[list[str], Optional[list[list]]]:
    """(the frameworks `source` imports, sorted; the modules a file that does not import torch
    imports and that may bring torch in, as [module, name or None, level, star], or None for a file
    that imports torch)."""
    frameworks: set[str] = set()
    others: list[list] = []
    for node in source.nodes(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _classify(alias.name, None, False, frameworks, others)
        elif node.level or not node.module:
            for alias in node.names:
                star = alias.name == "*"
                others.append([node.module or "", None if star else alias.name, node.level, star])
        else:
            for alias in node.names:
                star = alias.name == "*"
                name = None if star else alias.name
                _classify(node.module, name, star, frameworks, others)
    if "torch" not in frameworks and (
        any(n.id == "torch" for n in source.nodes(ast.Name))  # type: ignore[attr-defined]
        or any(_names_torch(n.value) for n in source.nodes(ast.Constant))  # type: ignore[attr-defined]
    ):
        frameworks.add("torch")
    return sorted(frameworks), (None if "torch" in frameworks else _unique(others))


def _names_torch(value: object) -> bool:
    """A string naming torch or a module of it (`__import__("torch")`, `import_module("torch.nn")`)."""
    return type(value) is str and (value == "torch" or value.startswith("torch."))


def _classify(module: str, name: Optional[str], star: bool, frameworks: set[str], others: list[list]) -> None:
    """Sort an absolute import of `module` (`name` from it, None for `import module` and a star
    import) into `frameworks` or `others`."""
    full = f"{module}.{name}" if name else module
    parts = full.split(".")  # `from horovod import torch`: the imported name is torch
    root = parts[0]
    if root in TORCH_LIBRARIES or any(part.startswith(("torch", "pytorch")) for part in parts):
        frameworks.add("torch")
    elif root in OTHER_FRAMEWORKS:
        frameworks.add(root)
    elif root not in STDLIB_MODULE_NAMES and not _known_non_torch(full):
        others.append([module, name, 0, star])


def _known_non_torch(dotted: str) -> bool:
    return any(dotted == known or dotted.startswith(known + ".") for known in NON_TORCH_LIBRARIES)


def _unique(entries: list[list]) -> list[list]:
    seen: set[tuple] = set()
    found = []
    for entry in entries:
        if tuple(entry) not in seen:
            seen.add(tuple(entry))
            found.append(entry)
    return found
