"""The `perfkit` command."""
from __future__ import annotations

import errno
import os
import signal
import sys
import warnings

import click

from perfkit import interrupts

from perfkit.errors import PerfkitError
from perfkit.parameters import FieldsCommand, from_cli


class _Group(click.Group):
    """Turns a PerfkitError, or an OSError (permission, not a folder, disk full), anywhere below into one message on
    stderr and exit status 1, and prints each warning on one line. Ctrl-C is left to click ("Aborted!")."""

    def invoke(self, ctx):
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            try:
                return super().invoke(ctx)
            except PerfkitError as err:
                click.echo(f"perfkit: {err}", err=True)
                sys.exit(1)
            except OSError as err:
                if err.errno == errno.EPIPE:
                    raise  # click's own handling of a closed pipe (perfkit ... | head)
                where = "".join(f"{sep}{name}" for sep, name in ((": ", err.filename), (" -> ", err.filename2))
                                if name is not None)
                click.echo(f"perfkit: {err.strerror or str(err) or type(err).__name__}{where}", err=True)
                sys.exit(1)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # the default format adds the source line of the warn() call: traceback-like noise for a user
    click.echo(f"warning: {message}", err=True)


@click.group(cls=_Group)
@click.version_option(package_name="perfkit")
def main():
    """Storage-performance analysis: HDFS vs S3 and more, on the embedded lab or a cluster."""
    # `kill` (SIGTERM) stops a run the way Ctrl-C does: the run's file is saved and marked interrupted
    signal.signal(signal.SIGTERM, interrupts.stop)


@main.group()
def lab():
    """The embedded local lab (HDFS, S3 server, HiveServer2 on 127.0.0.1)."""


def _print_status(rows) -> None:
    width = max(len(r.service) for r in rows)
    for r in rows:
        # a live daemon of a degraded service is "running"; only a dead one is DOWN
        state = "healthy" if r.healthy else ("running" if r.pid else "DOWN")
        click.echo(f"{r.service:<{width}}  {state:<7}  pid {r.pid or '-':<7}  {r.address}  ({r.detail})")


@lab.command("up")
@click.argument("services", nargs=-1)
@click.option("--s3-endpoint", metavar="URL|direct",
              help="Send every S3 client of the lab (engines, tools, Alluxio) to URL, e.g. a proxy in front of the "
                   "lab's S3 server; `direct` sends them to the server again. Restarts the running ones.")
@click.option("--network", "network_name", metavar="PROFILE",
              help="Put S3 behind this emulated network (local, ec2-s3, onprem-10gbe) before the S3 clients start, "
                   "as `perfkit lab network PROFILE` would.")
@click.option("--shape", "shape_name", metavar="one-process|cluster",
              help="The lab's shape, kept until changed: one-process (the default: Spark local, MapReduce local, one "
                   "DataNode) or cluster (YARN with 2 NodeManagers, 3 DataNodes with 2 replicas, each node on its "
                   "own loopback address). Changed only while the lab is down.")
def lab_up(services, s3_endpoint, network_name, shape_name):
    """Install what is missing, start SERVICES (default: all) and what they need, wait until healthy (idempotent)."""
    from perfkit.lab import Lab
    from perfkit.lab.shape import shape_named
    from perfkit.storages.base import is_http_url

    lab = Lab()
    if shape_name is not None:
        lab.set_shape(shape_named(shape_name))
    if s3_endpoint is not None:
        endpoint = None if s3_endpoint == "direct" else s3_endpoint
        if endpoint is not None and not is_http_url(endpoint):
            raise PerfkitError(f"--s3-endpoint {s3_endpoint!r} is not an http(s):// address: give one, e.g. "
                               "http://127.0.0.1:18474, or `direct`")
        lab.send_s3_to(endpoint)
    network = None
    if network_name is not None:
        from perfkit.network import network_profile

        network = network_profile(network_name)
    rows = lab.up(list(services) or None, network=network)
    _print_status(rows)
    # a service left down on purpose was named with its reason above; the others must be healthy
    if not all(r.healthy for r in rows if r.service not in lab.skipped_daemons()):
        raise PerfkitError("lab: some services are not healthy; see `perfkit lab status` and the logs")


