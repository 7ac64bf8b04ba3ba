"""Render a notebook with papermill into reports/<name>/<timestamp>.ipynb + .html, and rebuild the index.

The HTML is self-contained (images embedded). Parameters that look like secrets are refused,
and the lab's keys are redacted from anything written, should a cell ever print them.
"""
from __future__ import annotations

import html
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from perfkit import provenance
from perfkit.errors import PerfkitError
from perfkit.paths import project_root, reports_dir

SECRET_NAME = re.compile(r"secret|passw|token|credential|private|api_?key|access_?key|session_?key", re.I)
SECRET_VALUE = re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b|^[A-Za-z0-9/+=]{40}$|-----BEGIN [A-Z ]*PRIVATE KEY")
REDACTED = "***"


@dataclass
class Report:
    notebook: Path
    html: Path
    ok: bool
    error: str | None = None


def check_parameters(parameters: dict) -> None:
    """Refuse a parameter whose name or value looks like a secret: reports are shared."""
    for name, value in parameters.items():
        if SECRET_NAME.search(name) or SECRET_VALUE.search(str(value)):
            raise PerfkitError(
                f"parameter {name!r} looks like a secret and would be written into a shared report: "
                "pass credentials through the AWS chain or the lab config, never as notebook parameters"
            )


def parse_parameters(pairs: list[str]) -> dict:
    """key=value pairs; values are read as YAML, so 3, 0.5, [spark, hive] and true keep their types."""
    import yaml

    parameters = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise PerfkitError(f"parameter {pair!r} is not key=value: write e.g. -p runs=5 -p engines='[spark, hive]'")
        parameters[key.strip()] = yaml.safe_load(value) if value else ""
    return parameters


def render(notebook: Path | str, parameters: dict | None = None, out_root: Path | None = None,
           kernel: str | None = None) -> Report:
    """Execute the notebook; keep the executed copy and its HTML even when a cell fails (ok=False)."""
    import papermill as pm

    notebook = Path(notebook)
    if not notebook.exists():
        raise PerfkitError(f"notebook {notebook} does not exist: give the path of one of notebooks/*.ipynb")
    parameters = dict(parameters or {})
    check_parameters(parameters)
    declared = notebook_parameters(notebook)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise PerfkitError(f"{notebook.name} has no parameter {', '.join(unknown)}: its parameters are {', '.join(declared)}")

    out_dir = (Path(out_root) if out_root else reports_dir()) / notebook.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    final_nb, final_html = out_dir / f"{stamp}.ipynb", out_dir / f"{stamp}.html"
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".render-") as work:
        executed = Path(work) / notebook.name
        started = time.monotonic()
        error = None
        try:
            pm.execute_notebook(str(notebook), str(executed), parameters=parameters, kernel_name=kernel,
                                cwd=str(project_root()), progress_bar=False)
        except pm.PapermillExecutionError as err:
            error = f"{err.ename}: {err.evalue}"
        if not executed.exists():
            raise PerfkitError(f"papermill wrote no output for {notebook}: {error}")
        nb = tidy(executed)
        nb.metadata["perfkit"] = {
            "rendered_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1), "ok": error is None, "error": error,
            "parameters": parameters, "git_commit": provenance.git_commit(), "versions": provenance.versions(),
        }
        import nbformat

        text = redact(nbformat.writes(nb))
        _atomic_write(final_nb, text)
        _atomic_write(final_html, redact(to_html(text)))
    write_index(out_dir.parent)
    return Report(final_nb, final_html, error is None, error)


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the cell tagged `parameters`."""
    nb = json.loads(Path(notebook).read_text())
    for cell in nb["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"])
            return re.findall(r"^([A-Za-z_]\w*)\s*=", source, re.M)
    raise PerfkitError(f"{notebook} has no cell tagged 'parameters': papermill needs one")


def tidy(executed: Path):
    """The executed notebook with each cell's stream outputs merged and progress-bar redraws collapsed."""
    import nbformat
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    nb = nbformat.read(str(executed), as_version=4)
    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})
    return nb


def to_html(notebook_json: str) -> str:
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(embed_images=True)
    body, _ = exporter.from_notebook_node(nbformat.reads(notebook_json, as_version=4))
    return body


def redact(text: str) -> str:
    """Remove the lab's keys (and anything shaped like an AWS key id) from rendered output."""
    from perfkit.lab.settings import lab_credentials

    try:
        secrets = [lab_credentials()["secret_key"]]
    except PerfkitError:
        secrets = []
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    for name in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        if os.environ.get(name):
            text = text.replace(os.environ[name], REDACTED)
    return re.sub(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b", REDACTED, text)


def write_index(root: Path | None = None) -> Path:
    """reports/index.html: every rendered report, newest first, with its date and key parameters."""
    root = Path(root) if root else reports_dir()
    entries = []
    for nb_path in root.glob("*/*.ipynb"):
        html_path = nb_path.with_suffix(".html")
        if not html_path.exists():
            continue
        meta = json.loads(nb_path.read_text()).get("metadata", {})
        info = meta.get("perfkit", {})
        params = meta.get("papermill", {}).get("parameters", {})
        entries.append((info.get("rendered_at", nb_path.stem), nb_path.parent.name, html_path, params, info.get("ok", True)))
    entries.sort(key=lambda e: e[0], reverse=True)
    rows = "\n".join(
        f"<tr><td>{html.escape(when)}</td><td><a href=\"{html.escape(str(path.relative_to(root)))}\">"
        f"{html.escape(name)}</a></td><td>{'ok' if ok else 'FAILED'}</td><td><code>"
        f"{html.escape(', '.join(f'{k}={v}' for k, v in params.items()))}</code></td></tr>"
        for when, name, path, params, ok in entries
    )
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>perfkit reports</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}code{{font-size:90%}}</style>
</head><body><h1>perfkit reports</h1>
<table><tr><th>rendered (UTC)</th><th>report</th><th>status</th><th>parameters</th></tr>
{rows}
</table></body></html>
"""
    index = root / "index.html"
    _atomic_write(index, page)
    return index


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.chmod(tmp, 0o644)  # reports are for sharing
    os.replace(tmp, path)
