import pytest


@pytest.fixture(autouse=True)
def _own_state_folders(own_state_folders):
    """Every unit test in folders of its session's (tests/conftest.py)."""


@pytest.fixture
def report_from(tmp_path, monkeypatch, reads_well):
    """`perfkit report --from RUN.jsonl`, where nothing runs: the rendered page's text, after checking that the CLI
    succeeded, that nothing was measured (no results folder made) and that the page reads well (tests/conftest.py)."""
    from click.testing import CliRunner

    from perfkit.cli import main

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))

    def render(path, experiment: str) -> str:
        said = CliRunner().invoke(main, ["report", "--from", str(path)])
        assert said.exit_code == 0, said.output
        [page] = (tmp_path / "reports" / experiment).glob("*.html")
        assert not (tmp_path / "results").exists()  # nothing measured, nothing recorded
        text = page.read_text()
        reads_well(text)
        return text

    return render


@pytest.fixture
def tools_on_paper(tmp_path, monkeypatch):
    """The lab's tools (Hadoop's, Hive's and Alluxio's jars from Maven, Trino's server, perfkit's Spark plugin) in
    empty folders of the test's, for the tests that build a command line or a configuration: unit tests need nothing,
    and on a fresh machine these had fetched 1.1 GB (Trino's 821 MB server among it) before they could check a setting.
    Returns the folder they are in."""
    from perfkit.engines import spark_plugin
    from perfkit.lab import alluxio_dist, hive_jars, tools, trino_dist

    paper = tmp_path / "cache"
    folders = {(hive_jars, "metastore_home"): "hive-metastore", (hive_jars, "hive_lib"): "hive-lib",
               (hive_jars, "hive_exec_classes"): "hive-exec-classes", (tools, "hadoop_lib"): "hadoop-lib",
               (trino_dist, "trino_home"): "trino-server", (alluxio_dist, "alluxio_lib"): "alluxio-lib"}
    jars = {(alluxio_dist, "alluxio_client_jar"): "alluxio-shaded-client.jar",
            (spark_plugin, "plugin_jar"): "perfkit-io.jar"}  # not made: a path is all their callers need here
    for (module, name), folder in folders.items():
        (paper / folder).mkdir(parents=True)  # empty: a folder's jars listed are none
        monkeypatch.setattr(module, name, lambda folder=folder: paper / folder)
    for (module, name), jar in jars.items():
        monkeypatch.setattr(module, name, lambda *_, jar=jar: paper / jar)
    return paper
