"""The `memlint estimate` command line (torch is imported only when it runs)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Optional

import click

from memlint.units import format_bytes, parse_size

OPTIMIZERS = ("sgd", "sgd-momentum", "adam", "adamw", "adam-amsgrad", "adafactor", "adamw-8bit")
DTYPES = ("float32", "bf16-autocast", "fp16-autocast", "bf16")


def _fail(message: str) -> click.exceptions.Exit:
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def _configured_budget(path: Path) -> Optional[int]:
    from memlint.config import ConfigError, discover

    try:
        value = discover(path).values.get("gpu-memory")
        return parse_size(value) if value is not None else None
    except (ConfigError, ValueError) as error:
        raise _fail(str(error)) from None


@click.command("estimate")
@click.argument("target")
@click.option("--input-shape", "input_shapes", multiple=True, required=True, help="One per model input, e.g. 32,3,224,224.")
@click.option("--input-dtype", type=click.Choice(["float32", "int64"]), default="float32", show_default=True)
@click.option("--vocab-size", type=click.IntRange(min=1), default=2, show_default=True, help="Upper bound of int64 inputs (token ids).")
@click.option("--loss", "loss_target", help="PATH.py:FN taking the model output and returning the loss [default: mean of the output].")
@click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="adam", show_default=True)
@click.option("--dtype", type=click.Choice(DTYPES), default="float32", show_default=True)
@click.option("--gpu-memory", help="Memory budget, e.g. 24GiB [default: the configured gpu-memory].")
@click.option("--what-if/--no-what-if", default=True, show_default=True, help="Also simulate the alternatives.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def estimate_command(
    target: str,
    input_shapes: tuple[str, ...],
    input_dtype: str,
    vocab_size: int,
    loss_target: Optional[str],
    optimizer: str,
    dtype: str,
    gpu_memory: Optional[str],
    what_if: bool,
    output_format: str,
) -> None:
    """Estimate the peak memory of one training step of the model TARGET (PATH.py:FACTORY).

    FACTORY is a function or an nn.Module class called without arguments. The step (forward, loss,
    backward, optimizer step, zero_grad) runs on fake tensors: nothing is allocated, so models far
    larger than this machine's memory can be estimated. PATH.py is imported, so run only code you trust.
    """
    if importlib.util.find_spec("torch") is None:
        raise _fail("`memlint estimate` needs PyTorch, which is not installed: pip install 'memlint[torch]'")
    from memlint.estimate.loader import LoadError, load_callable

    try:
        from memlint.estimate.simulate import SimulationError, StepConfig, sequence_of_shapes, simulate
        from memlint.estimate.simulate import what_if as simulate_what_if

        shapes = sequence_of_shapes(input_shapes)
        factory = load_callable(target, "FACTORY")
        loss_fn = load_callable(loss_target, "FN") if loss_target else None
    except (LoadError, ValueError) as error:
        raise _fail(str(error)) from None
    try:
        budget = parse_size(gpu_memory) if gpu_memory else _configured_budget(Path(target.rsplit(":", 1)[0]))
    except ValueError as error:
        raise _fail(f"--gpu-memory: {error}") from None
    config = StepConfig(shapes, input_dtype=input_dtype, optimizer=optimizer, dtype=dtype, vocabulary=vocab_size)
    try:
        estimate = simulate(factory, config, loss_fn=loss_fn)
    except SimulationError as error:
        raise _fail(str(error).splitlines()[0]) from None
    alternatives = simulate_what_if(factory, config, loss_fn=loss_fn, base=estimate) if what_if else []

    def fits(peak: Optional[int]) -> Optional[bool]:
        return None if budget is None or peak is None else peak <= budget

    rows = [
        {"change": change, "peak_bytes": est.peak_bytes if est else None, "fits": fits(est.peak_bytes if est else None),
         **({"note": note or est.note} if (note or (est and est.note)) else {})}
        for change, est, note in alternatives
    ]  # fmt: skip
    rows.sort(key=lambda row: (row["peak_bytes"] is None, row["peak_bytes"] or 0))
    result = {
        "model": target,
        "params": estimate.params,
        "peak_bytes": estimate.peak_bytes,
        "budget_bytes": budget,
        "fits": fits(estimate.peak_bytes),
        "breakdown": estimate.breakdown,
        "what_if": rows,
        "config": {"input_shapes": [list(s) for s in shapes], "input_dtype": input_dtype, "optimizer": optimizer, "dtype": dtype},
    }
    if output_format == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(_text(result), nl=False)
    if result["fits"] is False:
        sys.exit(1)


def _fits_word(value: Optional[bool]) -> str:
    return {True: "fits", False: "does NOT fit", None: "no budget given"}[value]


def _text(result: dict) -> str:
    config = result["config"]
    shapes = " ".join("x".join(map(str, s)) for s in config["input_shapes"])
    lines = [
        f"{result['model']}: {result['params']:,} parameters; inputs {shapes} {config['input_dtype']}; "
        f"optimizer {config['optimizer']}; {config['dtype']}",
        f"peak of one training step: {format_bytes(result['peak_bytes'])} ({result['peak_bytes']:,} B)"
        + (f" — {_fits_word(result['fits'])} in {format_bytes(result['budget_bytes'])}" if result["budget_bytes"] else ""),
        "",
        "at the peak:",
    ]
    for kind, nbytes in result["breakdown"].items():
        lines.append(f"  {kind.replace('_', ' '):<17}{format_bytes(nbytes):>12}")
    if result["what_if"]:
        lines += ["", "what if (sorted by peak):"]
        width = max(len(row["change"]) for row in result["what_if"])
        for row in result["what_if"]:
            peak = format_bytes(row["peak_bytes"]) if row["peak_bytes"] is not None else "failed"
            extra = f"  {_fits_word(row['fits'])}" if result["budget_bytes"] else ""
            note = f"  ({row['note'].splitlines()[0]})" if row.get("note") else ""
            lines.append(f"  {row['change']:<{width}}  {peak:>10}{extra}{note}")
    return "\n".join(lines) + "\n"
