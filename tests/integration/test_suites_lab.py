"""Issue 10 on the lab: TPC-H and HiBench generated into both storages and run through spark, trino and hive (the
matrix notebook rendered on them too); a user's own .sql folder on a user's own table locations from the CLI; bad
tables named before any work."""
import hashlib
import io

import nbformat
import pandas as pd
import pyarrow.orc as orc
import pytest
from click.testing import CliRunner

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.cli import main
from perfkit.datasets import locations
from perfkit.datasets.tpch import TABLES as TPCH_TABLES
from perfkit.engines import get_engine, result_hash
from perfkit.errors import PerfkitError
from perfkit.experiments.engine_storage_matrix import EngineStorageMatrix
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting.matrix_report import matrix_findings
from perfkit.findings import FINDINGS_MIME
from perfkit.report import render
from perfkit.results import read_result_file, records_frame
from perfkit.suites import load_suite
from perfkit.presenting import report_of, run_report

ENGINES = ["spark", "trino"]  # timed on both storages; Hive answers every query on HDFS, untimed (below)


@pytest.fixture(scope="module")
def tpch(profile):
    matrix = EngineStorageMatrix(profile, engines=ENGINES, suite="tpch", scale=0.01, runs=1, warmup=0,
                                 query_timeout_s=600)
    matrix.run(progress=False)
    return matrix


@pytest.fixture(scope="module")
def reference(profile) -> dict[str, str]:
    """Each TPC-H query's answer from Trino on the connector's own rows (no files involved), the same query text."""
    tables = {t: f'tpch."sf0.01".{t}' for t in TPCH_TABLES}
    with get_engine("trino", profile) as trino:
        return {q.id: result_hash(trino.execute(q.for_tables(tables, "trino"))) for q in load_suite("tpch")}


def test_tpch_every_query_gives_one_result_on_every_storage_and_engine_equal_to_the_generators(tpch, reference):
    frame = tpch.results.to_frame()
    assert frame["ok"].all(), frame.loc[~frame["ok"], ["subject", "storage", "case", "error"]].to_string()
    assert len(frame) == 22 * len(ENGINES) * 2
    assert report_of(tpch).problems().empty, report_of(tpch).problems().to_string()
    for case, hashes in frame.groupby("case")["result_hash"]:
        assert set(hashes) == {reference[case]}, case
    assert tpch.tableset.details["rows"]["lineitem"] == 60175  # TPC-H's lineitem at scale factor 0.01
    ranking = report_of(tpch).ranking()
    assert sorted(ranking["cell"]) == sorted(f"{e}/{s}" for e in ENGINES for s in ("hdfs", "s3"))
    assert (ranking["queries"] == 22).all()


def test_tpch_runs_are_counted_alike_by_the_s3_server_and_the_engines(tpch, s3_counts_agree):
    """Each of the 22 queries once per engine and storage, as the matrix ran them (test_io_accounting_lab: the taxi
    suite's runs after a warm-up and after one another)."""
    runs = [r for r in tpch.results.records if r.phase == "measured" and r.ok]
    assert len(runs) == 22 * len(ENGINES) * 2
    s3_counts_agree(runs, set(ENGINES))


def test_hive_gives_the_generators_answer_to_every_tpch_query(tpch, reference):
    """Hive's dialect on all 22 queries, on the placed files in HDFS. Not timed on both storages as the others are:
    its query text does not depend on the storage, its S3 reads are tested on the taxi suite (test_engine_conformance,
    test_io_accounting_lab), and its 44 timed runs cost two minutes of this suite."""
    with get_engine("hive", tpch.profile) as hive:
        tables = tpch.register_tables(hive, tpch.tableset)["hdfs"]
        answers = {q.id: result_hash(hive.execute(q.for_tables(tables, "hive"))) for q in tpch.suite_queries}
    assert sorted(answers) == sorted(reference)
    assert {q for q in answers if answers[q] != reference[q]} == set()


def test_tpch_results_agree_with_an_independent_generator_and_engine(tpch):
    table = tpch.reference_check(progress=False)
    assert list(table["query"]) == [f"q{n}" for n in range(1, 23)]
    assert set(table["verdict"]) == {"agrees"}, table.to_string()
    assert (table["runs compared"] == len(ENGINES) * 2).all()
    assert table.attrs["by"].startswith("DuckDB ") and "tpchgen-cli" in table.attrs["by"]
    assert tpch.results.config["reference"]["verdicts"]["q22"] == "agrees"


