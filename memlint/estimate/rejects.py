"""Operators a real kernel rejects that fake kernels accept, checked on tiny real tensors.

Fake (and meta) kernels compute output shapes and dtypes; many do not repeat the real kernel's
checks. An `nn.Linear` fed int64 token ids gets an estimate on fake tensors, where the real step
raises "mat1 and mat2 must have the same dtype, but got Long and Float". For the operators whose
CPU kernels require their tensor arguments to share one dtype (matrix products, convolutions),
a call whose tensors do not is run again on real one-element-per-dimension zeros of the same
dtypes: if the real kernel raises, the simulation fails with its message. Calls whose dtypes agree
(nearly all) cost one set comparison.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "Failed to initialize NumPy" when numpy is absent
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

_aten = torch.ops.aten
SAME_DTYPE = {
    _aten.mm.default, _aten.addmm.default, _aten.bmm.default, _aten.baddbmm.default, _aten.addbmm.default,
    _aten.mv.default, _aten.addmv.default, _aten.dot.default, _aten.convolution.default,
}  # fmt: skip


def _tiny(value):
    if isinstance(value, torch.Tensor):
        return torch.zeros((1,) * value.dim(), dtype=value.dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_tiny(v) for v in value)
    if isinstance(value, dict):
        return {k: _tiny(v) for k, v in value.items()}
    return value


class RealDtypeChecks(TorchDispatchMode):
    """Raises what the real CPU kernel raises for mixed dtypes (see the module docstring)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in SAME_DTYPE:
            dtypes = {a.dtype for a in args if isinstance(a, torch.Tensor)}
            if len(dtypes) > 1:
                with _disable_current_modes():
                    func(*_tiny(list(args)), **_tiny(kwargs))  # raises the real kernel's error
        return func(*args, **kwargs)
