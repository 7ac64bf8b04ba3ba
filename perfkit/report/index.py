"""reports/index.html: one static page listing every stored report."""
from __future__ import annotations

import html
import json
import warnings
from pathlib import Path

from perfkit import atomic
from perfkit.compat import zip_strict
from perfkit.findings import FINDINGS_MIME
from perfkit.paths import reports_dir
from perfkit.report.parameters import literal_default
from perfkit.report.redaction import redact


def write_index(root: Path | None = None) -> Path:
    """reports/index.html, a static page: one section per report (the most recently run first), its runs newest
    first, each with its date, its first finding, status, where it ran (lab, a profile, or EMR and the cluster id),
    its key parameters and a link to the run before it."""
    root = Path(root) if root else reports_dir()
    groups: dict[str, list[dict]] = {}
    for nb_path in root.glob("*/*.ipynb"):
        html_path = nb_path.with_suffix(".html")
        if not html_path.exists():
            continue
        try:
            run = _index_entry(nb_path, root)
        except (OSError, ValueError, AttributeError) as err:  # one broken file must not stop every later report
            warnings.warn(f"report {nb_path} is unreadable ({type(err).__name__}): left out of the index "
                          "(move it aside to silence this)", stacklevel=2)
            continue
        groups.setdefault(nb_path.parent.name, []).append(run)
    sections = []
    for name, runs in sorted(groups.items(), key=lambda g: max(r["when"] for r in g[1]), reverse=True):
        runs.sort(key=lambda r: r["when"], reverse=True)
        rows = []
        for run, previous in zip_strict(runs, runs[1:] + [None]):
            before = (f'<a href="{html.escape(previous["href"])}">{html.escape(previous["when"])}</a>'
                      if previous else "first run")
            rows.append(f'<tr><td><a href="{html.escape(run["href"])}">{html.escape(run["when"])}</a></td>'
                        f'<td>{html.escape(run["finding"])}</td>'
                        f'<td>{html.escape(run["status"])}</td><td>{html.escape(run["where"])}</td>'
                        f'<td><code>{html.escape(run["shown"])}</code></td><td>{before}</td></tr>')
        sections.append(f'<h2 id="{html.escape(name)}">{html.escape(name)}</h2>\n'
                        '<table><tr><th>rendered (UTC)</th><th>first finding</th><th>status</th><th>ran on</th>'
                        '<th>parameters</th><th>previous run</th></tr>\n' + "\n".join(rows) + "\n</table>")
    body = "\n".join(sections) or "<p>No report yet: render one with <code>perfkit report NOTEBOOK</code>.</p>"
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>perfkit reports</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}code{{font-size:90%}}</style>
</head><body><h1>perfkit reports</h1>
{body}
</body></html>
"""
    return atomic.write_text(root / "index.html", page)


def _index_entry(nb_path: Path, root: Path) -> dict:
    """What the index shows of one stored report (raises ValueError/AttributeError on a file that is not one)."""
    data = json.loads(nb_path.read_text(encoding="utf-8"))
    meta = data.get("metadata", {})
    info = meta.get("perfkit", {})
    params = info.get("parameters") or meta.get("papermill", {}).get("parameters", {})
    ok = info.get("ok", True)
    status = info.get("status") or ("ok" if ok else "failed")
    return {
        "when": str(info.get("rendered_at", nb_path.stem)),
        "href": nb_path.with_suffix(".html").relative_to(root).as_posix(),
        "status": "ok" if status == "ok" else status.upper(),
        "where": _ran_on(info.get("ran_on") or {}, params.get("profile") or literal_default(data, "profile")),
        # an old report may predate a redaction rule
        "shown": redact(", ".join(f"{k}={v}" for k, v in params.items())),
        "finding": redact(first_finding(data)),
    }


def first_finding(data: dict) -> str:
    """The first sentence of the report's Findings (perfkit.findings), or '' for a report that has none."""
    for cell in data.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            found = output.get("data", {}).get(FINDINGS_MIME)
            if isinstance(found, dict):
                sentences = found.get("sentences") or found.get("undecided") or [""]
                return str(sentences[0])
    return ""


def _ran_on(ran_on: dict, profile) -> str:
    """lab | profile NAME (run here with another profile) | EMR j-... (profile NAME) (executed by EMR Notebooks)."""
    if ran_on.get("kind") == "emr":
        by = " (a stand-in, not EMR)" if ran_on.get("executed_by") else ""
        return f"EMR {ran_on.get('cluster_id') or '?'}{by}" + (f" (profile {profile})" if profile else "")
    if not profile:
        return "local"
    return "lab" if profile == "lab" else f"profile {profile}"