def test_a_placed_dataset_is_reused_and_one_changed_behind_perfkits_back_is_remade(profile, tpch):
    from perfkit.datasets.generate import Placement, place_generated
    from perfkit.datasets.generator import get_generator

    again = Placement()
    with get_generator("tpch", profile, 0.01) as gen:
        place_generated(gen, "orc", ["hdfs", "s3"], progress=False, placement=again)
    assert again.reused == ["hdfs", "s3"] and not again.generated_s
    victim = locations.profile_location(profile, "s3", "datasets", "tpch-sf0.01", "orc", "nation")
    name = sorted(locations.list_files(profile, victim))[0]
    s3_storage.s3_client(profile).put_object(Bucket=victim.bucket, Key=f"{victim.path}/{name}", Body=b"not orc")
    remade = Placement()
    with get_generator("tpch", profile, 0.01) as gen:
        tableset = place_generated(gen, "orc", ["hdfs", "s3"], progress=False, placement=remade)
    assert remade.reused == ["hdfs"] and not remade.generated_s and list(remade.copied_s) == ["s3"]
    assert tableset.tables["s3"]["nation"].bytes > len(b"not orc")
    hdfs_nation = locations.profile_location(profile, "hdfs", "datasets", "tpch-sf0.01", "orc", "nation")
    files = locations.list_files(profile, hdfs_nation)
    assert locations.list_files(profile, victim) == files
    for name in files:  # the copy is the HDFS file, byte for byte (read back whole from both storages)
        with hdfs_storage.webhdfs_client(profile).read(f"{hdfs_nation.path}/{name}") as reader:
            on_hdfs = reader.read()
        on_s3 = s3_storage.s3_client(profile).get_object(Bucket=victim.bucket,
                                                         Key=f"{victim.path}/{name}")["Body"].read()
        assert hashlib.sha256(on_s3).digest() == hashlib.sha256(on_hdfs).digest()
    third = Placement()
    with get_generator("tpch", profile, 0.01) as gen:  # the source and its copy now agree: both reused
        place_generated(gen, "orc", ["hdfs", "s3"], progress=False, placement=third)
    assert third.reused == ["hdfs", "s3"] and not third.copied_s


def test_a_copy_that_reads_other_bytes_than_listed_stops_with_the_file_named(profile, tpch):
    from perfkit.datasets.replicate import copy_hdfs_to_s3

    src = locations.profile_location(profile, "hdfs", "datasets", "tpch-sf0.01", "orc", "region")
    dst = locations.profile_location(profile, "s3", "perfkit-test-copy", "region")
    files = locations.list_files(profile, src)
    name = sorted(files)[0]
    try:
        with pytest.raises(PerfkitError, match=rf"copy of hdfs://{src.path}/{name}: read {files[name]} bytes of "
                                               rf"{files[name] + 1}\. Fix: check that nothing writes"):
            copy_hdfs_to_s3(profile, [(src, dst, {name: files[name] + 1})])
    finally:
        locations.delete_tree(profile, dst)


@pytest.fixture(scope="module")
def matrix_report(profile, tpch, tmp_path_factory):
    """The matrix notebook rendered from stored runs of both suites (its `results`, issue 45), measuring nothing:
    TPC-H's are the fixture's above (22 queries through Spark and Trino, checked against the independent reference),
    HiBench's generated and written here through Spark, Trino and Hive. The notebook's measuring path runs in the
    cluster shape's tests (test_zzz_cluster_shape_lab). The report, the records of both suites, and the Findings the
    measuring runs' own reports give."""
    out = tmp_path_factory.mktemp("matrix-report")
    if "reference" not in tpch.results.config:  # this module's reference test may not have run before (-k)
        tpch.reference_check(progress=False)
    hibench = EngineStorageMatrix(profile, engines=[*ENGINES, "hive"], suite="hibench", scale="tiny", runs=1,
                                  warmup=0, query_timeout_s=600)
    run_report(hibench, progress=False)
    files = [tpch.results.path, hibench.results.path]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PERFKIT_RESULTS", str(out / "results"))
        report = render("notebooks/engine_storage_matrix.ipynb", {"results": [str(f) for f in files]},
                        out_root=out / "reports")
    assert not (out / "results").exists()  # nothing measured, nothing recorded
    runs = {}
    for path in files:
        rows = read_result_file(path)
        runs[rows[0]["config"]["dataset"]["generator"]] = records_frame(rows)
    return report, runs, matrix_findings([report_of(tpch), report_of(hibench)]).sentences  # as the measuring runs'


def test_the_matrix_notebook_ranks_every_cell_of_both_suites(matrix_report, reads_well):
    report, runs, live_findings = matrix_report
    assert report.ok, report.error
    page = report.html.read_text()
    reads_well(page)
    for heading in ("Ranking, best to worst", "geomean (s)", "× best", "Heat map", "Write workloads, apart",
                    "Every engine ran every query.", "trino/hdfs", "spark/s3", "hive/s3", "Reference: DuckDB "):
        assert heading in page, heading
    assert page.count("data:image/png;base64") >= 4  # a ranking plot and a heat map per suite
    assert sorted(runs) == ["hibench", "tpch"]
    shown = [s for cell in nbformat.read(report.notebook, as_version=4).cells if cell.cell_type == "code"
             for output in cell.get("outputs", []) for s in output.get("data", {}).get(FINDINGS_MIME, {}).get(
                 "sentences", [])]
    assert shown == live_findings and shown  # the stored runs' Findings are the live runs' (issue 69)


