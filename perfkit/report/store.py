"""Where reports go and how one is stored: reports/<notebook stem>/<time stamp>.ipynb + .html, then the index."""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from perfkit import atomic
from perfkit.errors import PerfkitError
from perfkit.paths import reports_dir
from perfkit.report.index import write_index
from perfkit.report.notebook import to_html
from perfkit.report.redaction import redact, redact_notebook


@dataclass
class Report:
    notebook: Path
    html: Path
    ok: bool
    error: str | None = None


def report_dir(notebook: Path, out_root: Path | None = None) -> Path:
    """reports/<notebook stem>, refused unless the stem is a plain folder name inside the reports root."""
    root = Path(out_root) if out_root else reports_dir()
    stem = Path(notebook).stem
    # "...ipynb" has the stem "..": a leading dot, a separator or nothing would put the report beside or above
    # the reports root, or into a hidden folder the index does not show
    if not stem or stem.startswith(".") or "/" in stem or "\\" in stem:
        raise PerfkitError(f"notebook {Path(notebook).name!r} gives no plain report folder name ({stem!r}): "
                           "rename it to a plain name such as my_study.ipynb")
    out_dir = root / stem
    if out_dir.resolve().parent != root.resolve():
        raise PerfkitError(f"report folder {out_dir} would lie outside {root}: rename the notebook to a plain name")
    return out_dir


def store_report(out_dir: Path, nb, *, ok: bool, error: str | None, parameters: dict, show_code: bool,
                 seconds: float, started: datetime | None = None, page: str | None = None, **info) -> Report:
    """Store an executed notebook node as a new report in out_dir and list it in the index.

    The node gets its metadata["perfkit"] (when, how long, outcome, parameters, show_code, then `info`); the
    notebook and its HTML (`page` if given, else perfkit's own rendering) are redacted and written as
    <stamp>.ipynb and .html, the stamp being `started` (default: now) in UTC to the millisecond."""
    import nbformat

    nb.metadata["perfkit"] = {
        "rendered_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "seconds": round(seconds, 1),
        "ok": ok, "error": error, "parameters": parameters, "show_code": show_code, **info,
    }
    # redact string by string: in the serialised JSON a newline is "\n", which glues an 'n' to the next token
    text = nbformat.writes(redact_notebook(nb))
    html_page = redact(to_html(text, show_code=show_code) if page is None else page)
    nb_path = _write_new_report(out_dir, _stamp(started or datetime.now(timezone.utc)), text, html_page)
    write_index(out_dir.parent)
    return Report(nb_path, nb_path.with_suffix(".html"), ok, error)


def _stamp(when: datetime) -> str:
    when = when.astimezone(timezone.utc)
    return when.strftime("%Y%m%dT%H%M%S.") + f"{when.microsecond // 1000:03d}Z"


def _write_new_report(out_dir: Path, stamp: str, notebook_text: str, page: str) -> Path:
    """<stamp>.ipynb and .html under a name no report has, both or neither. The .ipynb is created exclusively
    (O_EXCL) before anything is written, so a run in the same millisecond gets <stamp>-2 and no report is ever
    overwritten; the index lists a report once its .html exists, which is written last."""
    for n in itertools.count(1):
        nb_path = out_dir / (f"{stamp}.ipynb" if n == 1 else f"{stamp}-{n}.ipynb")
        if nb_path.with_suffix(".html").exists():
            continue
        try:
            os.close(os.open(nb_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            break
        except FileExistsError:
            continue
    try:
        atomic.write_text(nb_path, notebook_text)  # reports are for sharing: 0644
        atomic.write_text(nb_path.with_suffix(".html"), page)
    except BaseException:
        nb_path.unlink(missing_ok=True)
        nb_path.with_suffix(".html").unlink(missing_ok=True)
        raise
    return nb_path

