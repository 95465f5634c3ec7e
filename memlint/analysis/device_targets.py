"""Where a move sends a tensor, when it is recognisably an accelerator: `.cuda()`, `.to("cuda")`,
`.to(device)` / `.to(self.device)` / `.to(x.device)` / `.to(torch.device(...))` / a rank, a project
helper's move (`async_copy_to(x, gpu)`), `.to(x)` with a tensor `x`; and what `device=` given to the
factory instead would mean.  Evidence: the move's arguments as written (a device literal, a name or
attribute named like a device), the code's reads of `x` as a tensor (`tensor_reads`), the model's
device facts (a file that names no accelerator; a batch the loader left on the host)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.model import follows_device
from memlint.analysis.placement import batch_left_on_host
from memlint.analysis.precision_api import keyword
from memlint.analysis.tensor_casts import cuda_type_cast
from memlint.analysis.tensor_reads import read_as_tensor

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_DEVICE_NAME = re.compile(r"(?:^|_)(?:device|dev|gpu|gpu_id|rank|local_rank)$|device$", re.I)


def destination(
    move: cst.Call, helper: Optional[tuple], type_as: Optional[cst.BaseExpression], ctx: "Context"
) -> Optional[tuple[cst.BaseExpression, bool]]:
    """(device, whether `device=` alone gives the factory what the move gives it) for `move`: a cast to
    an accelerator's legacy type (`cuda_type_cast`: the current GPU, and its dtype too); `t.type_as(x)`
    (`type_as`, when `move` is that cast: `x`'s device and dtype); a project helper's move (`helper`,
    `project_facts.moved_argument`: `helper_device`); `.cuda()` / `.to(d)` (`target_device`), or
    `.to(x)` with a tensor `x` (`tensor_target`: `x`'s device and dtype).  None when the target is
    not recognisably a device."""
    if cuda_type_cast(move, ctx):
        return cst.SimpleString('"cuda"'), False
    moves = isinstance(move.func, cst.Attribute) and move.func.attr.value in ("cuda", "to")
    if type_as is not None and helper is None and not moves:
        return cst.Attribute(value=type_as, attr=cst.Name("device")), False
    device = target_device(move) if helper is None else helper_device(helper)
    if device is None and helper is None and (tensor := tensor_target(move, ctx)) is not None:
        return cst.Attribute(value=tensor, attr=cst.Name("device")), False
    return (device, True) if device is not None else None


def target_device(move: cst.Call) -> Optional[cst.BaseExpression]:
    """The device a `.cuda()` / `.to(...)` call moves to, when it is recognisably a device."""
    method = move.func.attr.value  # type: ignore[attr-defined]
    positional = [a for a in move.args if a.keyword is None and not a.star]
    named = _keyword_value(move, "device")
    if method == "cuda":
        given = named if named is not None else positional[0].value if positional else None
        if isinstance(given, cst.Integer):
            return cst.SimpleString(f'"cuda:{given.evaluated_value}"')  # `device=1` would be the current accelerator's
        return given if given is not None else cst.SimpleString('"cuda"')
    candidate = named if named is not None else (positional[0].value if positional else None)
    if candidate is None:
        return None
    return candidate if is_device(candidate) else None


def helper_device(helper: tuple[cst.BaseExpression, str, Optional[cst.BaseExpression]]) -> Optional[cst.BaseExpression]:
    """The device a project helper's move sends its argument to (`project_facts.moved_argument`):
    `.cuda(...)` an accelerator whatever it is given (`async_copy_to(x, gpu)`: GPU `gpu`), `.to(d)`
    the argument given as `d`, when recognisably a device."""
    _, method, given = helper
    if method == "cuda":
        return given if given is not None else cst.SimpleString('"cuda"')
    return given if given is not None and is_device(given) else None


def _keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    arg = keyword(call, name)
    return arg.value if arg is not None else None


def is_device(expr: cst.BaseExpression) -> bool:
    """A device literal (`"cuda:0"`, `"mps"`), a name or attribute named like a device or a rank
    (`device`, `self.device`, `x.device`, `gpu`, `local_rank`), or `torch.device(...)`."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return isinstance(value, str) and value.split(":")[0] in ("cuda", "mps", "xpu")
    if isinstance(expr, cst.Name):
        return bool(_DEVICE_NAME.search(expr.value))
    if isinstance(expr, cst.Attribute):
        return bool(_DEVICE_NAME.search(expr.attr.value))
    if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
        func = expr.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value
        return name == "device"
    return False


def cuda_target_certain(move: cst.Call) -> bool:
    """Does `device=` name the device `.cuda(...)` moves to, whatever the program's values?  `.cuda()`
    and `device="cuda"` both mean the current GPU, and an index or a "cuda..." literal means the same
    in both; but `.cuda(None)` is the current GPU where `device=None` is the default device (the
    CPU), and `.cuda(d)` refuses a device that is not a GPU, which `device=d` accepts.  `.to(d)` and
    `device=d` agree for every device, None included (both keep the default device)."""
    if move.func.attr.value != "cuda":  # type: ignore[attr-defined]
        return True
    given = [a.value for a in move.args if a.keyword is None or a.keyword.value == "device"]
    if not given:
        return True
    value = given[0]
    if isinstance(value, cst.Integer):
        return True
    if isinstance(value, cst.SimpleString):
        text = value.evaluated_value
        return isinstance(text, str) and text.split(":")[0] == "cuda"
    return False


def move_is_only_device(move: cst.Call) -> bool:
    """`.to(device)`, `.to(device=device)`, `.cuda()`, optionally with `non_blocking=`."""
    others = [a for a in move.args if a.keyword is None or a.keyword.value not in ("device", "non_blocking")]
    positional = [a for a in others if a.keyword is None]
    return len(positional) <= 1 and len(others) == len(positional) and not any(a.star for a in move.args)


def tensor_target(move: cst.Call, ctx: "Context") -> Optional[cst.Name]:
    """`x` of `t.to(x)` where the code reads `x` as a tensor (`tensor_reads.read_as_tensor`:
    `b, *_ = x.shape`): `t` goes to `x`'s device, not just to `x`'s dtype."""
    if move.func.attr.value != "to" or len(move.args) != 1:  # type: ignore[attr-defined]
        return None
    arg = move.args[0]
    if arg.keyword is not None or arg.star or type(arg.value) is not cst.Name:
        return None
    scope = ctx.function_node or ctx.module
    return arg.value if read_as_tensor(arg.value.value, scope) else None


def moves_nothing(device: cst.BaseExpression, ctx: "Context") -> bool:
    """`.to(x.device)` in a file that names no accelerator anywhere (the model's device fact): a
    CPU-only script, where following another tensor's device moves nothing."""
    return not ctx.model.device.explicit and follows_device(device)


def moves_nothing_in_project(device: cst.BaseExpression, ctx: "Context") -> bool:
    """`moves_nothing` for a helper of a CPU-only program: this file names no accelerator and no
    file of the project imports it, or none of those that do (transitively) names one
    (`FileView.imported_names`, `host_importers`)."""
    project = ctx.project
    return (not project.imported_names or project.host_importers) and moves_nothing(device, ctx)


def follows_host_batch(device: cst.BaseExpression, move: cst.Call, ctx: "Context") -> bool:
    """`.to(y.device)` where `y` is a batch the loader yielded on the host and the loop has not
    moved yet (placement.batch_left_on_host): nothing moves."""
    if type(device) is not cst.Attribute or device.attr.value != "device" or type(device.value) is not cst.Name:
        return False
    return not ctx.model.device.launched and batch_left_on_host(device.value.value, ctx.loop, move)