def test_hibench_writes_a_full_copy_and_the_aggregation_pandas_computes(profile, matrix_report):
    """HiBench's writes through each engine, from the matrix report's records (a failure or a result differing
    between cells fails the report: report.ok above)."""
    engines = [*ENGINES, "hive"]
    frame = matrix_report[1]["hibench"]
    assert frame["ok"].all(), frame.loc[~frame["ok"], ["subject", "storage", "case", "error"]].to_string()
    cells = {f"{e}/{s}" for e in engines for s in ("hdfs", "s3")}
    for case, group in frame.groupby("case"):
        assert set(group["subject"] + "/" + group["storage"]) == cells, case
    uservisits = _read_orc_folder(profile, str(locations.profile_location(profile, "hdfs", "datasets", "hibench-tiny",
                                                                          "orc", "uservisits")))
    assert len(uservisits) == 1000  # HiBench's tiny scale
    scans = frame[frame["case"] == "scan"]
    assert len(scans) == len(cells) and (scans["rows"] == len(uservisits)).all()
    sums = uservisits.groupby("sourceip")["adrevenue"].sum()
    expected = result_hash([(ip, float(total)) for ip, total in sums.items()])
    assert set(frame.loc[frame["case"] == "aggregation", "result_hash"]) == {expected}
    for where in ("hdfs", "s3"):  # what the writes wrote is gone: the run's own folder only
        run_folder = locations.profile_location(profile, where, "runs", frame["run_id"].iloc[0])
        assert not locations.list_files(profile, run_folder)


def _read_orc_folder(profile, url: str) -> pd.DataFrame:
    loc = locations.parse_location(url, "test")
    files = locations.list_files(profile, loc)
    client = hdfs_storage.webhdfs_client(profile)
    frames = []
    for name in sorted(files):
        with client.read(f"{loc.path}/{name}") as reader:
            frames.append(orc.read_table(io.BytesIO(reader.read())).to_pandas())
    return pd.concat(frames, ignore_index=True)


def test_own_sql_on_own_tables_from_the_cli_leaves_the_tables_untouched(profile, tpch, tmp_path):
    suite = tmp_path / "my-sql"
    suite.mkdir()
    (suite / "flags.sql").write_text("-- Lines by return flag\nSELECT l_returnflag, count(*) FROM {table:lines} "
                                     "GROUP BY l_returnflag;\n")
    (suite / "big_orders.sql").write_text("SELECT count(*) FROM {table:orders} o JOIN {table:lines} l "
                                          "ON o.o_orderkey = l.l_orderkey WHERE o.o_totalprice > 300000")
    hdfs = {t: locations.profile_location(profile, "hdfs", "datasets", "tpch-sf0.01", "orc", t)
            for t in ("lineitem", "orders")}
    s3 = {t: locations.profile_location(profile, "s3", "datasets", "tpch-sf0.01", "orc", t)
          for t in ("lineitem", "orders")}
    before = {str(loc): locations.list_files(profile, loc) for loc in [*hdfs.values(), *s3.values()]}
    args = ["queries", "--engines", "trino,spark", "--runs", "1", "--warmup", "0", "--suite", str(suite),
            "--table", f"hdfs.lines={hdfs['lineitem']}", "--table", f"hdfs.orders={hdfs['orders']}",
            "--table", f"s3.lines={s3['lineitem']}", "--table", f"s3.orders={s3['orders']}"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "flags: Lines by return flag" in result.output and "big_orders" in result.output
    assert {str(loc): locations.list_files(profile, loc) for loc in [*hdfs.values(), *s3.values()]} == before


def test_bad_table_locations_are_named_before_any_work(profile, tmp_path):
    client = hdfs_storage.webhdfs_client(profile)
    base = profile.hdfs_path("test-bad-tables")
    client.makedirs(f"{base}/empty")
    client.write(f"{base}/mixed/a.orc", b"x", overwrite=True)
    client.write(f"{base}/mixed/b.parquet", b"x", overwrite=True)
    s3 = locations.profile_location(profile, "s3", "datasets", "tpch-sf0.01", "orc", "nation")
    try:
        for folder, message in [("missing", r"does not exist\. Fix: give an existing folder"),
                                ("empty", r"is empty \(no data file in it or in key=value partition folders below it"),
                                ("mixed", r"mixes formats \(orc, parquet\)")]:
            comparison = QueryComparison(profile, engines=["trino"], suite=str(_one_query(tmp_path)),
                                         tables={"hdfs": f"hdfs://{base}/{folder}", "s3": str(s3)})
            with pytest.raises(PerfkitError, match=message):
                comparison.prepare(progress=False)
    finally:
        client.delete(base, recursive=True)


def _one_query(tmp_path):
    folder = tmp_path / "one"
    folder.mkdir(exist_ok=True)
    (folder / "n.sql").write_text("SELECT count(*) FROM {table}")
    return folder
