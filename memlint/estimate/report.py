"""What `memlint estimate` prints: the JSON result as text, and the budget arithmetic behind `fits`.

torch-free, like the command: everything here works on the result dictionary.
"""

from __future__ import annotations

from typing import Optional

from memlint.units import format_bytes

# What the estimate leaves to the reserve (see `reserve_for`): torch.cuda.max_memory_allocated()
# does not count the CUDA context (CUDA runtime, cuBLAS/cuDNN handles and loaded kernels: 300-600
# MiB on current GPUs and drivers), and the caching allocator rounds blocks up and leaves gaps in
# its segments (fragmentation), typically several percent of the peak and more for varying shapes.
CUDA_CONTEXT = 512 * 2**20
FRAGMENTATION = 0.10

LIMITS = (
    "Simulated exactly: the storage of every tensor the step's operators return, on CPU kernels, as an "
    "eager run allocates it. Not simulated: scratch that a kernel allocates and frees inside itself "
    "(measured on the real kernel for oneDNN's LSTMs and convolutions on CPU, as listed above; cuBLAS and "
    "cuDNN workspaces on CUDA), and the CUDA context and allocator fragmentation, which the reserve stands for."
)


def reserve_for(peak: int, fixed: Optional[int]) -> int:
    """Bytes to add to a peak before comparing it with the budget: `fixed` (--reserve SIZE) when
    given, else the assumed CUDA context plus a fraction of the peak for fragmentation."""
    return fixed if fixed is not None else CUDA_CONTEXT + int(FRAGMENTATION * peak)


def describe_reserve(fixed: Optional[int]) -> str:
    if fixed is not None:
        return "set with --reserve"
    return (
        f"assumed: {format_bytes(CUDA_CONTEXT)} for the CUDA context + {FRAGMENTATION:.0%} of the peak for "
        "allocator fragmentation; --reserve sets it"
    )


def _fixed(size: float, digits: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(size) >= scale:
            return f"{size / scale:.{digits}f} {unit}"
    return f"{int(size)} B"


def format_apart(value: int, other: int) -> tuple[str, str]:
    """Both sizes as format_bytes writes them, with more digits while two different sizes would
    read the same ("290 MiB ... does NOT fit in 290 MiB")."""
    first, second = format_bytes(value), format_bytes(other)
    digits = 1
    while value != other and first == second and digits <= 6:
        first, second = _fixed(value, digits), _fixed(other, digits)
        digits += 1
    if value != other and first == second:
        first, second = f"{value:,} B", f"{other:,} B"
    return first, second


def _with_bytes(size: int) -> str:
    shown = format_bytes(size)
    return shown if shown.endswith(" B") else f"{shown} ({size:,} B)"


def _fits_word(value: Optional[bool]) -> str:
    return {True: "fits", False: "does NOT fit", None: "no budget given"}[value]


def _delta(peak: Optional[int], base: int) -> str:
    """"-42%", "+0%", or "+12% RAISES" for a what-if's peak against the current one."""
    if peak is None or not base:
        return ""
    change = (peak - base) / base
    shown = "+0%" if peak == base else f"{change:+.0%}" if abs(change) >= 0.01 else f"{change:+.1%}" if abs(change) >= 0.0005 else "~0%"
    return f"{shown} RAISES" if peak > base else shown


def as_text(result: dict) -> str:
    config = result["config"]
    shapes = ", ".join(f"{'x'.join(map(str, s))} {kind}" for s, kind in zip(config["input_shapes"], config["input_dtypes"]))
    what = "the forward pass" if result.get("forward_only") else "one training step"
    lines = [
        f"{result['model']}: {result['params']:,} parameters; inputs {shapes}; "
        f"optimizer {config['optimizer']}; {config['dtype']}",
        f"peak of {what}: {_with_bytes(result['peak_bytes'])}"
        + (f", reached in the {result['peak_phase']}" if result.get("peak_phase") else ""),
        f"step written as --step {result['step']}: {result['step_convention']}",
    ]
    if result.get("note"):
        lines.append(f"note: {result['note']}")
    budget = result["budget_bytes"]
    if budget:
        needed, shown_budget = format_apart(result["needed_bytes"], budget)
        lines.append(
            f"{_fits_word(result['fits'])} in {shown_budget}: needs {needed}, the peak + "
            f"{format_bytes(result['reserve_bytes'])} reserve ({describe_reserve(result['reserve_fixed'])})"
        )
    lines += ["", "at the peak:"]
    for kind, nbytes in result["breakdown"].items():
        lines.append(f"  {kind.replace('_', ' '):<17}{format_bytes(nbytes):>12}")
    if result["what_if"]:
        lines += ["", "what if (sorted by peak; the change from now, RAISES where the peak goes up" + (", fits counted with the reserve" if budget else "") + "):"]
        width = max(len(row["change"]) for row in result["what_if"])
        for row in result["what_if"]:
            peak = format_bytes(row["peak_bytes"]) if row["peak_bytes"] is not None else "failed"
            extra = f"  {_fits_word(row['fits'])}" if budget and row["peak_bytes"] is not None else ""
            note = f"  ({row['note'].splitlines()[0]})" if row.get("note") else ""
            delta = _delta(row["peak_bytes"], result["peak_bytes"])
            lines.append(f"  {row['change']:<{width}}  {peak:>10}  {delta:>7}{extra}{note}")
    if result.get("measured"):
        lines += ["", "measured on the real kernel:", *(f"  - {text}" for text in result["measured"])]
    if result.get("unsimulated"):
        lines += ["", "NOT simulated for this model:", *(f"  - {text}" for text in result["unsimulated"])]
    lines += ["", LIMITS]
    return "\n".join(lines) + "\n"
