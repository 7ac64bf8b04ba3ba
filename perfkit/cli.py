"""The `perfkit` command."""
from __future__ import annotations

import sys

import click

from perfkit.errors import PerfkitError


class _Group(click.Group):
    """Turns a PerfkitError anywhere below into one message on stderr and exit status 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except PerfkitError as err:
            click.echo(f"perfkit: {err}", err=True)
            sys.exit(1)


@click.group(cls=_Group)
@click.version_option(package_name="perfkit")
def main():
    """Storage-performance analysis: HDFS vs S3 and more, on the embedded lab or a cluster."""


@main.group()
def lab():
    """The embedded local lab (HDFS, S3 server, HiveServer2 on 127.0.0.1)."""


def _print_status(rows) -> None:
    width = max(len(r.service) for r in rows)
    for r in rows:
        state = "healthy" if r.healthy else "DOWN"
        click.echo(f"{r.service:<{width}}  {state:<7}  pid {r.pid or '-':<7}  {r.address}  ({r.detail})")


@lab.command("up")
def lab_up():
    """Install what is missing, start every service, wait until healthy (idempotent)."""
    from perfkit.lab import Lab

    rows = Lab().up()
    _print_status(rows)
    if not all(r.healthy for r in rows):
        raise PerfkitError("lab: some services are not healthy; see `perfkit lab status` and the logs")


@lab.command("down")
def lab_down():
    """Stop every process the lab started."""
    from perfkit.lab import Lab

    stopped = Lab().down()
    click.echo("lab: stopped " + (", ".join(stopped) if stopped else "nothing (no lab process was running)"))


@lab.command("status")
def lab_status():
    """Each service with its address, pid and health; exit 1 if any is down."""
    from perfkit.lab import Lab

    rows = Lab().status()
    _print_status(rows)
    if not all(r.healthy for r in rows):
        sys.exit(1)
