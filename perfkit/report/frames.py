"""How a report shows a table: no column of row numbers, no cell cut short with "...", numbers rounded to what they
mean; and a sentence shown as a sentence, not as a quoted Python string.

In a notebook every pandas frame is shown through frame_html once show_frames_plainly() ran (perfkit.report runs it
on import, inside IPython only); folded tables (perfkit.report.fold) use it too."""
from __future__ import annotations

import math
import sys

import pandas as pd


def figure(value: float) -> str:
    """A measured number as a reader wants it: three significant digits below 100 (1.44 s, 0.0004 USD, 12.3 MB),
    whole numbers with thousands separators from 100 up (2,814 MB); 0 as 0."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def row_numbers(index: pd.Index) -> bool:
    """An index that only numbers the rows: unnamed integers (0, 1, 2 ..., or what is left of them after a filter)."""
    return not isinstance(index, pd.MultiIndex) and index.name is None and pd.api.types.is_integer_dtype(index)


def frame_html(frame: pd.DataFrame, index: bool | None = None, na_rep: str = "—", notebook: bool = True) -> str:
    """The frame as an HTML table: its index when asked, else only when it means something; every cell whole, floats
    through figure(), a missing value as a dash (a reader takes "NaN" or "None" for a result)."""
    with pd.option_context("display.max_colwidth", None):
        return frame.to_html(index=not row_numbers(frame.index) if index is None else index, na_rep=na_rep,
                             float_format=figure, max_rows=None, max_cols=None, notebook=notebook)


class Sentence(str):
    """A line of text a report shows as itself (display(Sentence("No run failed.")): no quotes)."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return str(self)


def frame_or_sentence(frame: pd.DataFrame | None, sentence: str):
    """The frame when it has rows, else (none, or no rows) the sentence that says why ("No run failed.")."""
    return frame if frame is not None and len(frame) else Sentence(sentence)


def show_frames_plainly(shell=None) -> bool:
    """Show every pandas frame through frame_html in this IPython shell (default: the running one). False outside
    IPython, where nothing is shown."""
    if shell is None:
        ipython = sys.modules.get("IPython")  # a running shell has imported it; a plain script need not pay for it
        shell = ipython.get_ipython() if ipython else None
    if shell is None:
        return False
    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
    return True
