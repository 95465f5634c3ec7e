"""Memory that fake kernels do not show, measured on the real kernel where that is cheap.

A fake tensor's kernel gives every output its true size, which is why the simulation is exact for
almost every operator. One exception matters in practice: `nn.LSTM` on CPU runs oneDNN
(`aten.mkldnn_rnn_layer`), whose fake kernel returns an empty workspace where the real one keeps
every time step's gates for the backward pass (16 MB for one layer of 512 units over 64 steps of a
batch of 8), and whose forward and backward also allocate scratch that they free before returning.
Neither can be computed from the shapes without reproducing oneDNN's layout rules, so they are
measured: the real kernel runs once, on zeros of the same shapes, under torch.profiler's allocation
events. When the full shapes would cost more than `PROBE_BYTES`, it runs on fewer time steps and the
sizes, which grow linearly with the time steps, are extrapolated.

Convolutions (`aten.convolution` and its backward) have the same blind spot for a simpler reason:
oneDNN computes into a buffer of its own layout and reorders into the output, scratch about the size
of the output in the forward (4 MiB for a 64x64 map of 128 channels over a batch of 2) and of the
input and output in the backward. Where a step's peak falls inside a convolution (a frozen
backbone: no backward through it, so the peak is in its forward) it is missing from a count of
tensors. It is measured the same way, per distinct call (shapes, strides, dtype, arguments): on
zeros, under the profiler; over `PROBE_BYTES`, on two smaller batches, extrapolated (the scratch
grows linearly with the batch from a batch of 2; a batch of 1 can take another kernel).

Everything here imports torch; `memlint.estimate.simulate` uses it only for fake-tensor runs.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass, replace
from typing import Optional

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "Failed to initialize NumPy" when numpy is absent
    import torch
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils._python_dispatch import _disable_current_modes

PROBE_BYTES = 64 * 2**20  # the most a probe at the real shapes may allocate
WEIGHT_LIMIT = 256 * 2**20  # larger layers are not probed at all (stated in the output)
_FORWARD = torch.ops.aten.mkldnn_rnn_layer.default
_BACKWARD = torch.ops.aten.mkldnn_rnn_layer_backward.default
_CONVOLUTION = torch.ops.aten.convolution.default
_CONVOLUTION_BACKWARD = torch.ops.aten.convolution_backward.default
# operator -> (its name in the profiler, what to call it in the output, positions of its batched tensor arguments)
_PROBED = {
    _CONVOLUTION: ("aten::convolution", "the forward of a convolution", (0,)),
    _CONVOLUTION_BACKWARD: ("aten::convolution_backward", "the backward of a convolution", (0, 1)),
}


@dataclass(frozen=True)
class _Layer:
    """What oneDNN's sizes depend on: one layer and direction of an LSTM call."""

    input_shape: tuple  # (time, batch, features), or (batch, time, features)
    time_dim: int
    weights: tuple  # shapes of weight0..weight3
    hidden: tuple  # shape of hx_
    dtype: torch.dtype  # of the input and the states
    weight_dtypes: tuple
    flags: tuple  # reverse, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train
    # memory layouts (dimensions by decreasing stride) of the input and of the output's gradient:
    # a transposed one (batch_first) is copied inside the kernel, which is scratch too
    input_order: tuple = (0, 1, 2)
    grad_order: tuple = (0, 1, 2)

    def with_time(self, steps: int) -> "_Layer":
        shape = list(self.input_shape)
        shape[self.time_dim] = steps
        return replace(self, input_shape=tuple(shape))

    @property
    def steps(self) -> int:
        return self.input_shape[self.time_dim]

    def cost(self, steps: int) -> int:
        """A generous bound of what a probe over `steps` time steps allocates."""
        batch, features = self.hidden[0], self.input_shape[-1]
        size = self.hidden[-1]
        return torch.finfo(self.dtype).bits // 8 * steps * batch * (features + 24 * size) + self.weight_bytes

    @property
    def weight_bytes(self) -> int:
        return sum(torch.finfo(d).bits // 8 * torch.Size(s).numel() for s, d in zip(self.weights, self.weight_dtypes))


def _order(tensor) -> tuple:
    if tensor is None:
        return (0, 1, 2)
    return tuple(sorted(range(tensor.dim()), key=lambda d: (-tensor.stride(d), d)))


def _zeros(shape: tuple, order: tuple, dtype) -> torch.Tensor:
    """Zeros of `shape` laid out in memory with the dimensions in `order` (outermost first)."""
    if len(order) != len(shape):
        return torch.zeros(shape, dtype=dtype)
    inverse = sorted(range(len(order)), key=lambda d: order[d])
    return torch.zeros([shape[d] for d in order], dtype=dtype).permute(inverse)


def _layer(input, weights, hx, flags, grad_output=None) -> _Layer:
    batch = hx.shape[0]
    time_dim = 0 if input.dim() == 3 and input.shape[1] == batch else 1
    return _Layer(
        tuple(input.shape), time_dim, tuple(tuple(w.shape) for w in weights), tuple(hx.shape), input.dtype,
        tuple(w.dtype for w in weights), tuple(flags), _order(input), _order(grad_output),
    )  # fmt: skip


@dataclass
class _Sizes:
    workspace: int  # bytes of the workspace the forward returns
    forward_scratch: int  # bytes the forward allocates beyond its outputs, freed before it returns
    backward_scratch: int  # the same for the backward


@contextlib.contextmanager
def _silenced_stderr():
    """torch.profiler's C++ side prints start/stop lines on file descriptor 2."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _scratch_of(events, name: str) -> int:
    """Bytes allocated inside operator `name` beyond what is still allocated when it returns."""
    spans = [(e.start_ns(), e.end_ns()) for e in events if e.name() == name]
    if not spans:
        return 0
    start, end = spans[0]
    live = peak = 0
    for event in sorted((e for e in events if e.name() == "[memory]"), key=lambda e: e.start_ns()):
        if start <= event.start_ns() <= end:
            live += event.nbytes()
            peak = max(peak, live)
    return max(0, peak - live)


def _measure(layer: _Layer, grads: tuple[bool, bool, bool]) -> _Sizes:
    """Run one real forward and backward of `layer` on zeros under the profiler."""
    from torch.profiler import ProfilerActivity, profile

    reverse, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train = layer.flags
    zeros = lambda shape: torch.zeros(shape, dtype=layer.dtype)  # noqa: E731
    x, hx, cx = _zeros(layer.input_shape, layer.input_order, layer.dtype), zeros(layer.hidden), zeros(layer.hidden)
    weights = [torch.zeros(shape, dtype=dtype) for shape, dtype in zip(layer.weights, layer.weight_dtypes)]
    with _silenced_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        output, hy, cy, workspace = _FORWARD(x, *weights, hx, cx, reverse, [], mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train)
        wanted = [torch.ones_like(t) if want else None for t, want in zip((output, hy, cy), grads)]
        if wanted[0] is not None:
            wanted[0] = _zeros(tuple(output.shape), layer.grad_order, layer.dtype)
        result = _BACKWARD(
            x, *weights, hx, cx, output, hy, cy, *wanted, reverse, mode, hidden_size, num_layers,
            has_biases, train, bidirectional, [], batch_first, workspace,
        )  # fmt: skip
        del result
    events = list(prof.profiler.kineto_results.events())
    return _Sizes(workspace.untyped_storage().nbytes(), _scratch_of(events, "aten::mkldnn_rnn_layer"), _scratch_of(events, "aten::mkldnn_rnn_layer_backward"))


def _extrapolate(layer: _Layer, grads) -> tuple[_Sizes, str]:
    """The sizes at the layer's time steps; measured there when affordable, else on two shorter runs."""
    steps = layer.steps
    if layer.cost(steps) <= PROBE_BYTES:
        return _measure(layer, grads), ""
    per_step = max(1, layer.cost(1) - layer.weight_bytes)
    short = max(1, min(steps // 2, (PROBE_BYTES - layer.weight_bytes) // (2 * per_step)))
    a, b = _measure(layer.with_time(short), grads), _measure(layer.with_time(2 * short), grads)

    def line(u: int, v: int) -> int:
        return max(0, round(u + (v - u) * (steps - short) / short))

    sizes = _Sizes(line(a.workspace, b.workspace), line(a.forward_scratch, b.forward_scratch), line(a.backward_scratch, b.backward_scratch))
    return sizes, f"extrapolated from {short} and {2 * short} of {steps} time steps"


def _spec(value):
    """What a probe needs of one argument: ("tensor", shape, stride, dtype) for a tensor."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), value.dtype)
    if isinstance(value, (list, tuple)):
        return tuple(_spec(v) for v in value)
    return value


def _is_tensor(spec) -> bool:
    return isinstance(spec, tuple) and len(spec) == 4 and spec[0] == "tensor"


def _tensor_bytes(spec) -> int:
    if _is_tensor(spec):
        return torch.Size(spec[1]).numel() * torch.empty((), dtype=spec[3]).element_size()
    return sum(_tensor_bytes(s) for s in spec) if isinstance(spec, tuple) else 0


def _real(spec):
    if _is_tensor(spec):
        _, shape, stride, dtype = spec
        return torch.zeros(shape, dtype=dtype).as_strided(shape, stride) if _dense(shape, stride) else torch.zeros(shape, dtype=dtype)
    if isinstance(spec, tuple):
        return [_real(s) for s in spec]
    return spec


def _dense(shape, stride) -> bool:
    """Whether the strides are a permutation of a dense layout (so zeros of `shape` can take them)."""
    order = sorted(range(len(shape)), key=lambda d: -stride[d])
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and stride[d] != expected:
            return False
        expected *= shape[d]
    return True


def _with_batch(spec, batch: int):
    _, shape, stride, dtype = spec
    shape = (batch, *shape[1:])
    order = sorted(range(len(shape)), key=lambda d: -spec[2][d])
    strides, size = [0] * len(shape), 1
    for d in reversed(order):
        strides[d], size = size, size * shape[d]
    return ("tensor", shape, tuple(strides), dtype)


def _probe_scratch(func, specs: tuple, kwargs_spec: tuple) -> int:
    """Run `func` once on zeros of `specs` under the profiler: bytes beyond what it returns."""
    from torch.profiler import ProfilerActivity, profile

    args = [_real(s) for s in specs]
    kwargs = dict((k, _real(v)) for k, v in kwargs_spec)
    with _silenced_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = func(*args, **kwargs)
        del result
    return _scratch_of(list(prof.profiler.kineto_results.events()), _PROBED[func][0])


def _op_scratch(func, specs: tuple, kwargs_spec: tuple) -> tuple[int, str]:
    """The scratch of one call, measured at its shapes when affordable, else extrapolated on the batch."""
    batched = [i for i in _PROBED[func][2] if i < len(specs) and _is_tensor(specs[i])]
    cost = 3 * _tensor_bytes(specs)  # the arguments, an output and scratch of about their size
    if cost <= PROBE_BYTES or not batched:
        return _probe_scratch(func, specs, kwargs_spec), ""
    batch = specs[batched[0]][1][0]
    per_item = max(1, cost // max(1, batch))
    short = max(2, min(batch // 2, PROBE_BYTES // (2 * per_item)))
    if 2 * short >= batch:
        return _probe_scratch(func, specs, kwargs_spec), ""

    def at(size: int) -> tuple:
        return tuple(_with_batch(s, size) if i in batched else s for i, s in enumerate(specs))

    a, b = _probe_scratch(func, at(short), kwargs_spec), _probe_scratch(func, at(2 * short), kwargs_spec)
    return max(0, round(a + (b - a) * (batch - short) / short)), f"extrapolated from batches of {short} and {2 * short}"


_CONVOLUTION_NOTE = "oneDNN's scratch inside convolutions on CPU"


class KernelScratch:
    """Adjusts what the fake kernels of oneDNN's LSTM report (see the module's docstring); the
    tracker calls `adjust` after every operator and counts the scratch it returns as a transient."""

    # sizes per layer signature, kept for the process: the what-if runs meet the same layers
    _sizes: dict = {}

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.unsimulated: list[str] = []
        self._largest_convolution = 0

    def _unsimulated(self, message: str) -> None:
        if message not in self.unsimulated:
            self.unsimulated.append(message)

    def _lookup(self, layer: _Layer, grads) -> Optional[_Sizes]:
        key = (layer, grads)
        if key not in self._sizes:
            if layer.weight_bytes > WEIGHT_LIMIT:
                self._sizes[key] = None
            else:
                try:
                    # oneDNN keeps a workspace only when grad mode is on (as it is in a training step)
                    with _disable_current_modes(), torch.autocast("cpu", enabled=False), torch.enable_grad():
                        self._sizes[key] = _extrapolate(layer, grads)
                except Exception as error:  # the real kernel cannot run here (e.g. bf16 without CPU support)
                    self._sizes[key] = f"oneDNN could not run it on this CPU ({' '.join(str(error).split())[:120]})"
        found = self._sizes[key]
        if found is None or isinstance(found, str):
            why = found or f"its {layer.weight_bytes:,} B of weights are too many to run it for a measurement"
            self._unsimulated(f"oneDNN's workspace and scratch of an nn.LSTM layer on CPU: {why}")
            return None
        sizes, how = found
        note = (
            f"nn.LSTM on CPU runs oneDNN: its workspace ({sizes.workspace:,} B per layer and direction here) "
            f"and scratch were measured by running the kernel once on zeros{' (' + how + ')' if how else ''}"
        )
        if note not in self.notes:
            self.notes.append(note)
        return sizes

    def _probed(self, func, args, kwargs) -> int:
        """Scratch of a convolution (forward or backward) on CPU, measured once per distinct call."""
        if not any(isinstance(a, FakeTensor) for a in args) or any(isinstance(a, torch.Tensor) and a.device.type != "cpu" for a in args):
            return 0
        specs, kwargs_spec = tuple(_spec(a) for a in args), tuple(sorted((k, _spec(v)) for k, v in kwargs.items()))
        key = (func, specs, kwargs_spec, torch.get_num_threads())
        if key not in self._sizes:
            if _tensor_bytes(specs) > WEIGHT_LIMIT:
                self._sizes[key] = "its tensors are too large to run it for a measurement"
            else:
                try:
                    with _disable_current_modes(), torch.autocast("cpu", enabled=False), torch.no_grad():
                        self._sizes[key] = _op_scratch(func, specs, kwargs_spec)
                except Exception as error:
                    self._sizes[key] = f"oneDNN could not run it on this CPU ({' '.join(str(error).split())[:120]})"
        found = self._sizes[key]
        what = _PROBED[func][1]
        shape = "x".join(map(str, specs[0][1])) if _is_tensor(specs[0]) else "?"
        if isinstance(found, str):
            bound = _tensor_bytes(specs)
            self._unsimulated(f"oneDNN's scratch inside {what} ({func}, {shape}): {found}; it may add up to about {bound:,} B there")
            return 0
        scratch, how = found
        self._largest_convolution = max(self._largest_convolution, scratch)
        self.notes[:] = [n for n in self.notes if not n.startswith(_CONVOLUTION_NOTE)]
        self.notes.append(
            f"{_CONVOLUTION_NOTE} (the largest {self._largest_convolution:,} B) was measured by running each distinct "
            f"convolution once on zeros, at {torch.get_num_threads()} thread(s)" + (f"; some {how}" if how else "")
        )
        return scratch

    def adjust(self, func, args, kwargs, out):
        """(outputs, transient scratch bytes) for one operator run on fake tensors."""
        if func is _FORWARD and isinstance(out[3], FakeTensor) and out[3].untyped_storage().nbytes() == 0:
            if args[8]:  # packed sequences: not probed
                self._unsimulated("nn.LSTM over packed sequences: oneDNN's workspace and scratch are not simulated")
                return out, 0
            layer = _layer(args[0], args[1:5], args[5], args[7:8] + args[9:])
            # The backward's gradient pattern is not known yet: assume the usual one (output only).
            sizes = self._lookup(layer, (True, False, False))
            if sizes is None:
                return out, 0
            workspace = torch.empty(sizes.workspace, dtype=torch.uint8)
            return (out[0], out[1], out[2], workspace), sizes.forward_scratch
        if func in _PROBED:
            return out, self._probed(func, args, kwargs)
        if func is _BACKWARD and isinstance(out[0], FakeTensor):
            reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional, _, batch_first = args[13:22]
            flags = (reverse, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train)
            layer = _layer(args[0], args[1:5], args[5], flags, args[10])
            sizes = self._lookup(layer, tuple(g is not None for g in args[10:13]))
            return out, 0 if sizes is None else sizes.backward_scratch
        return out, 0
