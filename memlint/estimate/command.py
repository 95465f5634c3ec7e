"""The `memlint estimate` command line (torch is imported only when it runs)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Optional

import click

from memlint.estimate.report import as_text, reserve_for
from memlint.units import parse_size

OPTIMIZERS = ("sgd", "sgd-momentum", "adam", "adamw", "adam-amsgrad", "adafactor", "adamw-8bit")
DTYPES = ("float32", "bf16-autocast", "fp16-autocast", "bf16")


def _fail(message: str) -> click.exceptions.Exit:
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def _configured_budget(path: Path) -> Optional[int]:
    """The `gpu-memory` of the configuration closest to the model's file, in bytes: the value ML006
    reads, parsed and checked by the configuration's own units parser (memlint/run.py)."""
    from memlint.config import ConfigError
    from memlint.pipeline.registry import RegistryError
    from memlint.run import Run

    try:
        return Run.configure((path,)).settings_for(path).options.get("gpu-memory")
    except (ConfigError, RegistryError) as error:
        raise _fail(str(error)) from None


@contextlib.contextmanager
def _importable(*targets: Optional[str]):
    """The folders of the model and loss files stay on sys.path for the whole run: factories
    import sibling modules when they are called, not only when their file is imported."""
    folders = []
    for target in targets:
        if target and ":" in target:
            folder = str(Path(target.rpartition(":")[0]).resolve().parent)
            if folder not in folders:
                folders.append(folder)
    sys.path[:0] = folders
    try:
        yield
    finally:
        for folder in folders:
            if folder in sys.path:
                sys.path.remove(folder)


def _reserve(value: str) -> Optional[int]:
    """None for "auto" (the assumed reserve), else bytes; 0 is allowed here."""
    text = value.strip().lower()
    if text == "auto":
        return None
    if re.fullmatch(r"0+(\.0*)?\s*[a-z]*", text):
        return 0
    return parse_size(value)


