"""A check that every interval a report prints says what it is (principle 13): "a to b" or "a–b" is either a
confidence interval of the quantity named ("95% CI 0.97–1.10×", "its 95% interval") or a range over what it spans
("range 10–12 over 2 queries"); a bare "0.3 to 0.5" a reader cannot tell apart from an interval is flagged.

    unlabelled_intervals("median 1.40×, 1.10–2.30×")        # ['1.10–2.30×']
    unlabelled_intervals_html(page)                           # the same over a rendered page's text and tables

Dates (2026-12-07), clock times and versions (3.11.2-1) are no intervals; a table's cells are labelled by their
column's header ("95% CI")."""
from __future__ import annotations

import re
from html.parser import HTMLParser

NUMBER = r"[-+−]?\d+(?:,\d{3})*(?:\.\d+)?"
UNIT = r"(?:\s?(?:×|%|s|ms|MB|GB|MiB|KiB|MB/s|MiB/s|runs?|min|h))?"
# a number, its unit, a dash or "to", a number and its unit; not inside a date, a time, a version or an identifier
SPAN = re.compile(rf"(?<![\w.,:/\-−+]){NUMBER}{UNIT}(?:\s*[–—]\s*|\s+to\s+|-){NUMBER}{UNIT}"
                  rf"(?![\w:/]|[.,]\d|[-−]\w)")
LABEL = re.compile(r"(?:\bCI|\bconfidence interval|\binterval|\brange(?:\s+of)?|\branging(?:\s+from)?)[\s:(]*$",
                   re.IGNORECASE)
LOOK_BACK = 30  # characters before a span where its label may stand


def unlabelled_intervals(text: str) -> list[str]:
    """Every number-to-number span of `text` ("0.3 to 0.5", "0.3–0.5", "0.3-0.5×") not labelled a confidence interval
    ("CI", "interval") or a range ("range", "range of") just before it."""
    found = []
    for match in SPAN.finditer(text):
        before = text[max(0, match.start() - LOOK_BACK):match.start()]
        if not LABEL.search(before):
            found.append(match.group(0))
    return found


def labelled_column(header: str) -> bool:
    """A table's column whose header says its cells are intervals or ranges: '95% CI', 'range', 'interval'."""
    return bool(re.search(r"\bCI\b|interval|\brange\b", header, re.IGNORECASE))


def unlabelled_in_frame(frame) -> list[str]:
    """unlabelled_intervals over a frame's cells (and headers), a column labelled by its header (labelled_column)."""
    found = []
    for column in frame.columns:
        header = " ".join(map(str, column)) if isinstance(column, tuple) else str(column)
        found += unlabelled_intervals(header)
        if labelled_column(header):
            continue
        for value in frame[column]:
            if isinstance(value, str):
                found += unlabelled_intervals(value)
    return found


def unlabelled_intervals_html(page: str) -> list[str]:
    """unlabelled_intervals over a rendered page: its text outside tables, and each table cell with its column's
    header as its label; styles, scripts and embedded images are left out."""
    reader = _Reader()
    reader.feed(page)
    reader.close()
    found = unlabelled_intervals(" ".join(reader.text))
    for header, cell in reader.cells:
        if not labelled_column(header):
            found += unlabelled_intervals(cell)
    return found


class _Reader(HTMLParser):
    """The text of a page, apart from its tables' cells, which are kept with their column's header."""
    SKIP = {"style", "script"}
    BLOCKS = {"p", "li", "div", "section", "h1", "h2", "h3", "h4", "br", "summary", "pre", "tr", "details"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.cells: list[tuple[str, str]] = []
        self.skipping = 0
        self.tables: list[dict] = []  # a stack: tables may nest

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skipping += 1
        elif tag == "table":
            self.tables.append({"headers": {}, "in_head": False, "row": [], "cell": None, "span": 1})
        elif self.tables:
            table = self.tables[-1]
            if tag == "thead":
                table["in_head"] = True
            elif tag == "tbody":
                table["in_head"] = False
            elif tag == "tr":
                table["row"] = []
            elif tag in ("th", "td"):
                table["cell"] = []
                table["span"] = int(dict(attrs).get("colspan") or 1)
        if tag in self.BLOCKS:
            self.text.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag == "table" and self.tables:
            self.tables.pop()
        elif self.tables and tag in ("th", "td"):
            table = self.tables[-1]
            text = " ".join("".join(table["cell"] or []).split())
            position = len(table["row"])
            table["row"] += [text] * table["span"]
            if table["in_head"]:
                for i in range(position, position + table["span"]):
                    table["headers"][i] = " ".join(filter(None, [table["headers"].get(i, ""), text]))
            else:
                self.cells.append((table["headers"].get(position, ""), text))
            table["cell"] = None
        if tag in self.BLOCKS:
            self.text.append("\n")

    def handle_data(self, data):
        if self.skipping:
            return
        if self.tables and self.tables[-1]["cell"] is not None:
            self.tables[-1]["cell"].append(data)
        elif not self.tables:
            self.text.append(data)
