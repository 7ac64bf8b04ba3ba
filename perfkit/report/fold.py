"""A report's details, folded: an HTML <details> block that opens on a click, its table never truncated."""
from __future__ import annotations

import html

import pandas as pd

from perfkit.report.frames import frame_html


class Folded:
    """`title` over `content` (a frame, anything with an HTML form, or text), closed until opened."""

    def __init__(self, title: str, content):
        self.title, self.content = title, content

    def _repr_html_(self) -> str:
        content = self.content
        if isinstance(content, pd.DataFrame):
            inner = frame_html(content)
        elif hasattr(content, "_repr_html_") and (found := content._repr_html_()):
            inner = found
        else:
            inner = f"<pre>{html.escape(str(content))}</pre>"
        return f'<details class="perfkit-details"><summary>{html.escape(self.title)}</summary>{inner}</details>'

    def __repr__(self) -> str:
        content = self.content.to_string() if isinstance(self.content, pd.DataFrame) else str(self.content)
        return f"{self.title}:\n{content}"


def fold(title: str, content) -> Folded:
    return Folded(title, content)
