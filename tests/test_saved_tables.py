"""The tables of what autograd keeps for backward (`tables.KEEPS_*`, which ML004 reads) agree with
PyTorch itself: each op is run on a tensor that requires grad and its `grad_fn._saved_*` tensors
are compared with its input and output storage."""

from __future__ import annotations

import pytest

from memlint.analysis import tables

torch = pytest.importorskip("torch")
nn, F = torch.nn, torch.nn.functional


def _vector():
    return torch.randn(4, 16)


def _image():
    return torch.randn(2, 4, 8, 8)


# table name -> (make the input, run the op on it)
OPS = {
    # layers
    "ReLU": (_vector, lambda x: nn.ReLU()(x)),
    "Sigmoid": (_vector, lambda x: nn.Sigmoid()(x)),
    "Tanh": (_vector, lambda x: nn.Tanh()(x)),
    "Softmax": (_vector, lambda x: nn.Softmax(-1)(x)),
    "LogSoftmax": (_vector, lambda x: nn.LogSoftmax(-1)(x)),
    "Dropout": (_vector, lambda x: nn.Dropout(0.5)(x)),
    "Dropout1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.Dropout1d(0.5)(x)),
    "Dropout2d": (_image, lambda x: nn.Dropout2d(0.5)(x)),
    "Dropout3d": (lambda: torch.randn(2, 4, 3, 3, 3), lambda x: nn.Dropout3d(0.5)(x)),
    "GELU": (_vector, lambda x: nn.GELU()(x)),
    "SiLU": (_vector, lambda x: nn.SiLU()(x)),
    "LeakyReLU": (_vector, lambda x: nn.LeakyReLU()(x)),
    "ELU": (_vector, lambda x: nn.ELU()(x)),
    "SELU": (_vector, lambda x: nn.SELU()(x)),
    "ReLU6": (_vector, lambda x: nn.ReLU6()(x)),
    "Hardtanh": (_vector, lambda x: nn.Hardtanh()(x)),
    "Hardswish": (_vector, lambda x: nn.Hardswish()(x)),
    "Mish": (_vector, lambda x: nn.Mish()(x)),
    "Softplus": (_vector, lambda x: nn.Softplus()(x)),
    "Linear": (_vector, lambda x: nn.Linear(16, 8)(x)),
    "LazyLinear": (_vector, lambda x: nn.LazyLinear(8)(x)),
    "Conv1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.Conv1d(4, 4, 3)(x)),
    "Conv2d": (_image, lambda x: nn.Conv2d(4, 4, 3)(x)),
    "Conv3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.Conv3d(4, 4, 3)(x)),
    "ConvTranspose1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.ConvTranspose1d(4, 4, 3)(x)),
    "ConvTranspose2d": (_image, lambda x: nn.ConvTranspose2d(4, 4, 3)(x)),
    "ConvTranspose3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.ConvTranspose3d(4, 4, 3)(x)),
    "LazyConv1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.LazyConv1d(4, 3)(x)),
    "LazyConv2d": (_image, lambda x: nn.LazyConv2d(4, 3)(x)),
    "LazyConv3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.LazyConv3d(4, 3)(x)),
    "BatchNorm1d": (_vector, lambda x: nn.BatchNorm1d(16)(x)),
    "BatchNorm2d": (_image, lambda x: nn.BatchNorm2d(4)(x)),
    "BatchNorm3d": (lambda: torch.randn(2, 4, 3, 3, 3), lambda x: nn.BatchNorm3d(4)(x)),
    "SyncBatchNorm": None,  # needs a process group; the same kernels as BatchNorm on one device
    "GroupNorm": (_image, lambda x: nn.GroupNorm(2, 4)(x)),
    "LayerNorm": (_vector, lambda x: nn.LayerNorm(16)(x)),
    "InstanceNorm1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.InstanceNorm1d(4)(x)),
    "InstanceNorm2d": (_image, lambda x: nn.InstanceNorm2d(4)(x)),
    "InstanceNorm3d": (lambda: torch.randn(2, 4, 3, 3, 3), lambda x: nn.InstanceNorm3d(4)(x)),
    "Embedding": None,  # its input is indices, which never require grad
    "MaxPool1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.MaxPool1d(2)(x)),
    "MaxPool2d": (_image, lambda x: nn.MaxPool2d(2)(x)),
    "MaxPool3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.MaxPool3d(2)(x)),
    "AvgPool1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.AvgPool1d(2)(x)),
    "AvgPool2d": (_image, lambda x: nn.AvgPool2d(2)(x)),
    "AvgPool3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.AvgPool3d(2)(x)),
    "AdaptiveAvgPool1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.AdaptiveAvgPool1d(3)(x)),
    "AdaptiveAvgPool2d": (_image, lambda x: nn.AdaptiveAvgPool2d(3)(x)),
    "AdaptiveAvgPool3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.AdaptiveAvgPool3d(3)(x)),
    "AdaptiveMaxPool1d": (lambda: torch.randn(2, 4, 8), lambda x: nn.AdaptiveMaxPool1d(3)(x)),
    "AdaptiveMaxPool2d": (_image, lambda x: nn.AdaptiveMaxPool2d(3)(x)),
    "AdaptiveMaxPool3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: nn.AdaptiveMaxPool3d(3)(x)),
    # functions (torch.X, torch.nn.functional.X, Tensor.X)
    "relu": (_vector, F.relu),
    "sigmoid": (_vector, torch.sigmoid),
    "tanh": (_vector, torch.tanh),
    "softmax": (_vector, lambda x: F.softmax(x, -1)),
    "log_softmax": (_vector, lambda x: F.log_softmax(x, -1)),
    "exp": (_vector, torch.exp),
    "dropout": (_vector, lambda x: F.dropout(x, 0.5, True)),
    "dropout1d": (lambda: torch.randn(2, 4, 8), lambda x: F.dropout1d(x, 0.5, True)),
    "dropout2d": (_image, lambda x: F.dropout2d(x, 0.5, True)),
    "dropout3d": (lambda: torch.randn(2, 4, 3, 3, 3), lambda x: F.dropout3d(x, 0.5, True)),
    "add": (_vector, lambda x: x + torch.randn(4, 16)),
    "scale": (_vector, lambda x: x * 0.5),
    "linear": (_vector, lambda x: F.linear(x, torch.randn(8, 16))),
    "conv1d": (lambda: torch.randn(2, 4, 8), lambda x: F.conv1d(x, torch.randn(4, 4, 3))),
    "conv2d": (_image, lambda x: F.conv2d(x, torch.randn(4, 4, 3, 3))),
    "conv3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: F.conv3d(x, torch.randn(4, 4, 3, 3, 3))),
    "layer_norm": (_vector, lambda x: F.layer_norm(x, (16,))),
    "batch_norm": (_vector, lambda x: F.batch_norm(x, None, None, training=True)),
    "group_norm": (_image, lambda x: F.group_norm(x, 2)),
    "instance_norm": (_image, lambda x: F.instance_norm(x)),
    "gelu": (_vector, F.gelu),
    "silu": (_vector, F.silu),
    "leaky_relu": (_vector, F.leaky_relu),
    "elu": (_vector, F.elu),
    "selu": (_vector, F.selu),
    "relu6": (_vector, F.relu6),
    "hardtanh": (_vector, F.hardtanh),
    "hardswish": (_vector, F.hardswish),
    "mish": (_vector, F.mish),
    "softplus": (_vector, F.softplus),
    "max_pool1d": (lambda: torch.randn(2, 4, 8), lambda x: F.max_pool1d(x, 2)),
    "max_pool2d": (_image, lambda x: F.max_pool2d(x, 2)),
    "max_pool3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: F.max_pool3d(x, 2)),
    "avg_pool1d": (lambda: torch.randn(2, 4, 8), lambda x: F.avg_pool1d(x, 2)),
    "avg_pool2d": (_image, lambda x: F.avg_pool2d(x, 2)),
    "avg_pool3d": (lambda: torch.randn(2, 4, 4, 4, 4), lambda x: F.avg_pool3d(x, 2)),
    "matmul": (_vector, lambda x: torch.matmul(x, torch.randn(16, 8))),
    "mm": (_vector, lambda x: torch.mm(x, torch.randn(16, 8))),
    "bmm": (lambda: torch.randn(2, 4, 16), lambda x: torch.bmm(x, torch.randn(2, 16, 8))),
    "sqrt": (lambda: torch.rand(4, 16) + 1, torch.sqrt),
    "rsqrt": (lambda: torch.rand(4, 16) + 1, torch.rsqrt),
    "sum": (_vector, lambda x: torch.sum(x, -1)),
    "mean": (_vector, lambda x: x.mean(-1)),
    "cumsum": (_vector, lambda x: torch.cumsum(x, 1)),
    "cat": (_vector, lambda x: torch.cat([x, torch.randn(4, 16)])),
    "pow": (_vector, lambda x: x.pow(2)),
    "square": (_vector, torch.square),
    "clamp": (_vector, lambda x: torch.clamp(x, min=0.1)),
    "abs": (_vector, torch.abs),
    "log": (lambda: torch.rand(4, 16) + 1, torch.log),
    "log1p": (lambda: torch.rand(4, 16) + 1, torch.log1p),
    "expm1": (_vector, torch.expm1),
    "reciprocal": (lambda: torch.rand(4, 16) + 1, torch.reciprocal),
    "sin": (_vector, torch.sin),
    "cos": (_vector, torch.cos),
    "tan": (_vector, torch.tan),
    "erf": (_vector, torch.erf),
    "sub": (_vector, lambda x: torch.sub(x, torch.randn(4, 16))),
    "neg": (_vector, torch.neg),
    # `x * y` between tensors: with `y` requiring grad, `x` is kept for `y`'s gradient (and `y` for `x`'s)
    "product": (_vector, lambda x: x * torch.randn(4, 16, requires_grad=True)),
}


