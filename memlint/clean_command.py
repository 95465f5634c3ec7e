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
    """Remove the result cache (the next check recomputes every file)."""
    from memlint.cache import NotACache, cache_directory, clean
    from memlint.config import ConfigError, discover

    try:
        root = discover(Path.cwd()).root
    except ConfigError:  # a broken config must not stop anyone from clearing the cache
        root = Path.cwd()
    directory = cache_directory(cache_dir, root)
    try:
        removed = clean(directory)
    except NotACache as error:
        click.echo(f"memlint: error: {error}", err=True)
        raise click.exceptions.Exit(2) from None
    except OSError as error:
        click.echo(f"memlint: error: cannot remove {directory}: {error.strerror or error}", err=True)
        raise click.exceptions.Exit(2) from None
    click.echo(f"Removed {directory}" if removed else f"No cache at {directory}", err=True)