@lab.command("network")
@click.argument("profile", required=False)
@click.option("--rtt-ms", type=float, help="Round trip added to every S3 request (whole ms).")
@click.option("--jitter-ms", type=float, help="+/- around the round trip (whole ms, at most half of it).")
@click.option("--per-connection-mb-s", type=float, help="Bandwidth of each S3 connection, MB/s (10^6 bytes).")
@click.option("--total-mb-s", type=float, help="Bandwidth of all S3 connections together, MB/s.")
def lab_network(profile, rtt_ms, jitter_ms, per_connection_mb_s, total_mb_s):
    """Put the lab's S3 behind an emulated network: PROFILE (local, ec2-s3, onprem-10gbe) and/or your own values.

    Without arguments: the network the lab emulates now. Every S3 client of the lab (Spark, Trino, Hive, the Spark
    Thrift Server, Alluxio, DistCp, the aws cli, boto3) goes through it; HDFS stays local. Refused while a run
    measures."""
    from perfkit.lab import Lab
    from perfkit.network import PROFILES, network_profile

    lab = Lab()
    values = {"rtt_ms": rtt_ms, "jitter_ms": jitter_ms, "per_connection_mb_s": per_connection_mb_s,
              "total_mb_s": total_mb_s}
    values = {k: v for k, v in values.items() if v is not None}
    if profile is None and not values:
        network = lab.network()
        click.echo(f"lab: S3 network {network.describe()}")
        click.echo(f"     source: {network.source}")
        click.echo("     profiles: " + "; ".join(p.describe() for p in PROFILES.values()))
        return
    network = network_profile({"base": profile, **values} if values else profile)
    was_down = not lab.s3_side_running()
    restarted = lab.set_network(network, start=False)  # a lab that is down stays down: the choice waits for `lab up`
    again = f" (restarted {', '.join(restarted)} to follow)" if restarted else ""
    later = " (recorded: the lab is down, and its S3 goes behind it when the lab starts)" if was_down else ""
    click.echo(f"lab: S3 network {network.describe()}{again}{later}")


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

    lab = Lab()
    rows = lab.status()
    _print_status(rows)
    click.echo(f"S3 network: {lab.network().describe()}")
    click.echo(f"shape: {lab.shape.describe()}")
    if not all(r.healthy for r in rows):
        sys.exit(1)


@lab.command("sockets")
@click.option("--seconds", default=0.0, show_default=True, type=click.FloatRange(min=0),
              help="Keep sampling (every 0.2 s) this long, e.g. while a report runs; 0: one look.")
def lab_sockets(seconds):
    """Every TCP/UDP socket of the lab's processes and their peers; exit 1 if any talks to an address off this
    machine."""
    import time

    from perfkit.lab import Lab
    from perfkit.lab.sockets import SocketWatch

    roots = Lab().pids()
    if not roots:
        raise PerfkitError("lab: no lab process is running: `perfkit lab up` first")
    watch = SocketWatch(roots)
    watch.sample()
    if seconds:
        watch.start()
        time.sleep(seconds)
        watch.stop()
    by_command: dict[str, set[str]] = {}
    for command, remote in sorted(watch.peers):
        by_command.setdefault(command, set()).add(remote.rsplit(":", 1)[0])
    for command, addresses in sorted(by_command.items()):
        click.echo(f"{command:<16} talks to {', '.join(sorted(addresses))}")
    click.echo(f"lab: {len(roots)} daemons and their children, {watch.samples} samples")
    if watch.foreign:
        for conn in sorted(watch.foreign, key=str):
            click.echo(f"OFF THE MACHINE: pid {conn.pid} ({conn.command}) {conn.protocol} {conn.local} -> "
                       f"{conn.remote} {conn.state}")
        sys.exit(1)
    click.echo("lab: no socket to an address off this machine")


@main.command("report")
@click.argument("notebook", type=click.Path(dir_okay=False), required=False)
@click.option("-p", "--parameter", "parameters", multiple=True, metavar="KEY=VALUE",
              help="A notebook parameter; repeat for more (values read as YAML: 3, [spark, hive]).")