def _quiet_torch_import() -> None:
    """torch warns "Failed to initialize NumPy" on import when numpy is absent: nothing here needs it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch  # noqa: F401


@click.command("estimate")
@click.argument("target")
@click.option("--input-shape", "input_shapes", multiple=True, required=True, help="One per model input, e.g. 32,3,224,224.")
@click.option(
    "--input-dtype", "input_dtypes", type=click.Choice(["float32", "int64"]), multiple=True,
    help="int64 for token ids (with --vocab-size); one per --input-shape, paired in order, or one for all [default: float32].",
)  # fmt: skip
@click.option("--vocab-size", type=click.IntRange(min=1), default=2, show_default=True, help="Upper bound of int64 inputs (token ids).")
@click.option("--loss", "loss_target", help="PATH.py:FN taking the model output and returning the loss [default: mean of the output].")
@click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="adam", show_default=True)
@click.option(
    "--step", "step", type=click.Choice(["loop", "lean"]), default="loop", show_default=True,
    help="loop: the output, loss and batch stay alive through backward and the optimizer step, as in "
    "`for x in loader: out = model(x); loss = f(out); ...`; lean: the output is freed before backward, the batch after.",
)  # fmt: skip
@click.option("--dtype", type=click.Choice(DTYPES), default="float32", show_default=True)
@click.option("--gpu-memory", help="Memory budget, e.g. 24GiB [default: the configured gpu-memory].")
@click.option(
    "--reserve", default="auto", show_default=True,
    help="Memory the budget must keep besides the peak, e.g. 1GiB or 0 [auto: 512 MiB CUDA context + 10% of the peak].",
)  # fmt: skip
@click.option("--what-if/--no-what-if", default=True, show_default=True, help="Also simulate the alternatives.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path),
    help="Draw live memory through the simulated step, by kind, with the peak and the budget, into this PNG (needs matplotlib).",
)  # fmt: skip
def estimate_command(
    target: str,
    input_shapes: tuple[str, ...],
    input_dtypes: tuple[str, ...],
    vocab_size: int,
    loss_target: Optional[str],
    optimizer: str,
    step: str,
    dtype: str,
    gpu_memory: Optional[str],
    reserve: str,
    what_if: bool,
    output_format: str,
    plot_file: Optional[Path],
) -> None:
    """Estimate the peak memory of one training step of the model TARGET (PATH.py:FACTORY).

    FACTORY is a function or an nn.Module class called without arguments. The step (forward, loss,
    backward, optimizer step, zero_grad) runs on fake tensors: nothing is allocated, so models far
    larger than this machine's memory can be estimated. PATH.py is imported, so run only code you trust.
    """
    if importlib.util.find_spec("torch") is None:
        raise _fail("`memlint estimate` needs PyTorch, which is not installed: pip install 'torch-memlint[torch]'")
    try:
        budget = parse_size(gpu_memory) if gpu_memory else _configured_budget(Path(target.rsplit(":", 1)[0]))
    except ValueError as error:
        raise _fail(f"--gpu-memory: {error}") from None
    try:
        fixed_reserve = _reserve(reserve)
    except ValueError as error:
        raise _fail(f"--reserve: {error}, 0 or auto") from None
    input_dtypes = input_dtypes or ("float32",)
    if len(input_dtypes) > 1 and len(input_dtypes) != len(input_shapes):
        raise _fail(
            f"{len(input_dtypes)} --input-dtype for {len(input_shapes)} --input-shape: give one --input-dtype per "
            "--input-shape (paired in order) or a single one for every input"
        )
    if plot_file is not None and importlib.util.find_spec("matplotlib") is None:
        raise _fail("--plot needs matplotlib: pip install 'torch-memlint[plot]'")
    from memlint.report.progress import StatusLine

    status = StatusLine.for_format(output_format, ("text",))
    status("importing PyTorch")
    try:
        _quiet_torch_import()
        with _importable(target, loss_target):
            result = _run(target, input_shapes, input_dtypes, vocab_size, loss_target, optimizer, step, dtype, what_if, plot_file is not None, status)
    finally:
        status.close()
    timeline = result.pop("_timeline")
    reserve_bytes = reserve_for(result["peak_bytes"], fixed_reserve)

    def fits(peak: Optional[int]) -> Optional[bool]:
        return None if budget is None or peak is None else peak + reserve_for(peak, fixed_reserve) <= budget

    for row in result["what_if"]:
        row["fits"] = fits(row["peak_bytes"])
    result |= {
        "budget_bytes": budget,
        "reserve_bytes": reserve_bytes,
        "reserve_fixed": fixed_reserve,
        "needed_bytes": result["peak_bytes"] + reserve_bytes,
        "fits": fits(result["peak_bytes"]),
    }
    if output_format == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(as_text(result), nl=False)
    if plot_file is not None and timeline is not None:
        from memlint.estimate.plot import write_plot

        try:
            click.echo(f"memlint: wrote {write_plot(result, timeline, plot_file)}", err=True)
        except OSError as error:  # a symlink or a FIFO at that name, a read-only file: not written
            raise _fail(f"{plot_file}: plot not written: {error.strerror or error}") from None
    if result["fits"] is False:
        sys.exit(1)


def _run(target, input_shapes, input_dtypes, vocab_size, loss_target, optimizer, step, dtype, what_if, timeline=False, progress=lambda _: None) -> dict:
    from memlint.estimate.loader import LoadError, load_callable

    try:
        from memlint.estimate.simulate import STEPS, SimulationError, StepConfig, sequence_of_shapes, simulate
        from memlint.estimate.simulate import what_if as simulate_what_if

        shapes = sequence_of_shapes(input_shapes)
        factory = load_callable(target, "FACTORY")
        loss_fn = load_callable(loss_target, "FN") if loss_target else None
    except (LoadError, ValueError) as error:
        getattr(progress, "close", lambda: None)()  # the status line, before the message
        raise _fail(str(error)) from None
    config = StepConfig(shapes, input_dtypes=input_dtypes, optimizer=optimizer, dtype=dtype, vocabulary=vocab_size, step=step)
    progress(f"simulating one training step of {target}")
    try:
        estimate = simulate(factory, config, loss_fn=loss_fn, timeline=timeline)
    except SimulationError as error:
        getattr(progress, "close", lambda: None)()
        raise _fail(" ".join(str(error).split())) from None
    alternatives = simulate_what_if(factory, config, loss_fn=loss_fn, base=estimate, progress=progress) if what_if else []
    rows = [
        {"change": change, "peak_bytes": est.peak_bytes if est else None,
         "raises_peak": est.peak_bytes > estimate.peak_bytes if est else None,
         **({"note": note or est.note} if (note or (est and est.note)) else {})}
        for change, est, note in alternatives
    ]  # fmt: skip
    rows.sort(key=lambda row: (row["peak_bytes"] is None, row["peak_bytes"] or 0))
    return {
        "model": target,
        "params": estimate.params,
        "peak_bytes": estimate.peak_bytes,
        "peak_phase": estimate.peak_phase,
        "forward_only": estimate.forward_only,
        "note": estimate.note,
        "breakdown": estimate.breakdown,
        "what_if": rows,
        "measured": estimate.measured,
        "unsimulated": estimate.unsimulated,
        "step": step,
        "step_convention": STEPS[step],
        "_timeline": estimate.timeline,
        "config": {
            "input_shapes": [list(s) for s in shapes],
            "input_dtypes": [config.input_dtype(i) for i in range(len(shapes))],
            "optimizer": optimizer,
            "dtype": dtype,
            "step": step,
        },
    }
