"""A source text as the prescreen sees it: its identifiers, and CPython's AST of it."""

from __future__ import annotations

import ast
import re
import unicodedata
from functools import cached_property
from typing import Any, Callable, Hashable, Iterable, Iterator, Optional

from memlint.analysis.ast_nodes import CHILD_FIELDS, child_fields, child_nodes, subtree  # noqa: F401  (re-exported for the screens)
from memlint.analysis.tables import LIBRARY_SUBCLASS_NAMES
from memlint.pipeline.source import ast_or_error

# Words that can be identifiers; found in code, strings and comments alike, which only ever
# makes a check answer "maybe" more often.
_WORD = re.compile(r"[^\W\d]\w*")


class Source:
    def __init__(self, text: str) -> None:
        self.text = text
        self._memo: dict[Hashable, Any] = {}
        # What the project pass knows about this file (memlint.pipeline.project.FileView), set by the engine
        # before the screens run: a screen whose rule follows project facts must follow them too.
        self.project: Any = None

    @cached_property
    def identifiers(self) -> frozenset[str]:
        return frozenset(_WORD.findall(self.text))

    def mentions(self, *words: str) -> bool:
        """Does any of `words` occur as an identifier-like word anywhere in the text?"""
        return not self.identifiers.isdisjoint(words)

    @cached_property
    def tree(self) -> Optional[ast.Module]:
        """CPython's AST, or None when CPython cannot compile the text (a syntax error, code nested
        too deeply, syntax newer than this interpreter): the full analysis then decides and reports."""
        return self._compiled[0]

    @cached_property
    def _compiled(self) -> tuple[Optional[ast.Module], Optional[BaseException]]:
        return ast_or_error(self.text, "<prescreen>")

    @property
    def compile_error(self) -> Optional[BaseException]:
        """What compiling the text to CPython's AST raised (`tree` is None then), else None."""
        return self._compiled[1]

    @cached_property
    def structure_is_reliable(self) -> bool:
        """CPython normalises identifiers (NFKC) where libcst keeps them as written; a text whose
        words change under normalisation is left to the full analysis instead of the AST checks."""
        return self.tree is not None and all(
            word.isascii() or unicodedata.normalize("NFKC", word) == word for word in self.identifiers
        )

    @cached_property
    def _index(self) -> tuple[dict[type, list[ast.AST]], dict[int, ast.AST]]:
        """Every node by type, and every node's parent (by id), from one walk of the tree."""
        by_type: dict[type, list[ast.AST]] = {}
        parents: dict[int, ast.AST] = {}
        stack: list[ast.AST] = [self.tree]  # type: ignore[list-item]
        # (every file the project pass reads is indexed: the walk's lookups are bound to locals)
        pop, push, of_type, known_fields, node_class = stack.pop, stack.append, by_type.get, CHILD_FIELDS.get, ast.AST
        while stack:
            node = pop()
            kind = type(node)
            found = of_type(kind)
            if found is None:
                found = by_type[kind] = []
            found.append(node)
            fields = known_fields(kind)
            if fields is None:
                fields = child_fields(kind)
            for field in fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, node_class):
                            parents[id(item)] = node
                            push(item)
                elif value is not None and isinstance(value, node_class):
                    parents[id(value)] = node
                    push(value)
        return by_type, parents

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """A whole-file fact computed once, on first request, for every check that asks; the key
        names the fact and every input of it that is not the file itself."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def nodes(self, *types: type) -> Iterator[ast.AST]:
        by_type = self._index[0]
        for kind in types:
            yield from by_type.get(kind, ())

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """The nodes enclosing `node`, innermost first."""
        parents = self._index[1]
        current = parents.get(id(node))
        while current is not None:
            yield current
            current = parents.get(id(current))

    @cached_property
    def _aliases(self) -> dict[str, set[str]]:
        """original name -> local names bound to it by `import ... as`, `from ... import ... as` and
        `local = dotted.name` (the bindings the analysis resolves qualified names through)."""
        aliases: dict[str, set[str]] = {}
        for node in self.nodes(ast.Import, ast.ImportFrom):
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.asname:
                    aliases.setdefault(alias.name.rpartition(".")[2], set()).add(alias.asname)
        for node in self.nodes(ast.Assign):
            original = final_name(node.value)  # type: ignore[attr-defined]
            if original is not None:
                for target in node.targets:  # type: ignore[attr-defined]
                    if isinstance(target, ast.Name):
                        aliases.setdefault(original, set()).add(target.id)
        return aliases

    def names_for(self, originals: Iterable[str]) -> set[str]:
        """The names under which any of `originals` may be called here (themselves and aliases; a torch
        class's well-known library subclasses too, `MetaSequential` for "Sequential", as
        `inventory.torch_nn_name` takes them for it)."""
        found = set(originals)
        for original in originals:
            found |= LIBRARY_SUBCLASS_NAMES.get(original, frozenset())
        pending = list(found)
        while pending:
            for local in self._aliases.get(pending.pop(), ()):
                if local not in found:
                    found.add(local)
                    pending.append(local)
        return found


def final_name(expr: ast.AST) -> Optional[str]:
    """`nn.functional.relu` -> "relu", `relu` -> "relu"; anything else -> None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def root_name(expr: ast.AST) -> Optional[str]:
    """`torch.nn.functional.relu` -> "torch"; None when the chain does not start with a name."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def words_in(node: ast.AST) -> Iterator[str]:
    """Every string held by the subtree: names, attributes, keywords, string constants."""
    for inner in subtree(node):
        for value in inner.__dict__.values():
            if isinstance(value, str):
                yield value


# The small questions several screens ask of CPython's AST.
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def argument_count(call: ast.Call) -> int:
    return len(call.args) + len(call.keywords)


def is_self_attribute(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"


def self_attribute(expr: ast.AST) -> Optional[str]:
    """`self.fc` -> "fc"; anything else -> None."""
    return expr.attr if is_self_attribute(expr) else None  # type: ignore[attr-defined]