def _kept(make, run) -> tuple[bool, bool]:
    """(input kept, output kept) by the op's backward node, compared by storage."""
    torch.manual_seed(0)
    base = make().requires_grad_()
    x = base * 1.0  # an intermediate, as in a forward
    y = run(x)
    storages = set()
    node = y.grad_fn
    for attribute in dir(node):
        if attribute.startswith("_saved_"):
            value = getattr(node, attribute)
            for tensor in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(tensor, torch.Tensor):
                    storages.add(tensor.untyped_storage().data_ptr())
    return x.untyped_storage().data_ptr() in storages, y.untyped_storage().data_ptr() in storages


def test_every_table_name_has_a_measurement():
    named = tables.KEEPS_OUTPUT_ONLY | tables.KEEPS_NEITHER | tables.KEEPS_INPUT_ONLY
    assert named == set(OPS)
    assert not (tables.KEEPS_OUTPUT_ONLY & tables.KEEPS_NEITHER)
    assert not (tables.KEEPS_INPUT_ONLY & (tables.KEEPS_OUTPUT_ONLY | tables.KEEPS_NEITHER))


@pytest.mark.parametrize("name", sorted(name for name, op in OPS.items() if op is not None))
def test_table_agrees_with_autograd(name: str):
    kept_input, kept_output = _kept(*OPS[name])
    if name in tables.KEEPS_OUTPUT_ONLY:
        assert (kept_input, kept_output) == (False, True)
    elif name in tables.KEEPS_NEITHER:
        assert (kept_input, kept_output) == (False, False)
    else:  # KEEPS_INPUT_ONLY: what matters is that the output is not kept; most keep their input
        assert not kept_output


