"""Progress bars that suit where they show: a widget in JupyterLab, a live bar on a terminal, and, while perfkit renders
a report, a live bar on the renderer's terminal and one plain line in the report when done (a redrawn bar in a
report is noise in a stderr box)."""
from __future__ import annotations

import functools
import os
import sys

from tqdm import tqdm as _text_bar

# Set by perfkit's report renderer in the kernel's environment: the file the live bars go to while it renders
# (the renderer's terminal), or empty for none. Its presence says "a report is rendering".
RENDERING = "PERFKIT_PROGRESS_STREAM"


def progress_bar(iterable=None, **options):
    """tqdm's bar for where this runs (same options as tqdm)."""
    if RENDERING in os.environ:
        return ReportBar(iterable, file=_live_stream(), mininterval=1.0, **options)
    from tqdm.auto import tqdm as auto_bar  # a widget in a notebook's frontend, text elsewhere

    return auto_bar(iterable, **options)


class ReportBar(_text_bar):
    """Live on the renderer's terminal; one summary line on stdout (the report) when it closes."""

    def close(self):
        if self.disable or getattr(self, "_summarised", False):
            return super().close()
        self._summarised = True
        line = summary_line(self.desc, self.n, self.total, self.unit, self.format_dict["elapsed"])
        super().close()
        print(line, file=sys.stdout, flush=True)


def summary_line(desc: str, n: int, total: int | None, unit: str, elapsed_s: float) -> str:
    """'placing tpch-sf0.01: 8 tables in 3.2 s' (', of 12' when it stopped early)."""
    from perfkit.findings import plural

    done = plural(int(n), unit) + (f" of {total:,}" if total and n < total else "")
    return f"{desc or 'done'}: {done} in {duration(elapsed_s)}"


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


@functools.cache
def _live_stream():
    """The renderer's terminal, opened once per kernel; a sink when there is none or it cannot be opened."""
    path = os.environ.get(RENDERING) or os.devnull
    try:
        return open(path, "w", buffering=1)  # kept open for the kernel's life, like sys.stderr
    except OSError:
        return open(os.devnull, "w")
