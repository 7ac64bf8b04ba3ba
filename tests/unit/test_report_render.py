"""Where a report is written, what its stderr keeps, and whether its HTML shows code."""
import json
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import nbformat
import pytest

from perfkit import atomic, report
from perfkit.errors import PerfkitError


@pytest.mark.parametrize("name", ["...ipynb", ".ipynb", "..ipynb", ".hidden.ipynb"])
def test_a_notebook_name_without_a_plain_stem_is_refused(tmp_path, name):
    notebook = tmp_path / "nb" / name
    notebook.parent.mkdir()
    notebook.write_text(nbformat.writes(nbformat.v4.new_notebook()))
    out_root = tmp_path / "reports"
    with pytest.raises(PerfkitError, match="no plain report folder name.*rename it"):
        report.render(notebook, out_root=out_root)
    assert not out_root.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["nb"]  # nothing written


def test_a_report_folder_linked_outside_the_root_is_refused(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "reports" / "study").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PerfkitError, match="would lie outside"):
        report.report_dir(tmp_path / "study.ipynb", tmp_path / "reports")


def test_a_plain_name_gets_its_folder_under_the_root(tmp_path):
    assert report.report_dir(tmp_path / "st1_throughput_burst.ipynb", tmp_path) == tmp_path / "st1_throughput_burst"


def _stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_tidy_drops_jvm_log_lines_and_keeps_the_rest():
    noisy = [
        "WARNING: Using incubator modules: jdk.incubator.vector\n",
        "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties\n",
        "Setting default log level to \"WARN\".\n",
        "To adjust logging level use sc.setLogLevel(newLevel). For SparkR, use setLogLevel(newLevel).\n",
        "24/05/01 12:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library for your platform... "
        "using builtin-java classes where applicable\n",
        "2024-05-01 12:00:01,123 INFO mapreduce.Job: Running job: job_1\n",
        "SLF4J: Class path contains multiple SLF4J bindings.\n",
    ]
    useful = [
        "queries: 100%|##########| 12/12 [00:03<00:00,  3.9query/s]\n",
        "24/05/01 12:00:02 ERROR Executor: Exception in task 0.0\n",
        "Traceback (most recent call last):\n",
    ]
    only_noise = nbformat.v4.new_code_cell("spark = start()", outputs=[_stream("stderr", "".join(noisy[:4]))])
    mixed = nbformat.v4.new_code_cell("run()", outputs=[
        _stream("stderr", noisy[4] + useful[0]), _stream("stderr", "".join(noisy[5:]) + "".join(useful[1:])),
        _stream("stdout", "Setting default log level to stdout is kept\n")])
    nb = nbformat.v4.new_notebook()
    nb.cells = [only_noise, mixed]

    tidied = report.tidy(nb)

    assert tidied.cells[0].outputs == []  # nothing left: the stream is gone
    stderr, stdout = tidied.cells[1].outputs
    assert stderr.name == "stderr" and stderr.text == "".join(useful)
    assert stdout.text == "Setting default log level to stdout is kept\n"  # only stderr is filtered
    assert tidied.cells[1].source == "run()"


def _notebook_json():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# The study"), nbformat.v4.new_code_cell(
        "distinctive_name = 41 + 1\ndistinctive_name", execution_count=1,
        outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=1)])]
    return nbformat.writes(nb)


def test_html_hides_code_and_prompts_by_default():
    page = report.to_html(_notebook_json())
    assert "distinctive_name" not in page and "[1]:" not in page  # no In [1]: / Out[1]: prompts
    assert "The study" in page and "<pre>42</pre>" in page  # markdown and outputs stay


def test_html_shows_code_when_asked():
    page = report.to_html(_notebook_json(), show_code=True)
    assert "distinctive_name" in page and "[1]:" in page and "<pre>42</pre>" in page


