"""Reports: render a notebook with papermill into reports/<name>/<timestamp>.ipynb + .html, and rebuild the index.

One concern per module: rendering (papermill run), notebook (read, tidy, HTML), parameters, redaction, store
(where and how a report is written: `perfkit report` and EMR runs both go through store_report) and index.
"""
from perfkit.report.fold import fold
from perfkit.report.frames import Sentence, frame_or_sentence, show_frames_plainly
from perfkit.report.index import write_index
from perfkit.report.notebook import read_notebook, tidy, to_html
from perfkit.report.parameters import (
    check_notebook_parameters,
    check_parameters,
    notebook_parameters,
    parse_parameters,
)
from perfkit.report.redaction import REDACTED, SECRET_VALUE, redact, redact_notebook
from perfkit.report.rendering import render
from perfkit.report.store import Report, report_dir, store_report

__all__ = [
    "REDACTED", "SECRET_VALUE", "Report", "check_notebook_parameters", "fold", "check_parameters",
    "notebook_parameters", "parse_parameters", "read_notebook", "redact", "redact_notebook", "render", "report_dir",
    "store_report", "tidy", "to_html", "write_index", "Sentence", "frame_or_sentence",
]

show_frames_plainly()  # in a notebook (IPython) only: every frame a report shows, without row numbers or "..."
