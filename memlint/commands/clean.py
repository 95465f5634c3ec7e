"""`memlint clean`: remove the result cache."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click


@click.command("clean")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="MEMLINT_CACHE_DIR",
    help="The cache to remove [default: .memlint_cache in the project root].",
)
def clean_command(cache_dir: Optional[Path]) -> None:
    """Remove the result cache (the next check recomputes every file).

    Only the files memlint wrote are removed; the directory goes too when nothing else is in it."""
    from memlint.config import ConfigError, discover
    from memlint.pipeline.cache import NotACache, cache_directory, clean

    try:
        root = discover(Path.cwd()).root
    except ConfigError:  # a broken config must not stop anyone from clearing the cache
        root = Path.cwd()
    directory = cache_directory(cache_dir, root)
    try:
        cleaned = clean(directory)
    except NotACache as error:
        click.echo(f"memlint: error: {error}", err=True)
        raise click.exceptions.Exit(2) from None
    except OSError as error:
        click.echo(f"memlint: error: cannot remove {directory}: {error.strerror or error}", err=True)
        raise click.exceptions.Exit(2) from None
    if cleaned is None:
        click.echo(f"No cache at {directory}", err=True)
    elif cleaned.directory_removed:
        click.echo(f"Removed {directory}", err=True)
    else:
        shown = ", ".join(cleaned.kept[:5]) + (f" and {len(cleaned.kept) - 5} more" if len(cleaned.kept) > 5 else "")
        click.echo(
            f"Removed memlint's {cleaned.removed} file{'s' if cleaned.removed != 1 else ''} from {directory}; "
            f"kept what memlint did not write there: {shown}",
            err=True,
        )
