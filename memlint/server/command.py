"""`memlint server`: start the language server on standard input/output."""

from __future__ import annotations

import click


@click.command("server")
def server_command() -> None:
    """Run the language server (LSP over stdio) for editors: diagnostics and quick fixes."""
    try:
        from memlint.server.app import server
    except ImportError as error:  # the optional extra is not installed
        click.echo(
            f"memlint: error: `memlint server` needs the server extra ({error.name} is missing): "
            "pip install 'torch-memlint[server]'",
            err=True,
        )
        raise click.exceptions.Exit(2) from None
    from memlint.pipeline.workers import fewer_collections

    fewer_collections()  # as in `memlint check`: libcst's trees make the collector run often for nothing
    try:
        server.start_io()
    finally:
        server.remove_rule_pages()  # an editor that exits without shutdown leaves none either
    # LSP: `exit` ends with 0 after a `shutdown` request, else with 1 (an editor that died, or one that
    # skipped shutdown); pygls swallows the code it means, so it is chosen here.
    raise click.exceptions.Exit(0 if server.shut_down else 1)
