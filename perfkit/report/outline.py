"""What an executed notebook shows, as a shape two runs of it can be compared by: its Findings (each sentence's
subject), its tables (their columns) and its plots (how many), and the errors it holds.

Two runs measure different numbers and may reach different verdicts, so a sentence is known by its first two words
with every digit as `#` ("Spark #.#.#", "Copying to"): enough to tell that the same findings were made, the same
tables shown and the same figures drawn, whatever the kernel or the machine that executed it."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

from perfkit.findings import FINDINGS_MIME

_HEAD = re.compile(r"<thead>(.*?)</thead>", re.S)
_HEADER_ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
_HEADER_CELL = re.compile(r"<th[^>]*>(.*?)</th>", re.S)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Outline:
    findings: tuple[str, ...]  # each sentence's subject, in order
    tables: tuple[tuple[str, ...], ...]  # each HTML table's columns (its last header row), in order
    plots: int  # figures (image/png outputs)
    errors: tuple[str, ...]  # "ename: evalue" of each error output


def subject(sentence: str) -> str:
    return re.sub(r"\d", "#", " ".join(sentence.split()[:2]))


def table_columns(table_html: str) -> list[tuple[str, ...]]:
    """The columns of each table in an HTML fragment (pandas' to_html: the last row of its <thead>; the index's
    name row is not a column)."""
    found = []
    for head in _HEAD.findall(table_html):
        rows = _HEADER_ROW.findall(head)
        if rows:
            cells = [html.unescape(_TAG.sub("", c)).strip() for c in _HEADER_CELL.findall(rows[0])]
            found.append(tuple(c for c in cells if c))
    return found


def outline(nb) -> Outline:
    """The outline of an executed notebook (an nbformat node)."""
    findings, tables, plots, errors = [], [], 0, []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                errors.append(f"{output.get('ename')}: {output.get('evalue')}")
                continue
            data = output.get("data", {})
            if FINDINGS_MIME in data:
                findings += [subject(s) for s in data[FINDINGS_MIME]["sentences"]]
            elif "text/html" in data:
                tables += table_columns(data["text/html"])
            if "image/png" in data:
                plots += 1
    return Outline(tuple(findings), tuple(tables), plots, tuple(errors))
