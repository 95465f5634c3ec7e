"""An exact tracker of live tensor storage on any device, CPU included.

A `TorchDispatchMode` sees every tensor an operator returns. Each storage is counted once (views
share their base's storage), the first time it is seen, and uncounted by a weakref finalizer when
the storage object dies. Tensors that existed before the mode was entered (a model's parameters)
are invisible to it and must be added with `track`. Everything here imports torch: only
`memlint.confirm` and `memlint.estimate` load this module.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Iterable, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

CUDA_BLOCK = 512  # the CUDA caching allocator rounds each block up to a multiple of 512 bytes


def rounded(nbytes: int) -> int:
    """Bytes the CUDA caching allocator would hand out for a storage of `nbytes`."""
    return 0 if nbytes <= 0 else -(-nbytes // CUDA_BLOCK) * CUDA_BLOCK


@dataclass
class _Entry:
    nbytes: int
    category: str  # the tracker's category when the storage was first seen
    role: Optional[str] = None  # what it turned out to be (`mark`), e.g. "gradients"


@dataclass
class Usage:
    live: int = 0
    live_rounded: int = 0
    peak: int = 0
    peak_rounded: int = 0
    # bytes per category at the moment of `peak`
    peak_breakdown: dict = field(default_factory=dict)
    # (entry, bytes) of every storage live at `peak` (only with snapshot_peak=True); the entries
    # are the live ones, so a later `mark` still reaches those that were live at the peak
    peak_storages: list = field(default_factory=list)
    peak_phase: str = ""  # the tracker's `phase` when the peak was reached
    window_peak: int = 0  # the peak since the last `reset_window()`


class StorageTracker(TorchDispatchMode):
    """Counts live tensor-storage bytes; `peak` is the exact high-water mark.

    With `timeline=True`, the live byte count after every operator is recorded (for plots). New
    storages are counted under `self.category` (set it per phase: "activations", ...); the bytes per
    category at the peak are kept, and with `snapshot_peak=True` every storage live at the peak.
    """

    def __init__(
        self,
        *,
        timeline: bool = False,
        max_points: int = 200_000,
        snapshot_peak: bool = False,
        kernels=None,
        in_place_of=None,
        device_type: Optional[str] = None,
        events: bool = False,
    ) -> None:
        super().__init__()
        # with a device type, storages elsewhere are not counted, only summed per device (first sight)
        self._device_type = device_type
        self.other_devices: dict[str, int] = {}
        # optional: `kernels.adjust(func, args, kwargs, out)` -> (out, scratch bytes), for memory an
        # operator's (fake) kernel does not show (memlint.estimate.kernels)
        self._kernels = kernels
        # optional: `in_place_of(func, args, out)` -> the input tensor whose storage an eager run
        # writes `out` into, where the dispatch mode itself made the operator allocate (memlint.estimate.eager)
        self._in_place_of = in_place_of
        self.usage = Usage()
        self._entries: dict[int, _Entry] = {}
        self._by_category: dict[str, int] = {}
        self._elsewhere: set = set()
        self.category = "other"  # what newly seen storages are counted as
        self.phase = ""  # what is running (set by the caller), recorded with the peak
        self.timeline: Optional[list[int]] = [] if timeline else None
        self._max_points = max_points
        self._snapshot_peak = snapshot_peak
        # with events=True, every change as (entry, bytes, phase): a plot splits it by what each
        # storage turned out to be (`mark` sets roles after the fact, e.g. gradients after backward)
        self.events: Optional[list] = [] if events else None

    # ------------------------------------------------------------------ counting

    @staticmethod
    def key(tensor: torch.Tensor) -> int:
        """The identity of a tensor's storage (shared by all its views)."""
        return tensor.untyped_storage()._cdata

    def _key(self, storage) -> int:
        return storage._cdata  # the address of the C++ StorageImpl: one per real buffer

    def _see(self, tensor: torch.Tensor, category: Optional[str] = None) -> None:
        if self._device_type is not None and tensor.device.type != self._device_type:
            self._see_elsewhere(tensor)
            return
        storage = tensor.untyped_storage()
        key = self._key(storage)
        nbytes = storage.nbytes()
        entry = self._entries.get(key)
        if entry is None:
            entry = _Entry(0, category or self.category)
            self._entries[key] = entry
            weakref.finalize(storage, self._forget, key)
        if entry.nbytes != nbytes:  # new, or resized in place (resize_, out=)
            old, entry.nbytes = entry.nbytes, nbytes
            self._add(entry, nbytes - old, rounded(nbytes) - rounded(old))

    def _see_elsewhere(self, tensor: torch.Tensor) -> None:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):  # tensors without storage (sparse, nested)
            return
        key = ("elsewhere", self._key(storage))
        if key not in self._elsewhere:
            self._elsewhere.add(key)
            weakref.finalize(storage, self._elsewhere.discard, key)
            device = tensor.device.type
            self.other_devices[device] = self.other_devices.get(device, 0) + storage.nbytes()

    def _add(self, entry: _Entry, delta: int, delta_rounded: int) -> None:
        usage = self.usage
        usage.live += delta
        usage.live_rounded += delta_rounded
        self._by_category[entry.category] = self._by_category.get(entry.category, 0) + delta
        usage.window_peak = max(usage.window_peak, usage.live)
        if self.events is not None:
            self.events.append((entry, delta, self.phase))
        if usage.live > usage.peak:
            usage.peak = usage.live
            usage.peak_breakdown = dict(self._by_category)
            usage.peak_phase = self.phase
            if self._snapshot_peak:
                usage.peak_storages = [(e, e.nbytes) for e in self._entries.values()]
        if usage.live_rounded > usage.peak_rounded:
            usage.peak_rounded = usage.live_rounded

    def _forget(self, key: int) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._add(entry, -entry.nbytes, -rounded(entry.nbytes))
            self._record()

    def inherit(self, old: torch.Tensor, new: torch.Tensor) -> None:
        """`new`'s storage takes over the count of `old`'s (written in place, in an eager run)."""
        old_key, new_key = self.key(old), self.key(new)
        entry = self._entries.pop(old_key, None)
        if entry is None or new_key in self._entries:
            if entry is not None:
                self._entries[old_key] = entry
            return
        self._entries[new_key] = entry  # old's finalizer now finds nothing to uncount
        weakref.finalize(new.untyped_storage(), self._forget, new_key)

    def spike(self, nbytes: int, category: str = "temporaries") -> None:
        """Count `nbytes` live for an instant: scratch an operator allocates and frees inside."""
        key = -len(self._entries) - 1
        while key in self._entries:
            key -= 1
        entry = self._entries[key] = _Entry(nbytes, category)
        self._add(entry, nbytes, rounded(nbytes))
        del self._entries[key]
        self._add(entry, -nbytes, -rounded(nbytes))

    def _record(self) -> None:
        if self.timeline is not None and len(self.timeline) < self._max_points:
            self.timeline.append(self.usage.live)

    # ------------------------------------------------------------------ public API

    def track(self, tensors: Iterable, category: Optional[str] = None) -> None:
        """Count tensors created before the mode was entered (parameters, buffers, inputs)."""
        for value in tensors:
            if isinstance(value, torch.nn.Module):
                self.track(value.parameters(), category)
                self.track(value.buffers(), category)
            elif isinstance(value, torch.Tensor):
                self._see(value, category)
        self._record()

    def reset_window(self) -> None:
        """Start a new window for `usage.window_peak` (the peak of one phase of a step)."""
        self.usage.window_peak = self.usage.live

    def mark(self, tensors: Iterable, role: str) -> None:
        """Record what the live storages of `tensors` are (gradients, optimizer state...)."""
        for tensor in tensors:
            entry = self._entries.get(self.key(tensor))
            if entry is not None:
                entry.role = role

    def peak_by_role(self) -> dict:
        """Bytes live at the peak by role (as marked), else by the category they were created in."""
        totals: dict = {}
        for entry, nbytes in self.usage.peak_storages:
            kind = entry.role or entry.category
            totals[kind] = totals.get(kind, 0) + nbytes
        return totals

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        scratch = 0
        if self._kernels is not None:
            out, scratch = self._kernels.adjust(func, args, kwargs or {}, out)
        if self._in_place_of is not None:
            written = self._in_place_of(func, args, out)
            if written is not None:
                self.inherit(written, out)
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self._see(value)
        if scratch:
            self.spike(scratch)
        self._record()
        return out
