"""Tables as the reports show them, and the "What each run asked of the storage" table with what is said under it."""
from __future__ import annotations

import pandas as pd

from perfkit.report.frames import frame_html


def table_html(frame: pd.DataFrame) -> str:
    """`frame` as HTML without its row numbers, a missing value left blank: pandas writes "NaN", which reads as a
    fault, where the lines under the table say why the count is not there. No cell cut; numbers as figure() rounds
    them."""
    return frame_html(frame, index=False, na_rep="", notebook=False)


def show_table(frame: pd.DataFrame) -> None:
    from IPython.display import HTML, display

    display(HTML(table_html(frame)))


def show_storage_io(io: pd.DataFrame) -> None:
    """What storage_io() gave: the table, the prices it was costed at, and why each blank is blank."""
    show_table(io)
    print("Prices:", io.attrs["basis"])
    for line in io.attrs["missing"]:
        print("-", line)
