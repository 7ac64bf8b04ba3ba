"""S3's own count of experiments' windows in a report: each table with its notes, a sentence said once."""
from __future__ import annotations


def show_s3_windows(windows: dict[str, object]) -> None:
    """`windows`: a title (a suite's name, or "") -> what an experiment's s3_window() gave: a table (its notes in
    attrs) or the sentence saying how S3 was counted instead, which the report says once however many suites."""
    from IPython.display import Markdown, display

    said = set()
    for title, window in windows.items():
        if isinstance(window, str):
            if window not in said:
                print(window)
                said.add(window)
            continue
        if title:
            display(Markdown(f"### {title}: S3's count of the window"))
        display(window)
        for note in window.attrs.get("notes", []):
            print("-", note)
