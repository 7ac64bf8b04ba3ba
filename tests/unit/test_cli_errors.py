"""What the terminal shows when something goes wrong below a command: one line, never a traceback."""
import warnings

import nbformat
import pytest
from click.testing import CliRunner

from perfkit import report
from perfkit.cli import main


def _lines(result):
    return [line for line in result.output.splitlines() if line.strip()]


@pytest.mark.parametrize("error, line", [
    (PermissionError(13, "Permission denied", "/srv/r/x.html"), "perfkit: Permission denied: /srv/r/x.html"),
    (NotADirectoryError(20, "Not a directory", "/srv/file/x"), "perfkit: Not a directory: /srv/file/x"),
    (OSError(28, "No space left on device"), "perfkit: No space left on device"),
    (OSError(18, "Invalid cross-device link", "/a", None, "/b"), "perfkit: Invalid cross-device link: /a -> /b"),
])
def test_an_os_error_that_escapes_is_one_line(monkeypatch, error, line):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(report, "render", fail)
    result = CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb"])
    assert result.exit_code == 1 and _lines(result) == [line]


def test_ctrl_c_is_left_to_click(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "render", interrupted)
    result = CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb"])
    assert result.exit_code == 1 and _lines(result) == ["Aborted!"]


def test_ctrl_c_on_emr_run_says_the_execution_was_stopped_and_where_its_report_is(monkeypatch, tmp_path):
    from perfkit import emr

    def interrupted(*args, **kwargs):
        raise emr.EmrRunInterrupted(emr.EmrRun("ex-1", "STOPPED", "interrupted", html=tmp_path / "r.html",
                                               error="interrupted (Ctrl-C); execution ex-1 stopped"))

    monkeypatch.setattr(emr, "run_notebook", interrupted)
    result = CliRunner().invoke(main, ["emr", "run", "notebooks/st1_throughput_burst.ipynb", "--editor-id", "e-1",
                                       "--cluster", "j-1"])
    assert result.exit_code == 130 and _lines(result) == [
        "perfkit: interrupted (Ctrl-C); execution ex-1 stopped; the report keeps what EMR wrote: "
        f"{tmp_path / 'r.html'}"]


def test_a_warning_is_one_line(monkeypatch, tmp_path):
    def warn(*args, **kwargs):
        warnings.warn("report reports/junk/x.ipynb is unreadable (JSONDecodeError): left out of the index",
                      stacklevel=2)
        return report.Report(tmp_path / "r.ipynb", tmp_path / "r.html", ok=True)

    monkeypatch.setattr(report, "render", warn)
    result = CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb"])
    assert result.exit_code == 0 and _lines(result) == [
        "warning: report reports/junk/x.ipynb is unreadable (JSONDecodeError): left out of the index",
        f"report: {tmp_path / 'r.html'}"]


@pytest.mark.parametrize("args, start", [
    (["-p", "engines=[spark"], "perfkit: parameter engines: '[spark' is not a plain YAML value"),
    (["-p", "rows=!!python/object:os.system"], "perfkit: parameter rows: '!!python/object:os.system' is not a plain"),
    (["--kernel", "nosuchkernel"], "perfkit: --kernel 'nosuchkernel' is not an installed Jupyter kernel"),
])
def test_report_input_errors_are_one_line(tmp_path, monkeypatch, args, start):
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))
    result = CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb", *args])
    assert result.exit_code == 1 and len(_lines(result)) == 1 and _lines(result)[0].startswith(start)
    assert not (tmp_path / "reports").exists()


def test_report_of_a_file_that_is_not_a_notebook_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))
    (tmp_path / "plain.ipynb").write_text("hello")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]})]
    nbformat.write(nb, tmp_path / "nokernel.ipynb")
    for name, line in (("plain.ipynb", "is not a Jupyter notebook (not JSON)"),
                       ("nokernel.ipynb", "has no kernel: pass --kernel NAME")):
        result = CliRunner().invoke(main, ["report", str(tmp_path / name)])
        assert result.exit_code == 1 and len(_lines(result)) == 1 and line in result.output


def test_report_to_an_unusable_reports_folder_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "afile"))
    result = CliRunner().invoke(main, ["report", "notebooks/st1_throughput_burst.ipynb"])
    assert result.exit_code == 1 and _lines(result) == [
        f"perfkit: reports folder {tmp_path / 'afile'} is not a folder: set PERFKIT_REPORTS to a writable folder"]
