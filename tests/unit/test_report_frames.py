"""perfkit.report.frames: how a report shows its tables and its one-line answers (issue 43's rough edges)."""
import re

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from perfkit.breakeven import break_even
from perfkit.report import fold
from perfkit.report.frames import Sentence, figure, frame_html, frame_or_sentence, show_frames_plainly

LONG = "copying pays off after 2 runs (95% CI 1–2): copy 1.4 s, S3 penalty 1.40 s per run, on every query of the suite"


@pytest.mark.parametrize("value, shown", [(1.444147, "1.44"), (0.0004, "0.0004"), (12.345, "12.3"), (2813.9, "2,814"),
                                          (0.0, "0"), (-0.123456, "-0.123"), (float("nan"), "nan")])
def test_a_figure_is_rounded_to_what_it_means(value, shown):
    assert figure(value) == shown


def _row_number_cells(table_html: str) -> list[str]:
    return re.findall(r"<tr>\s*<th>(\d+)</th>", table_html)


def test_a_table_shows_no_row_numbers_no_cut_cells_and_rounded_floats():
    frame = pd.DataFrame({"query": ["q1", "q2"], "copy_s": [1.444147, 20.0], "finding": [LONG, "never"]})
    shown = frame_html(frame)
    assert _row_number_cells(shown) == [] and "...</td>" not in shown
    assert f"<td>{LONG}</td>" in shown and "<td>1.44</td>" in shown and "1.444147" not in shown
    assert _row_number_cells(frame.to_html()) == ["0", "1"]  # pandas' own: what a reader tripped over


def test_an_index_that_means_something_stays_and_what_is_left_of_row_numbers_goes():
    frame = pd.DataFrame({"MB": [87.7]}, index=pd.Index(["q1"], name="query"))
    assert re.search(r"<th>q1</th>\s*<td>87.7</td>", frame_html(frame))
    labelled = pd.DataFrame({"MB": [1.0, 2.0]}, index=["hdfs", "s3"])
    assert re.search(r"<th>s3</th>\s*<td>2</td>", frame_html(labelled))
    filtered = pd.DataFrame({"ok": [True, False, False], "MB": [1.0, 2.0, 3.0]})
    filtered = filtered[~filtered["ok"]]  # index 1, 2: no longer a RangeIndex, still row numbers
    assert _row_number_cells(frame_html(filtered)) == [] and _row_number_cells(filtered.to_html()) == ["1", "2"]


def test_in_a_notebook_every_frame_and_fold_shows_that_way_and_a_sentence_without_quotes():
    shell = InteractiveShell.instance()
    assert show_frames_plainly(shell)
    frame = pd.DataFrame({"wall_s": [0.123456], "error": [LONG]})
    html_out = shell.display_formatter.format(frame)[0]["text/html"]
    assert html_out == frame_html(frame)
    assert _row_number_cells(fold("Raw samples", frame)._repr_html_()) == []
    said = shell.display_formatter.format(frame_or_sentence(frame.iloc[0:0], "No run failed."))[0]
    assert said["text/markdown"] == "No run failed." and said["text/plain"] == "No run failed."
    assert frame_or_sentence(frame, "No run failed.") is frame
    assert repr(Sentence("No copy failed.")) == "No copy failed."  # not 'No copy failed.'


def test_outside_ipython_nothing_is_registered(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)  # a script, a terminal: no shell
    assert show_frames_plainly() is False


def test_one_run_is_one_run():
    # copy 1 s, S3 penalty 2 s a run: copying pays off after the first run
    assert break_even(1.0, [3.0, 3.1, 2.9, 3.0], [1.0, 1.1, 0.9, 1.0]).sentence().startswith(
        "copying pays off after 1 run (95% CI 1–1)")