@click.option("--kernel", default=None, help="Jupyter kernel name (default: the notebook's own).")
@click.option("--show-code", is_flag=True,
              help="Keep the code cells in the HTML (hidden by default; the .ipynb always has them).")
@click.option("--from", "stored", default=None, type=click.Path(dir_okay=False, exists=True), metavar="RUN.jsonl",
              help="A stored run's report again, measuring nothing: its experiment's notebook (or NOTEBOOK) renders "
                   "the run's file.")
def report_cmd(notebook, parameters, kernel, show_code, stored):
    """Run NOTEBOOK with papermill into reports/<name>/<timestamp>.ipynb + .html and update reports/index.html."""
    import os

    from perfkit.report import parse_parameters, render

    parameters = parse_parameters(list(parameters))
    if stored:
        from perfkit.report.stored import RESULTS_PARAMETER, stored_results, stored_run_notebook

        notebook = stored_run_notebook(stored, notebook)
        parameters[RESULTS_PARAMETER], said = stored_results(stored)
        if said:
            click.echo(f"report: {said}")
    elif notebook is None:
        raise click.UsageError("give NOTEBOOK, or --from RUN.jsonl (a stored run's report again)")
    profile_kernel = _profile_kernel(parameters.get("profile")) if kernel is None else None
    if profile_kernel:
        kernel, environment = profile_kernel
        os.environ.update(environment)
        click.echo(f"report: profile {parameters['profile']} runs the notebook on kernel {kernel}")
    result = render(notebook, parameters, kernel=kernel, show_code=show_code)
    click.echo(f"report: {result.html}")
    if not result.ok:
        raise PerfkitError(f"the notebook stopped with {result.error} (the report shows where)")


def _profile_kernel(profile) -> tuple[str, dict[str, str]] | None:
    """The kernel a profile's reports run on (the cluster shape's: Spark 3.5.6's Python), if not the notebook's."""
    from perfkit.config import load_profile

    if not isinstance(profile, str):
        return None
    try:
        return load_profile(profile).provider.notebook_kernel()
    except PerfkitError:
        return None  # the notebook says what is wrong with the profile, in its report


@main.command("compare")
@click.argument("a")
@click.argument("b")
@click.option("--factor", default=1.10, show_default=True, type=float,  # compare.DEFAULT_FACTOR (a test checks)
              help="Noise factor: a change counts only when median B / median A is outside [1/factor, factor].")
@click.option("--alpha", default=0.05, show_default=True, type=float,  # compare.DEFAULT_ALPHA
              help="... and the two-sided Mann-Whitney U p-value is below alpha.")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when any case is slower beyond noise (for CI).")
def compare_cmd(a, b, factor, alpha, fail_on_regression):
    """Did B get faster or slower than A? A and B: each a run id, a result file or a folder of runs."""
    from perfkit.compare import SLOWER, compare_runs, render_text
    from perfkit.findings import plural

    table = compare_runs(a, b, factor=factor, alpha=alpha)
    click.echo(render_text(table))
    slower = table[table["verdict"] == SLOWER]
    if fail_on_regression and len(slower):
        cases = ", ".join("/".join(row) for row in slower[["subject", "storage", "case"]].itertuples(index=False))
        raise PerfkitError(f"{plural(len(slower), 'case')} slower beyond noise in B: {cases}")


@main.command("calibrate")
@click.option("--profile", default="lab", show_default=True, help="lab, emr or a YAML profile file.")
@click.option("--bucket", default="", help="S3 bucket (profile emr).")
@click.option("--save", "save_to", default=None, type=click.Path(dir_okay=False),
              help="Write the calibration to this file (JSON), for `perfkit decide --calibration`.")
