"""Render a notebook with papermill into reports/<name>/<timestamp>.ipynb + .html, and rebuild the index.

The HTML is self-contained (images embedded) and shows outputs only unless show_code is asked for.
Parameters that look like secrets are refused, and anything of secret shape is redacted from what is
written (notebook, HTML, index), should a cell ever print it.
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
# What a secret looks like, wherever it stands in a text:
# - an AWS key id (AKIA long-term, ASIA temporary);
# - an AWS secret access key: a standalone run of exactly 40 base64 characters (no base64 character or '='
#   on either side) that mixes upper case, lower case and digits. The mix is what tells it apart from the
#   hex ids a report is full of: a git commit (40 lowercase hex), sha1/sha256 digests (40/64 hex, one case)
#   and longer base64 blobs such as embedded images are left alone. A 40-character path that happens to mix
#   cases and digits would be redacted too: over-redacting is the safe side;
# - a PEM private key block, to its END line (or, cut short, to the end of the text).
SECRET_VALUE = re.compile(
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
    r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    re.S)
# Environment variables whose values are secrets (key ids are caught by their AKIA/ASIA shape).
SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
# A known secret shorter than this is not replaced verbatim: a placeholder such as "test" would wipe that word
# from the whole report. Real secrets (lab keys: 32 hex, AWS: 40+) are longer.
MIN_KNOWN_SECRET = 8
# A data: URI (an embedded image or font) is binary, not text: never redacted, so no 40-character slice of it
# can be cut out and break the picture.
DATA_URI = re.compile(r"data:[\w.+/-]+;base64,[A-Za-z0-9+/=]+")
REDACTED = "***"
# Log lines the JVM, Spark and Hadoop write to the kernel's stderr: ipykernel captures the process's file
# descriptors, so they land in output cells. They say nothing about the measurement and are dropped from the
# shared report (the tqdm progress lines and real errors, including log4j ERROR/FATAL lines, stay).
JVM_NOISE = re.compile(
    r"^(?:\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}"  # log4j console layout of Spark: 24/05/01 12:00:00 WARN X: ...
    r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[,.]\d+)?)"  # Hadoop's ISO8601 layout: 2024-05-01 12:00:00,123 WARN
    r" +(?:TRACE|DEBUG|INFO|WARN|WARNING) "
    r"|^WARNING: Using incubator modules"
    r"|^Using Spark's default log4j profile"
    r"|^Setting default log level to"
    r"|^To adjust logging level use"
    r"|Unable to load native-hadoop library"
    r"|^SLF4J:")


@dataclass
class Report:
    notebook: Path
    html: Path
    ok: bool
    error: str | None = None


def check_parameters(parameters: dict) -> None:
    """Refuse a parameter whose name or value looks like a secret: reports are shared.

    Lists, tuples and dicts are walked to any depth: a dict key is a name, every item a value."""
    for name, value in parameters.items():
        where = _secret_in(str(name), name, value)
        if where:
            raise PerfkitError(
                f"parameter {where!r} looks like a secret and would be written into a shared report: "
                "pass credentials through the AWS chain or the lab config, never as notebook parameters"
            )


def _secret_in(where: str, name, value) -> str | None:
    """The path (e.g. volume_ids[1] or opts.s3.key) of the first secret-looking name or value, else None."""
    if name is not None and (SECRET_NAME.search(str(name)) or SECRET_VALUE.search(str(name))):
        return where
    if isinstance(value, dict):
        items = ((f"{where}.{key}", key, item) for key, item in value.items())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = ((f"{where}[{i}]", None, item) for i, item in enumerate(value))
    else:
        return where if SECRET_VALUE.search(str(value)) else None
    return next((found for path, key, item in items if (found := _secret_in(path, key, item))), None)


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
           kernel: str | None = None, show_code: bool = False) -> Report:
    """Execute the notebook; keep the executed copy and its HTML even when a cell fails (ok=False).

    The HTML shows the outputs alone unless show_code; the executed .ipynb always keeps the code."""
    import papermill as pm

    notebook = Path(notebook)
    if not notebook.exists():
        raise PerfkitError(f"notebook {notebook} does not exist: give the path of one of notebooks/*.ipynb")
    out_dir = report_dir(notebook, out_root)
    parameters = dict(parameters or {})
    check_parameters(parameters)
    declared = notebook_parameters(notebook)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise PerfkitError(f"{notebook.name} has no parameter {', '.join(unknown)}: its parameters are {', '.join(declared)}")

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
        import nbformat

        nb = tidy(nbformat.read(str(executed), as_version=4))
        nb.metadata["perfkit"] = {
            "rendered_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1), "ok": error is None, "error": error,
            "parameters": parameters, "show_code": show_code, "git_commit": provenance.git_commit(),
            "versions": provenance.versions(),
        }
        # redact string by string: in the serialised JSON a newline is "\n", which glues an 'n' to the next token
        text = nbformat.writes(redact_notebook(nb))
        _atomic_write(final_nb, text)
        _atomic_write(final_html, redact(to_html(text, show_code=show_code)))
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


def tidy(nb):
    """The notebook node with each cell's stream outputs merged, progress-bar redraws collapsed and the JVM's
    log lines (JVM_NOISE) dropped from stderr; a stream left empty is removed."""
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.outputs:
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                output.text = "".join(line for line in output.text.splitlines(keepends=True)
                                      if not JVM_NOISE.search(line))
                if not output.text.strip():
                    continue
            kept.append(output)
        cell.outputs = kept
    return nb


def to_html(notebook_json: str, show_code: bool = False) -> str:
    """Self-contained HTML; without show_code the code cells' inputs and all prompts are left out."""
    import nbformat
    from nbconvert import HTMLExporter

    hide = not show_code
    exporter = HTMLExporter(embed_images=True, exclude_input=hide, exclude_input_prompt=hide,
                            exclude_output_prompt=hide)
    body, _ = exporter.from_notebook_node(nbformat.reads(notebook_json, as_version=4))
    return body


