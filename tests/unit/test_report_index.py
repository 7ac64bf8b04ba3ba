"""reports/index.html: grouped by report, where each run ran, a link to each run's previous run; and a notebook made
for EMR's PySpark kernel renders here on the Python kernel."""
import json
import re

import nbformat

from perfkit import report
from perfkit.findings import FINDINGS_MIME


def _stored(root, name, stamp, params=None, perfkit=None, profile_default=None, finding=None):
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    cells = []
    if finding is not None:  # as perfkit.findings.Findings displays in an output
        cells = [{"cell_type": "code", "metadata": {}, "execution_count": 3, "source": "comparison.findings()",
                  "outputs": [{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                               "data": {"text/plain": "Findings: ...", FINDINGS_MIME: finding}}]}]
    if profile_default is not None:
        cells.insert(0, {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [],
                         "execution_count": None, "source": f'profile = "{profile_default}"  # lab | emr\nrows = 10\n'})
    info = {"rendered_at": stamp, "ok": True, **(perfkit or {})}
    nb = {"cells": cells, "metadata": {"papermill": {"parameters": params or {}}, "perfkit": info}}
    (folder / f"{stamp}.ipynb").write_text(json.dumps(nb))
    (folder / f"{stamp}.html").write_text("<html></html>")


def _rows(page, name):
    """The rows of one report's section, as lists of cell texts (tags stripped)."""
    section = page.split(f'<h2 id="{name}">', 1)[1].split("</table>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r"<tr><td>.*?</tr>", section)]


def test_runs_are_grouped_by_report_newest_report_first_with_where_they_ran_and_the_previous_run(tmp_path):
    _stored(tmp_path, "hdfs_vs_s3", "2026-01-01T00:00:00", profile_default="lab")
    _stored(tmp_path, "hdfs_vs_s3", "2026-01-03T00:00:00", {"profile": "emr", "bucket": "b"},
            {"ran_on": {"kind": "emr", "cluster_id": "j-2QMOV6JAX1TS2", "execution_id": "ex-1"}})
    _stored(tmp_path, "hdfs_vs_s3", "2026-01-02T00:00:00", {"profile": "mine.yml"}, profile_default="lab",
            finding={"sentences": ["Trino 476: S3 slower than HDFS on 4 of 4 queries", "second"], "conditions": "c"})
    _stored(tmp_path, "st1", "2026-02-01T00:00:00", {"rows": 3}, {"ok": False, "status": "timed out"},
            profile_default="lab")
    page = report.write_index(tmp_path).read_text()
    assert page.index('<h2 id="st1">') < page.index('<h2 id="hdfs_vs_s3">')  # st1 ran last
    assert _rows(page, "hdfs_vs_s3") == [
        ["2026-01-03T00:00:00", "", "ok", "EMR j-2QMOV6JAX1TS2 (profile emr)", "profile=emr, bucket=b",
         "2026-01-02T00:00:00"],
        ["2026-01-02T00:00:00", "Trino 476: S3 slower than HDFS on 4 of 4 queries", "ok", "profile mine.yml",
         "profile=mine.yml", "2026-01-01T00:00:00"],
        ["2026-01-01T00:00:00", "", "ok", "lab", "", "first run"],
    ]
    assert _rows(page, "st1") == [["2026-02-01T00:00:00", "", "TIMED OUT", "lab", "rows=3", "first run"]]
    # each previous-run cell links to that run's page
    newest = page.split('<h2 id="hdfs_vs_s3">', 1)[1].split("</tr>")[1]
    assert newest.endswith('<td><a href="hdfs_vs_s3/2026-01-02T00:00:00.html">2026-01-02T00:00:00</a></td>')
    assert "<script" not in page  # a static page


def test_an_empty_reports_folder_says_how_to_make_a_report(tmp_path):
    assert "perfkit report NOTEBOOK" in report.write_index(tmp_path).read_text()


def test_a_notebook_for_emrs_pyspark_kernel_renders_here_on_the_python_kernel(tmp_path):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("rows = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print('rows', rows * 2)")]
    nb.metadata["kernelspec"] = {"name": "pysparkkernel", "display_name": "PySpark", "language": "python"}
    path = tmp_path / "study.ipynb"
    nbformat.write(nb, path)
    result = report.render(path, {"rows": 21}, out_root=tmp_path / "reports")
    assert result.ok, result.error
    executed = nbformat.read(result.notebook, as_version=4)
    assert executed.cells[-1].outputs[0].text == "rows 42\n"
