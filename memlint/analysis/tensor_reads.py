"""Evidence that a name holds a tensor, from how its code reads it.

`t.to(other)` means three different things by what `other` is: a device (`t` moves), a dtype (`t`
is cast where it is) or a tensor (`t` takes that tensor's device and dtype).  A name alone does not
say which; the reads of it do.  A function that takes `x.shape`, `x.size(0)`, `x.device` or
`x.dim()` holds a tensor in `x` (an array has a shape too, but `t.to(array)` fails, so code that
runs does not pass one): a dtype or a device has none of those attributes.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.walk import code_descendants

# Attributes a tensor has and a dtype, a device or a string has not.
_TENSOR_ATTRIBUTES = frozenset({"shape", "device", "ndim", "is_cuda", "size", "dim", "numel"})


def read_as_tensor(name: str, scope: cst.CSTNode) -> bool:
    """Does code in `scope` (a function, or the module) read `name.shape`, `name.size(...)`,
    `name.device`, `name.dim()` or another attribute only a tensor has?"""
    for node in code_descendants(scope):
        if (
            type(node) is cst.Attribute
            and type(node.value) is cst.Name
            and node.value.value == name  # type: ignore[attr-defined]
            and node.attr.value in _TENSOR_ATTRIBUTES
        ):
            return True
    return False