def redact(text: str) -> str:
    """Replace every value of secret shape (SECRET_VALUE) and every known secret (the lab's secret key, the AWS
    secret environment variables) with ***; embedded data: URIs are left whole."""
    known = sorted(_known_secrets(), key=len, reverse=True)  # longest first: one may contain another

    def clean(part: str) -> str:
        for secret in known:
            part = part.replace(secret, REDACTED)
        return SECRET_VALUE.sub(REDACTED, part)

    pieces, last = [], 0
    for uri in DATA_URI.finditer(text):
        pieces += [clean(text[last:uri.start()]), uri.group()]
        last = uri.end()
    return "".join(pieces) + clean(text[last:])


def redact_notebook(nb):
    """redact() every string of the notebook node (sources, outputs, metadata) in place, except binary images."""
    def walk(value, key=""):
        if isinstance(value, str):
            # base64 image data is not text; image/svg+xml is
            return value if key.startswith("image/") and key != "image/svg+xml" else redact(value)
        if isinstance(value, dict):
            for k in value:
                value[k] = walk(value[k], str(k))
        elif isinstance(value, list):
            value[:] = [walk(item, key) for item in value]
        return value

    return walk(nb)


def _known_secrets() -> list[str]:
    from perfkit.lab.settings import lab_credentials

    try:
        found = [lab_credentials().get("secret_key", "")]
    except PerfkitError:
        found = []
    found += [os.environ.get(name, "") for name in SECRET_ENV]
    return [s for s in found if len(s) >= MIN_KNOWN_SECRET]


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
        shown = redact(", ".join(f"{k}={v}" for k, v in params.items()))  # an old report may predate a redaction rule
        entries.append((info.get("rendered_at", nb_path.stem), nb_path.parent.name, html_path, shown, info.get("ok", True)))
    entries.sort(key=lambda e: e[0], reverse=True)
    rows = "\n".join(
        f"<tr><td>{html.escape(when)}</td><td><a href=\"{html.escape(str(path.relative_to(root)))}\">"
        f"{html.escape(name)}</a></td><td>{'ok' if ok else 'FAILED'}</td><td><code>"
        f"{html.escape(shown)}</code></td></tr>"
        for when, name, path, shown, ok in entries
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
