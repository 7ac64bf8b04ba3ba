import json

import pytest

from perfkit import report
from perfkit.errors import PerfkitError

FAKE_KEY_ID = "AKIA" + "ABCDEFGHIJKLMNOP"  # built at run time: no key-shaped literal in the repository
FAKE_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "0123456789"  # 40 characters of AWS secret shape


@pytest.mark.parametrize("params", [
    {"aws_secret_access_key": "x"}, {"password": "x"}, {"api_token": "x"},
    {"note": FAKE_KEY_ID}, {"k": FAKE_SECRET},
])
def test_secret_looking_parameters_are_refused(params):
    with pytest.raises(PerfkitError, match="looks like a secret"):
        report.check_parameters(params)


def test_ordinary_parameters_pass():
    report.check_parameters({"rows": 1000, "engines": ["spark"], "bucket": "my-bucket", "profile": "lab"})


def test_parameters_keep_their_types():
    assert report.parse_parameters(["runs=5", "engines=[spark, hive]", "profile=lab", "ratio=0.5"]) == {
        "runs": 5, "engines": ["spark", "hive"], "profile": "lab", "ratio": 0.5}
    with pytest.raises(PerfkitError, match="is not key=value"):
        report.parse_parameters(["runs"])


def test_a_missing_notebook_is_named(tmp_path):
    with pytest.raises(PerfkitError, match="nope.ipynb does not exist"):
        report.render(tmp_path / "nope.ipynb")


def test_notebook_parameters_are_read_from_the_tagged_cell():
    names = report.notebook_parameters("notebooks/hdfs_vs_s3_queries.ipynb")
    assert {"profile", "engines", "rows", "runs", "warmup", "queries"} <= set(names)



def test_a_parameter_line_with_another_equals_sign_is_declared(tmp_path):
    """papermill's own inspection skips such lines: a declared parameter would be refused."""
    import nbformat

    cell = nbformat.v4.new_code_cell('rows = 1\nruns = 3  # e.g. -p runs=5\nquery = "a=b"\n')
    cell.metadata["tags"] = ["parameters"]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "study.ipynb")
    assert report.notebook_parameters(tmp_path / "study.ipynb") == ["rows", "runs", "query"]
    report.check_notebook_parameters(tmp_path / "study.ipynb", {"runs": 5, "query": "x"})
    with pytest.raises(PerfkitError,
                       match=r"^study.ipynb has no parameter nope: its parameters are rows, runs, query$"):
        report.check_notebook_parameters(tmp_path / "study.ipynb", {"nope": 1})

def _fake_report(root, name, stamp, params, ok=True):
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    nb = {"cells": [], "metadata": {"papermill": {"parameters": params},
                                    "perfkit": {"rendered_at": stamp, "ok": ok}}}
    (folder / f"{stamp}.ipynb").write_text(json.dumps(nb))
    (folder / f"{stamp}.html").write_text("<html></html>")


def test_index_lists_every_report_newest_first_with_parameters(tmp_path):
    _fake_report(tmp_path, "a", "2026-01-01T00:00:00", {"rows": 10})
    _fake_report(tmp_path, "b", "2026-02-01T00:00:00", {"runs": 3}, ok=False)
    page = report.write_index(tmp_path).read_text()
    assert page.index("b/2026-02-01T00:00:00.html") < page.index("a/2026-01-01T00:00:00.html")
    assert "rows=10" in page and "runs=3" in page and "FAILED" in page


def test_redact_removes_aws_key_ids():
    assert report.redact(f"key {FAKE_KEY_ID} here") == "key *** here"


def test_dates_and_times_stay_the_iso_text_written():
    # unquoted, as the st1 notebook documents it: YAML would make datetime objects, which JSON cannot carry
    assert report.parse_parameters(["window_start=2026-01-01T00:00:00", "n=2026-01-01", "e=[2026-01-02]"]) == {
        "window_start": "2026-01-01T00:00:00", "n": "2026-01-01", "e": ["2026-01-02"]}


def test_numbers_are_read_as_yaml_1_2_so_a_time_stays_text():
    """YAML 1.1 (PyYAML) reads 12:30:00 as the base-60 integer 45000, 0755 as octal and 1_000 as a thousand."""
    parsed = report.parse_parameters(["t=12:30:00", "d=1:30.5", "k=1_000", "m=0755", "o=0o17", "h=0x1F", "n=-3",
                                      "f=1.5e3", "i=-.inf", "e=[2:3, 4]", "b=true"])
    assert parsed == {"t": "12:30:00", "d": "1:30.5", "k": "1_000", "m": 755, "o": 15, "h": 31, "n": -3, "f": 1500.0,
                      "i": float("-inf"), "e": ["2:3", 4], "b": True}
    assert type(parsed["m"]) is int and type(parsed["f"]) is float


@pytest.mark.parametrize("pair, why", [
    ("engines=[spark", "expected ',' or ']'"),
    ("rows=!!python/object:os.system", "could not determine a constructor"),
    ("s=!!set {a}", "set is not JSON serializable"),
    ("t=!!timestamp 2026-01-01", "date is not JSON serializable"),
])
def test_a_value_that_is_not_plain_yaml_is_refused_with_the_parameter_and_the_fix(pair, why):
    key, _, value = pair.partition("=")
    with pytest.raises(PerfkitError) as caught:
        report.parse_parameters([pair])
    message = str(caught.value)
    assert message.startswith(f"parameter {key}: {value!r} is not a plain YAML value (") and why in message
    assert f"""quote a string: -p "{key}='{value}'\"""" in message and "\n" not in message


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"metadata": []}', b"\xff\xfe\x00"])
def test_the_index_leaves_out_an_unreadable_report_with_a_warning(tmp_path, content):
    _fake_report(tmp_path, "a", "2026-01-01T00:00:00", {"rows": 10})
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "x.ipynb").write_bytes(content if isinstance(content, bytes) else content.encode())
    (junk / "x.html").write_text("<html></html>")
    with pytest.warns(UserWarning, match=f"report {junk / 'x.ipynb'} is unreadable .*left out of the index"):
        page = report.write_index(tmp_path).read_text()
    assert "a/2026-01-01T00:00:00.html" in page and "junk/x.html" not in page


def test_the_page_title_names_the_report_and_where_s3_sat():
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from perfkit.report.notebook import report_title, to_html

    headline = ("S3 behind an emulated network (ec2-s3: 20 ms round trip ± 4 ms, 85 MB/s per connection): measured "
                "26.1 ms per small GET (1.3 ms direct), 73 MB/s on one connection, 251 MB/s on 4")
    cell = new_code_cell("comparison.network_headline()")
    cell.outputs = [new_output("execute_result", {"text/markdown": f"**{headline}**"}, execution_count=1)]
    nb = new_notebook(cells=[new_markdown_cell("# HDFS vs S3: the same queries\n\nText."), new_code_cell("x = 1"),
                             cell])
    assert report_title(nb) == f"HDFS vs S3: the same queries — {headline}"
    nb.metadata["title"] = report_title(nb)
    assert f"<title>HDFS vs S3: the same queries — {headline}</title>" in to_html(nbformat.writes(nb))
    assert report_title(new_notebook(cells=[new_markdown_cell("# Only a heading")])) == "Only a heading"
