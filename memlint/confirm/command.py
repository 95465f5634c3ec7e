"""The `memlint confirm` command line."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Optional

import click

from memlint.confirm import report
from memlint.confirm.runner import Options, confirm, probe
from memlint.confirm.variants import find_fixtures
from memlint.units import parse_size


def _fail(message: str) -> click.exceptions.Exit:
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _resolve_device(requested: str) -> str:
    if importlib.util.find_spec("torch") is None:
        raise _fail("`memlint confirm` needs PyTorch, which is not installed: pip install 'torch-memlint[torch]'")
    with tempfile.TemporaryDirectory(prefix="memlint-probe-") as scratch:
        found = probe(Path(scratch))
    if not found.get("ok"):
        raise _fail(f"cannot start PyTorch: {found.get('error', 'unknown error')}")
    if requested == "cuda" and not found["cuda"]:
        raise _fail(f"--device cuda was requested but no CUDA device is available to torch {found['torch']}")
    if requested == "auto":
        return "cuda" if found["cuda"] else "cpu"
    return requested


@click.command("confirm")
@click.argument("fixtures", nargs=-1, type=click.Path(path_type=Path))
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option("--select", multiple=True, help="Apply only these rules' fixes (codes or prefixes).")
@click.option("--output-format", type=click.Choice(sorted(report.RENDERERS)), default="text", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True, help="Seconds per variant.")
@click.option("--memory-limit", default="4GiB", show_default=True, help="Address space each CPU variant may add.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path), help="Write a PNG per fixture here (CPU only).")
@click.option(
    "--default-device", is_flag=True,
    help="Make the measured device torch's default device in the scripts, for scripts that never choose one "
    "(it breaks DataLoader(shuffle=True) without a generator).",
)  # fmt: skip
def confirm_command(
    fixtures: tuple[Path, ...],
    device: str,
    select: tuple[str, ...],
    output_format: str,
    timeout: float,
    memory_limit: str,
    plot_dir: Optional[Path],
    default_device: bool,
) -> None:
    """Measure peak tensor memory of FIXTURES before and after memlint's fixes.

    FIXTURES are Python scripts (or directories of them, e.g. memlint's own fixtures/); they are
    executed, so run only code you trust. The "after" variant is `<name>.after.py` when it exists,
    otherwise the script with all of memlint's fixes (safe and unsafe) applied in a temporary
    directory. Scripts run as written, on the device they choose: `--device cuda` measures the GPU
    memory of a script that puts its tensors there (the environment variable MEMLINT_DEVICE names
    the measured device for scripts that want to follow it).
    """
    if not fixtures:
        raise _fail(
            "which scripts? memlint confirm SCRIPT.py|DIR ... runs each before and after memlint's fixes "
            "and measures its peak memory (memlint's own examples: memlint confirm fixtures/)"
        )
    try:
        limit = parse_size(memory_limit)
    except ValueError as error:
        raise _fail(f"--memory-limit: {error}") from None
    if plot_dir is not None:
        from memlint.confirm import plot

        if not plot.available():
            raise _fail("--plot needs matplotlib: pip install matplotlib")
    paths, problems = find_fixtures(fixtures)
    for problem in problems:
        click.echo(f"memlint: error: {problem}", err=True)
    if problems:
        raise click.exceptions.Exit(2)
    if not paths:
        raise _fail("no fixtures to run (expected Python scripts)")
    codes = [c.strip() for value in select for c in value.split(",") if c.strip()]
    resolved = _resolve_device(device)
    if plot_dir is not None and resolved == "cuda":
        click.echo(
            "memlint: --plot writes nothing on CUDA: the plot is the CPU tracker's timeline of live tensor "
            "memory, and on CUDA memlint reads max_memory_allocated, which has none (use --device cpu)",
            err=True,
        )
        plot_dir = None
    options = Options(
        device=resolved, timeout=timeout, memory_limit=limit, timeline=plot_dir is not None, select=codes or None,
        default_device=default_device,
    )  # fmt: skip
    from memlint.report.progress import StatusLine

    status = StatusLine.for_format(output_format)
    try:
        measurements = confirm([(p, _display(p)) for p in paths], options, progress=status)
    except Exception as error:  # bad --select and similar configuration problems
        from memlint.config import ConfigError

        if isinstance(error, ConfigError):
            raise _fail(str(error)) from None
        raise
    finally:
        status.close()
    if output_format == "markdown":
        shown = " ".join(str(f) for f in fixtures)
        extra = (f" --device {device}" if device != "auto" else "") + (f" --select {','.join(codes)}" if codes else "")
        extra += " --default-device" if default_device else ""
        rendered = report.as_markdown(measurements, f"memlint confirm {shown}{extra} --output-format markdown")
    else:
        rendered = report.RENDERERS[output_format](measurements)
    click.echo(rendered, nl=False)
    if plot_dir is not None:
        from memlint.confirm import plot

        unwritten = False
        for written, problem in plot.write_plots(measurements, plot_dir):
            click.echo(f"memlint: wrote {written}" if problem is None else f"memlint: error: {written}: plot not written: {problem}", err=True)
            unwritten = unwritten or problem is not None
        if unwritten:  # a file memlint could not write is an error, as for fixes
            raise click.exceptions.Exit(2)
    if any(not m.ok or m.equivalent is False for m in measurements):
        raise click.exceptions.Exit(1)