def calibrate_cmd(profile, bucket, save_to):
    """Measure the S3 path from here (a small GET's time, one connection's and several connections' MB/s), as every
    run's calibration does: run it on a cluster node for `perfkit decide`."""
    import json

    from perfkit.atomic import write_text
    from perfkit.calibration import calibrate
    from perfkit.config import load_profile
    from perfkit.results import now

    loaded = load_profile(profile, bucket=bucket)
    found = calibrate(loaded)
    click.echo(found.headline())
    if save_to:
        write_text(save_to, json.dumps({**found.as_dict(), "profile": loaded.name, "measured_at": now()},
                                       indent=1))
        click.echo(f"saved: {save_to}")


@main.command("decide")
@click.argument("runs", nargs=-1, required=True)
@click.option("--data-gb", type=click.FloatRange(min=0, min_open=True), required=True,
              help="One copy of your tables, GB (10^9 bytes).")
@click.option("--calibration", "calibration_file", default=None, type=click.Path(dir_okay=False, exists=True),
              help="A file `perfkit calibrate --save` wrote on your cluster: its round trip and bandwidth.")
@click.option("--rtt-ms", type=click.FloatRange(min=0), default=None,
              help="A small GET's time from your nodes to S3 (the round trip), ms; instead of --calibration.")
