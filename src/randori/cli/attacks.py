"""`randori attacks`: list the attacks, export the texts that succeeded as a bank."""

from __future__ import annotations

from pathlib import Path

import typer

from randori.cli.common import DEFAULT_RESULTS, RESULTS_HELP, _listing, _results_dir, warn
from randori.errors import UserError

attacks_app = typer.Typer(help="Attacks that write the injected text.", no_args_is_help=True)


@attacks_app.command("list")
def attacks_list() -> None:
    """Every registered attack (built-in and from plugins) with a one-line description."""
    from randori.attacks import attack_names, get_attack
    from randori.registry import each_loadable

    entries = [(attack.name, attack.description) for attack in each_loadable(attack_names(), get_attack, warn)]
    entries.append(("max (a report row)", "Broken if any attack of the run broke it; shown whenever 2+ attacks ran."))
    _listing(entries)


@attacks_app.command("export")
def attacks_export(
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
    output: Path | None = typer.Option(None, "--output", "-o", dir_okay=False,
                                       help="Write the bank to this file (default: print it)."),
) -> None:
    """Write the injection texts that succeeded in a results store as a bank (JSON), to replay them
    against another model or defense with --attack "bank[file=FILE]". The store is read-only."""
    from randori.attacks.bank import write_bank
    from randori.bench.store import open_existing
    from randori.bench.transfer import bank_entries

    if output is not None and not output.parent.is_dir():
        raise UserError(f"cannot write {output}: directory {output.parent} does not exist")
    with open_existing(_results_dir(results), readonly=True) as store:
        entries, skipped = bank_entries(store)
    text = write_bank(entries, output)
    if output is None:
        typer.echo(text)
    else:
        typer.echo(f"Wrote {len(entries)} text(s) to {output}.", err=True)
    if skipped:
        warn(f"{skipped} successful case(s) left out: their suite version is not the installed one")
