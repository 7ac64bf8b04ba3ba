"""A storage's own count of experiments' windows in a report: each table with its notes, a sentence said once."""
from __future__ import annotations

from perfkit.report.tables import show_table


def show_windows(storage: str, windows: dict[str, object]) -> None:
    """`windows`: a title (a suite's name, or "") -> what an experiment's s3_window() or hdfs_window() gave for
    `storage` ("S3", "HDFS"): a table (its notes in attrs) or the sentence saying how the storage was counted instead,
    which the report says once however many suites ("": nothing to say)."""
    from IPython.display import Markdown, display

    said = set()
    for title, window in windows.items():
        if isinstance(window, str):
            if window and window not in said:
                print(window)
                said.add(window)
            continue
        if title:
            display(Markdown(f"### {title}: {storage}'s count of the window"))
        show_table(window)
        for note in window.attrs.get("notes", []):
            print("-", note)
