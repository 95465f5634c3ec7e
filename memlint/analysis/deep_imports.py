"""Which deep-learning framework a file is written for, by its own import statements.

Every rule reads `.eval()`, `nn.X`, optimizers and loops as PyTorch's.  A file of a repository that
also ships a PaddlePaddle port (face.evoLVe's `paddle/`) or MXNet Gluon scripts (ResNeSt's
`scripts/gluon/`) has the same shapes with other semantics: a `paddle.nn.Layer` records no
autograd graph under `torch.no_grad`'s rules, a Gluon network records none outside
`autograd.record()`.  Such a file is recognised by its imports, all of them (in functions and
under `try` too, read on CPython's AST through the prescreen's node index):

- `frameworks`: the frameworks it imports: "torch" for torch and every library built on it
  (tables.TORCH_LIBRARIES, any dotted name with a `torch*` / `pytorch*` part), the package's own
  name for another framework (tables.OTHER_FRAMEWORKS); `torchvision.transforms`, which only
  prepares images, counts for neither.  A file that names `torch` in its code without importing it
  (`torch = importlib.import_module("torch")`) counts as importing it.
- `reached`: for a file that imports another framework and not torch, the modules it imports that
  may be the project's (neither a framework's nor the standard library's), each as [module, name
  imported from it or None, level, whether it is a star import]: the project pass (memlint/pipeline/project.py,
  `FileView.other_framework`) decides whether one of them brings torch in.
"""

from __future__ import annotations

import ast
import sys
from typing import Optional

from memlint.analysis.tables import DATA_ONLY_TORCH_MODULES, OTHER_FRAMEWORKS, TORCH_LIBRARIES


def imported_frameworks(source) -> tuple[list[str], Optional[list[list]]]:
    """(the frameworks `source` imports, sorted; the modules a file of another framework imports
    that may be the project's, as [module, name or None, level, star], or None for any other file)."""
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
    if "torch" not in frameworks and any(n.id == "torch" for n in source.nodes(ast.Name)):  # type: ignore[attr-defined]
        frameworks.add("torch")
    foreign = bool(frameworks) and "torch" not in frameworks
    return sorted(frameworks), (_unique(others) if foreign else None)


def _classify(module: str, name: Optional[str], star: bool, frameworks: set[str], others: list[list]) -> None:
    """Sort an absolute import of `module` (`name` from it, None for `import module` and a star
    import) into `frameworks` or `others`."""
    parts = module.split(".")
    root = parts[0]
    if _data_only(f"{module}.{name}" if name else module):  # `from torchvision import transforms` too
        return
    if root in TORCH_LIBRARIES or any(part.startswith(("torch", "pytorch")) for part in parts):
        frameworks.add("torch")
    elif root in OTHER_FRAMEWORKS:
        frameworks.add(root)
    elif root not in sys.stdlib_module_names:
        others.append([module, name, 0, star])


def _data_only(module: str) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in DATA_ONLY_TORCH_MODULES)


def _unique(entries: list[list]) -> list[list]:
    seen: set[tuple] = set()
    found = []
    for entry in entries:
        if tuple(entry) not in seen:
            seen.add(tuple(entry))
            found.append(entry)
    return found