@click.option("--mb-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="One connection's bandwidth from your nodes to S3, MB/s (10^6 bytes); instead of --calibration.")
@click.option("--runs-per-day", default=24.0, show_default=True, type=click.FloatRange(min=0),
              help="Runs of each query a day (the month's S3 requests).")
@click.option("--replication", default=3, show_default=True, type=click.IntRange(min=1), help="HDFS's replicas.")
@click.option("--volume-type", default="st1", show_default=True, help="The EBS volumes under HDFS (st1, sc1, gp3).")
@click.option("--copy-mb-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Your copy S3 -> HDFS, MB/s: gives the break-even (none without it).")
@click.option("--prices", "prices_file", default=None, type=click.Path(dir_okay=False, exists=True),
              help="A YAML file of your own prices (default: the shipped AWS list prices).")
def decide_cmd(runs, data_gb, calibration_file, rtt_ms, mb_s, runs_per_day, replication, volume_type, copy_mb_s,
               prices_file):
    """Each query's time on S3 and on HDFS at your data size and distance, the month's cost, the copy break-even.
    RUNS: result files, folders of them or run ids, measured at two or more data sizes and S3 distances (bench/
    scale_model.py --keep makes such a set); the model is fitted on them (perfkit.model.query_time)."""
    import pandas as pd

    from perfkit.compare import load_side
    from perfkit.decide import QUERY_RUNS, Target, decide
    from perfkit.model.observations import observations
    from perfkit.model.query_time import fit
    from perfkit.storages.pricing import price_table

    records = pd.concat([load_side(run) for run in runs], ignore_index=True)
    frame, left_out = observations(records[records["experiment"].eq(QUERY_RUNS)])  # not the copies beside them
    if frame.empty:
        raise PerfkitError(f"no run of {', '.join(runs)} can be fitted ({left_out} without bytes counted or a "
                           "calibration): give runs of hdfs_vs_s3_queries made with accounting on")
    sources = {}
    if calibration_file:
        from perfkit.decide import calibrated_path

        rtt_ms, mb_s, sources = calibrated_path(calibration_file, rtt_ms, mb_s)
    if rtt_ms is None or mb_s is None:
        raise PerfkitError("decide needs your path to S3: --calibration FILE (`perfkit calibrate --save FILE` on your "
                           "cluster), or --rtt-ms and --mb-s")
    target = Target(data_bytes=data_gb * 1e9, rtt_ms=rtt_ms, mb_s=mb_s, runs_per_day=runs_per_day,
                    replication=replication, volume_type=volume_type, copy_mb_s=copy_mb_s, sources=sources)
    decision = decide(fit(frame), frame, target, price_table(prices_file))
    click.echo("\n".join(decision.sentences()))
    click.echo("inputs: " + "; ".join(f"{name} {value}" for name, value in decision.inputs.items())
               + f"; fitted on {len(frame)} runs" + (f" ({left_out} left out: no bytes or calibration)"
                                                       if left_out else ""))


@main.command("queries", cls=FieldsCommand, experiment="perfkit.experiments.hdfs_vs_s3_queries:QueryComparison",
              fields=["engines", "rows", "files", "file_format", "runs", "warmup", "suite", "scale", "queries",
                      "cold_cache", "query_timeout_s", "storages", "baseline", "include_throttled"])
@click.option("--profile", default="lab", show_default=True, help="lab, emr or a YAML profile file.")
@click.option("--bucket", default="", help="S3 bucket (profile emr).")
@click.option("--network", default="", help="The lab's S3 network for this run: local, ec2-s3, onprem-10gbe "
                                              "(default: as `perfkit lab network` set it).")
@click.option("--tables", "tables_file", default=None, type=click.Path(dir_okay=False),
              help="A YAML file mapping each storage to your own table location(s) (instead of generated data).")
@click.option("--table", "table_pairs", multiple=True, metavar="STORAGE[.NAME]=URL",
              help="Your own table on one storage, e.g. --table hdfs=hdfs:///w/trips --table s3=s3://b/trips/ "
                   "(NAME for {table:NAME}); repeat per storage and table.")
def queries_cmd(profile, bucket, network, tables_file, table_pairs, **asked):
    """HDFS vs S3: run a suite's queries (the taxi queries by default) on both storages and print the recap."""
    _on_the_profile_s_spark(profile)
    from perfkit.config import load_profile
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
    from perfkit.presenting import report_of

    comparison = QueryComparison(load_profile(profile, bucket=bucket, network=network),
                                 tables=_tables(tables_file, table_pairs), **from_cli(QueryComparison, asked))
    results = _measure(comparison, lambda: report_of(comparison).recap())
    _echo_recap(comparison, report_of(comparison).recap())
    click.echo(f"results: {results.path}")
    report_of(comparison).raise_for_failures()


RUN_AGAIN = "PERFKIT_ON_PROFILE_PYTHON"  # set in a command run again on a profile's Python: never a second time


def _on_the_profile_s_spark(profile: str) -> None:
    """Profile lab-cluster runs EMR 7.13's Spark (3.5.6), whose driver must be that pyspark: from any other Python,
    the same command is run again on that Spark's Python (the lab keeps it), so that no user retypes it. Where that
    Python is not there, the profile's own check says what to do."""
    if profile != "lab-cluster" or os.environ.get(RUN_AGAIN):
        return
    from perfkit.engines.spark_install import pyspark_version
    from perfkit.lab import Lab, cluster_spark, versions

    if pyspark_version() == versions.CLUSTER_SPARK or not Lab().shape.yarn:  # no cluster shape: the check says so
        return
    command, environment = cluster_spark.perfkit_command(*sys.argv[1:])
    click.echo(f"profile lab-cluster: run on Spark {versions.CLUSTER_SPARK}'s Python, {command[0]}", err=True)
    sys.stdout.flush()
    os.execve(command[0], command, {**environment, RUN_AGAIN: "1"})


def _measure(comparison, recap):
    """comparison.run(); when its results could not be saved, the recap of what was measured (`recap()`) is printed
    before the error (which says where the records were kept): a full disk at the end must not hide an hour of
    measuring."""
    from perfkit.keep import ResultsNotSaved

    try:
        return comparison.run()
    except ResultsNotSaved:
        if comparison.results is not None and comparison.results.records:
            click.echo("perfkit: the results could not be saved; what was measured:", err=True)
            _echo_recap(comparison, recap())
        raise


def _echo_recap(comparison, recap) -> None:
    import pandas as pd

    if comparison.measured_network is not None:  # where S3 sat, first: the times mean nothing without it
        click.echo(comparison.measured_network.headline())
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        click.echo(recap.to_string(index=False))


def _tables(tables_file: str | None, pairs: tuple[str, ...]):
    """--tables FILE or --table STORAGE[.NAME]=URL ...: the tables map, or None for the suite's generated data."""
    if tables_file and pairs:
        raise PerfkitError("give either --tables FILE or --table STORAGE=URL options, not both")
    if tables_file:
        return tables_file
    if not pairs:
        return None
    tables: dict = {}
    for pair in pairs:
        key, sep, url = pair.partition("=")
        if not sep or not key.strip() or not url.strip():
            raise PerfkitError(f"--table {pair!r}: write STORAGE=URL or STORAGE.NAME=URL, e.g. hdfs=hdfs:///w/trips")
        where, _, name = key.strip().partition(".")
        if name:
            tables.setdefault(where, {})[name] = url.strip()
        elif where in tables:
            raise PerfkitError(f"--table {pair!r}: {where} has a location already; name each table "
                               "(STORAGE.NAME=URL) to give several")
        else:
            tables[where] = url.strip()
    return tables


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@main.command("transfer", cls=FieldsCommand, experiment="perfkit.experiments.s3_to_hdfs_transfer:TransferComparison",
              fields=["source_prefix", "methods", "concurrency", "repeats", "order", "files", "mean_mb", "checksum"])
@click.option("--profile", default="lab", show_default=True, help="lab, emr or a YAML profile file.")
@click.option("--bucket", default="", help="S3 bucket (profile emr).")
@click.option("--network", default="", help="The lab's S3 network for this run: local, ec2-s3, onprem-10gbe "
                                              "(default: as `perfkit lab network` set it).")
def transfer_cmd(profile, bucket, network, **asked):
    """S3 -> HDFS: copy one manifest with each method, verified, and print the recap."""
    _on_the_profile_s_spark(profile)
    from perfkit.config import load_profile
    from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
    from perfkit.presenting import report_of

    comparison = TransferComparison(load_profile(profile, bucket=bucket, network=network),
                                    **from_cli(TransferComparison, asked))
    results = _measure(comparison, lambda: report_of(comparison).recap())
    _echo_recap(comparison, report_of(comparison).recap())
    click.echo(f"results: {results.path}")
    comparison.raise_for_failures()


@main.group()
def emr():
    """Batch runs on EMR Notebooks: execute a workspace's notebook on a running cluster, keep it as a report."""


@emr.command("run")
@click.argument("notebook", type=click.Path(dir_okay=False))
@click.option("--editor-id", required=True, help="The EMR Studio workspace (or EMR notebook) id, e-...")
@click.option("--cluster", "cluster_id", required=True, help="The running cluster that executes it, j-...")
@click.option("--output", default=None, metavar="s3://BUCKET/PREFIX",
              help="Where EMR writes the executed notebook (default: the workspace's own S3 location).")
@click.option("-p", "--parameter", "parameters", multiple=True, metavar="KEY=VALUE",
              help="A notebook parameter; repeat for more (values read as YAML: 3, [spark, hive]).")
@click.option("--relative-path", default=None,
              help="The notebook's path inside the workspace (default: its path in this checkout, "
                   "e.g. notebooks/hdfs_vs_s3_queries.ipynb).")
@click.option("--service-role", default="EMR_Notebooks_DefaultRole", show_default=True,
              help="The IAM role EMR uses for the execution.")
@click.option("--timeout", "timeout_s", default=6 * 3600, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds; an execution still running then is stopped and recorded as timed out.")
@click.option("--region", default=None, help="The cluster's region (default: the AWS region chain).")
@click.option("--show-code", is_flag=True, help="Keep the code cells in the HTML.")
def emr_run(notebook, editor_id, cluster_id, output, parameters, relative_path, service_role, timeout_s, region,
            show_code):
    """Execute NOTEBOOK on EMR, wait, and store it under reports/<name>/ (Ctrl-C stops the execution)."""
    from perfkit.emr import EmrRunInterrupted, run_notebook
    from perfkit.report import parse_parameters

    try:
        run = run_notebook(notebook, editor_id, cluster_id, parse_parameters(list(parameters)), output=output,
                           relative_path=relative_path, service_role=service_role, timeout_s=timeout_s,
                           region=region, show_code=show_code)
    except EmrRunInterrupted as interrupted:
        click.echo(f"perfkit: {interrupted.run.error}; the report keeps what EMR wrote: {interrupted.run.html}",
                   err=True)
        sys.exit(130)
    click.echo(f"report: {run.html}")
    if not run.ok:
        raise PerfkitError(f"EMR execution {run.execution_id} {run.outcome}: {run.error} (the report keeps what EMR "
                           "wrote)")


@emr.command("bootstrap")
def emr_bootstrap():
    """Print the script that installs perfkit on an EMR node (a bootstrap action; a step for the notebook kernel)."""
    from importlib import resources

    click.echo(resources.files("perfkit").joinpath("emr_bootstrap.sh").read_text(), nl=False)


@emr.command("list")
@click.option("--editor-id", default=None, help="Only this workspace's executions.")
@click.option("--cluster", "cluster_id", default=None, help="Only those on this cluster.")
@click.option("--status", default=None, type=click.Choice(
    ["START_PENDING", "STARTING", "RUNNING", "FINISHING", "FINISHED", "FAILING", "FAILED", "STOP_PENDING",
     "STOPPING", "STOPPED"]), help="Only executions in this status.")
@click.option("--days", default=30.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="How far back.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--region", default=None, help="The region (default: the AWS region chain).")
def emr_list(editor_id, cluster_id, status, days, limit, region):
    """Recent notebook executions, newest first."""
    from datetime import timezone

    from perfkit.emr import list_executions

    executions = list_executions(editor_id, cluster_id, status, days=days, limit=limit, region=region)
    if not executions:
        click.echo(f"no notebook execution in the last {days:g} days")
    for e in executions:
        start, end = e.get("StartTime"), e.get("EndTime")
        took = f"{(end - start).total_seconds():.0f} s" if start and end else "-"
        when = start.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S") if start else "-"
        click.echo(f"{e['NotebookExecutionId']}  {e.get('Status', '?'):<12} {when}  {took:>8}  "
                   f"{e.get('ExecutionEngineId') or '-'}  {e.get('EditorId') or '-'}  "
                   f"{e.get('NotebookExecutionName') or ''}")


@main.group()
def tier():
    """Promote a table's newest partitions to the Alluxio tier and demote them back (metastore only, no copy)."""


def _tier_context(profile: str):
    from perfkit.config import load_profile
    from perfkit.engines import get_engine
    from perfkit.tiers import Alluxio

    loaded = load_profile(profile)
    return get_engine("hive", loaded), Alluxio(loaded)


def _print_moves(moves, verb: str) -> None:
    for move in moves:
        click.echo(f"{verb} {move.partition}: {move.old} -> {move.new}")
    click.echo(f"{len(moves)} partition{'s' if len(moves) != 1 else ''} {verb}; nothing copied, nothing deleted")


@tier.command("partitions")
@click.argument("table")
@click.option("--profile", default="lab", show_default=True, help="lab, emr or a YAML profile file.")
def tier_partitions(table, profile):
    """TABLE's partitions (database.table), oldest first, with where each one is read from."""
    from perfkit.tiers.promote import partitions

    engine, _ = _tier_context(profile)
    with engine:
        for partition in partitions(engine, table):
            click.echo(f"{partition.name}  {partition.location}")


@tier.command("promote")
@click.argument("table")
@click.option("--newest", required=True, type=int, help="How many of the newest partitions to read through the tier.")
@click.option("--profile", default="lab", show_default=True, help="lab, emr or a YAML profile file.")
def tier_promote(table, newest, profile):
    """Point the newest partitions of TABLE (database.table, on the tier's S3 bucket) at alluxio://."""
    from perfkit.tiers.promote import promote

    engine, alluxio = _tier_context(profile)
    with engine:
        _print_moves(promote(engine, table, newest, alluxio), "promoted")


@tier.command("demote")
@click.argument("table")
@click.option("--partition", "names", multiple=True, metavar="KEY=VALUE/...",
              help="A partition to demote, e.g. year=2026/month=11/day=2/hour=1; repeat for more (default: all).")
@click.option("--profile", default="lab", show_default=True, help="lab, emr or a YAML profile file.")
def tier_demote(table, names, profile):
    """Point promoted partitions of TABLE back at exactly the S3 location each had."""
    from perfkit.tiers.promote import demote

    engine, alluxio = _tier_context(profile)
    with engine:
        _print_moves(demote(engine, table, alluxio, list(names) or None), "demoted")
