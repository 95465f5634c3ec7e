"""Where running under a dispatch mode changes what the kernels allocate, and how the simulation
counts what an eager run (no mode) allocates instead.

ATen's composite operators ask `isTensorSubclassLike`, which is true for every tensor while any
Python dispatch mode is active (the fake mode and the storage tracker are such modes), and then
pick out-of-place operators so that subclasses see functional code. Most of those branches are in
double-backward formulas; the one a training step meets is `aten::linear` on an input that is not
a contiguous 3-D tensor (a transposed sequence, a 4-D activation): eager runs
`matmul(input, weight.t())` and adds the bias in place (`output.add_(bias)`), while under a mode it
adds it out of place (`at::add`), which allocates a second output-sized tensor. On
`Linear(256, 1024)` over `x.transpose(0, 1)` (64x64x256) that put 16 MiB into the estimate that a
real step never allocates (+57.7%).

`EagerLinear` (a TorchFunctionMode) notes each `F.linear` call that takes that path; the storage
tracker then asks `in_place_of` about every operator, and for the bias `add` inside such a call
counts the result as the matmul output written in place: the same bytes, living as long as the
result. The values computed are the same either way.
"""

from __future__ import annotations

import os
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "Failed to initialize NumPy" when numpy is absent
    import torch
    from torch.overrides import TorchFunctionMode

_ADD = torch.ops.aten.add.Tensor
_LINEAR = torch._C._nn.linear  # what torch.nn.functional.linear is


def adds_bias_in_place(input, weight, bias) -> bool:
    """Whether eager `aten::linear` (aten/src/ATen/native/Linear.cpp) runs matmul then `add_`:
    a bias, and neither the 2-D `addmm` path nor the flattened one for contiguous inputs."""
    if bias is None or input.dim() == 2 or input.is_mkldnn:
        return False
    contiguous = input.is_contiguous()
    if contiguous and (input.dim() == 3 or (input.layout == torch.strided and weight.layout == torch.strided and bias.dim() == 1)):
        return False
    if input.dim() == 3 and os.environ.get("TORCH_LINEAR_FLATTEN_3D", "") in ("1", "ON", "TRUE", "YES"):
        return False  # torch flattens a copy of the input instead (parseLinearFlatten3d)
    return True


class EagerLinear(TorchFunctionMode):
    """Marks the `F.linear` calls whose bias an eager run adds in place (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: list[bool] = []  # per F.linear call on the matmul path now running: bias not added yet

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is _LINEAR:
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            if adds_bias_in_place(args[0], args[1] if len(args) > 1 else kwargs["weight"], bias):
                self._waiting.append(True)
                try:
                    return func(*args, **kwargs)
                finally:
                    self._waiting.pop()
        return func(*args, **kwargs)

    def in_place_of(self, func, args, out):
        """The input whose storage an eager run would have written `out` into, or None."""
        if self._waiting and self._waiting[-1] and func is _ADD and isinstance(args[0], torch.Tensor) and isinstance(out, torch.Tensor):
            first = args[0]
            if first.dtype == out.dtype and first.untyped_storage().nbytes() == out.untyped_storage().nbytes():
                self._waiting[-1] = False  # matmul adds nothing: the call's one add is the bias
                return first
        return None