def test_the_cli_passes_show_code(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from perfkit.cli import main

    seen = {}

    def fake_render(notebook, parameters, kernel=None, show_code=False):
        seen["show_code"] = show_code
        return report.Report(tmp_path / "r.ipynb", tmp_path / "r.html", ok=True)

    monkeypatch.setattr(report, "render", fake_render)
    for args, expected in (([], False), (["--show-code"], True)):
        assert CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb", *args]).exit_code == 0
        assert seen["show_code"] is expected


def _study(tmp_path, kernelspec=True, name="study.ipynb"):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("rows = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params]
    if kernelspec:
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


@pytest.fixture
def no_execution(monkeypatch):
    """Fails the test if papermill is asked to execute anything."""
    import papermill

    def execute(*args, **kwargs):
        raise AssertionError("papermill was called")

    monkeypatch.setattr(papermill, "execute_notebook", execute)


@pytest.mark.parametrize("name, content, why", [
    ("plain.ipynb", b"hello\n", "not JSON"),
    ("binary.ipynb", bytes(range(256)), "binary, not UTF-8 text"),
    ("script.py", b"print(1)\n", "not JSON"),
    ("object.ipynb", b'{"a": 1}', "JSON without a list of cells"),
    ("broken.ipynb", b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"}]}',
     "invalid: "),
])
def test_a_file_that_is_not_a_notebook_is_named_and_nothing_is_written(tmp_path, no_execution, name, content, why):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(PerfkitError) as caught:
        report.render(path, out_root=tmp_path / "reports")
    assert str(caught.value).startswith(f"{path} is not a Jupyter notebook ({why}")
    assert not (tmp_path / "reports").exists()


def test_a_notebook_without_a_kernel_asks_for_one(tmp_path, no_execution):
    with pytest.raises(PerfkitError, match=r"study.ipynb has no kernel: pass --kernel NAME \(installed: .*python3"):
        report.render(_study(tmp_path, kernelspec=False), out_root=tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


def test_an_unknown_kernel_lists_the_installed_ones_and_leaves_no_folder(tmp_path, no_execution):
    with pytest.raises(PerfkitError, match=r"--kernel 'nosuchkernel' is not an installed Jupyter kernel: "
                                           r"pass --kernel with one of .*python3"):
        report.render(_study(tmp_path), out_root=tmp_path / "reports", kernel="nosuchkernel")
    assert not (tmp_path / "reports").exists()


def test_the_report_folders_are_checked_before_anything_runs(tmp_path, monkeypatch, no_execution):
    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "afile"))
    with pytest.raises(PerfkitError, match=r"reports folder .*afile is not a folder: set PERFKIT_REPORTS to a "):
        report.render(_study(tmp_path))

    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))
    (tmp_path / "reports" / "study").mkdir(parents=True)

    real_mkstemp = tempfile.mkstemp

    def read_only_study(*args, dir=None, **kwargs):  # as root, chmod would not stop the writes
        if Path(dir).name == "study":
            raise PermissionError(13, "Permission denied", dir)
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", read_only_study)
    with pytest.raises(PerfkitError, match=r"^report folder .*reports/study is not writable \(Permission denied\): "
                                           r"make it writable, or set PERFKIT_REPORTS to a writable folder$"):
        report.render(_study(tmp_path))


STARTED = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _store(out_dir, marker):
    """store_report of a one-cell notebook saying `marker`, all started in the same millisecond."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(marker)])
    return report.store_report(out_dir, nb, ok=True, error=None, parameters={}, show_code=False, seconds=1.0,
                               started=STARTED)


def test_a_report_never_overwrites_another(tmp_path):
    out_dir = tmp_path / "study"
    out_dir.mkdir()
    first, second = _store(out_dir, "run 1"), _store(out_dir, "run 2")
    (out_dir / "20260101T000000.000Z-3.html").write_text("an orphan page")  # its name is taken too
    third = _store(out_dir, "run 4")
    assert [first.notebook.name, second.notebook.name, third.notebook.name] == [
        "20260101T000000.000Z.ipynb", "20260101T000000.000Z-2.ipynb", "20260101T000000.000Z-4.ipynb"]
    assert "run 1" in first.notebook.read_text() and "run 1" in first.html.read_text()
    assert "run 2" in second.html.read_text() and first.html == first.notebook.with_suffix(".html")
    assert (out_dir / "20260101T000000.000Z-3.html").read_text() == "an orphan page"
    assert "20260101T000000.000Z-4.html" in (tmp_path / "index.html").read_text()  # listed in the index


def test_a_stored_report_carries_its_metadata_and_is_shared_0644(tmp_path):
    (tmp_path / "study").mkdir()  # callers make the report folder before the run
    nb = nbformat.v4.new_notebook()
    stored = report.store_report(tmp_path / "study", nb, ok=False, error="boom", parameters={"rows": 3},
                                 show_code=True, seconds=1.26, started=STARTED, page="<p>its own page</p>",
                                 status="timed out")
    meta = json.loads(stored.notebook.read_text())["metadata"]["perfkit"]
    assert meta.pop("rendered_at").startswith("20")
    assert meta == {"seconds": 1.3, "ok": False, "error": "boom", "parameters": {"rows": 3}, "show_code": True,
                    "status": "timed out"}
    assert (stored.ok, stored.error) == (False, "boom") and stored.html.read_text() == "<p>its own page</p>"
    assert {stat.S_IMODE(p.stat().st_mode) for p in (stored.notebook, stored.html)} == {0o644}


def test_a_report_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    real = atomic.write_text

    def full_disk(path, text, **kwargs):
        if path.suffix == ".html":
            raise OSError(28, "No space left on device", str(path))
        return real(path, text, **kwargs)

    monkeypatch.setattr(atomic, "write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _store(tmp_path, "run")
    assert list(tmp_path.iterdir()) == []


def test_jvm_lines_glued_to_a_progress_bar_are_cut_and_the_bar_kept():
    import nbformat

    from perfkit.report import tidy

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("run()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=(
        "runs:   0%|          | 0/96 [00:00<?, ?query/s]WARNING: Using incubator modules: jdk.incubator.vector\n"
        "runs: 100%|##########| 96/96 [01:15<00:00]\n"))]
    nb.cells = [cell]
    text = tidy(nb).cells[0].outputs[0].text
    assert "incubator" not in text
    assert text == "runs:   0%|          | 0/96 [00:00<?, ?query/s]\nruns: 100%|##########| 96/96 [01:15<00:00]\n"