# The ops `tables.FRESH_RESULT_FUNCTIONS` adds to those of the KEEPS_* tables (each keeps some of its
# operands or none): name -> run it on `x`, an intermediate that requires grad.
FRESH_ONLY = {
    "addcmul": lambda x: torch.addcmul(torch.randn(4, 16), x, torch.randn(4, 16)),
    "addcdiv": lambda x: torch.addcdiv(torch.randn(4, 16), x, torch.rand(4, 16) + 1),
    "addmm": lambda x: torch.addmm(torch.randn(4, 8), x, torch.randn(16, 8)),
    "addmv": lambda x: torch.addmv(torch.randn(4), x, torch.randn(16)),
    "addr": lambda x: torch.addr(torch.randn(16, 16), x[0], x[1]),
    "addbmm": lambda x: torch.addbmm(torch.randn(2, 8), x.view(2, 2, 16), torch.randn(2, 16, 8)),
    "baddbmm": lambda x: torch.baddbmm(torch.randn(2, 2, 8), x.view(2, 2, 16), torch.randn(2, 16, 8)),
    "mul": lambda x: torch.mul(x, torch.randn(4, 16)),
    "div": lambda x: torch.div(x, torch.rand(4, 16) + 1),
    "einsum": lambda x: torch.einsum("ij,jk->ik", x, torch.randn(16, 8)),
    "lerp": lambda x: torch.lerp(x, torch.randn(4, 16), torch.rand(4, 16)),
    "where": lambda x: torch.where(x > 0, x, torch.randn(4, 16)),
    "stack": lambda x: torch.stack([x, torch.randn(4, 16)]),
    "conv_transpose1d": lambda x: F.conv_transpose1d(x.view(2, 2, 16), torch.randn(2, 3, 3)),
    "conv_transpose2d": lambda x: F.conv_transpose2d(x.view(1, 4, 4, 4), torch.randn(4, 3, 3, 3)),
    "conv_transpose3d": lambda x: F.conv_transpose3d(x.view(1, 4, 2, 2, 4), torch.randn(4, 3, 3, 3, 3)),
    "bilinear": lambda x: F.bilinear(x, torch.randn(4, 16), torch.randn(8, 16, 16)),
    "embedding": lambda x: F.embedding(torch.tensor([1, 3, 1]), x),
    "interpolate": lambda x: F.interpolate(x.view(1, 4, 16), scale_factor=1),
    "pad": lambda x: F.pad(x, (0, 0)),
    "normalize": lambda x: F.normalize(x),
    "adaptive_avg_pool1d": lambda x: F.adaptive_avg_pool1d(x.view(1, 4, 16), 4),
    "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x.view(1, 4, 4, 4), 2),
    "adaptive_avg_pool3d": lambda x: F.adaptive_avg_pool3d(x.view(1, 4, 2, 2, 4), 1),
}


def test_every_fresh_only_name_has_a_measurement():
    assert set(FRESH_ONLY) == tables.FRESH_RESULT_FUNCTIONS - set(OPS)


@pytest.mark.parametrize("name", sorted(FRESH_ONLY))
def test_fresh_result_is_new_and_not_kept(name: str):
    """A new tensor (no storage of its operand's) that its backward does not keep, and on which an
    in-place activation gives the gradients the out-of-place one does (ML003's fresh values)."""
    run = FRESH_ONLY[name]
    grads = []
    for inplace in (False, True):
        torch.manual_seed(0)
        base = torch.randn(4, 16, requires_grad=True)
        x = base * 1.0
        y = run(x)
        assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        assert not _kept(lambda: base.detach().clone(), run)[1]
        F.silu(y, inplace=inplace).sum().backward()
        grads.append(base.grad)
    assert torch.allclose(*grads)
