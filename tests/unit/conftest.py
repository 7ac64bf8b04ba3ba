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
