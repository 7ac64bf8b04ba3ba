"""Render a notebook with papermill into reports/<name>/<timestamp>.ipynb + .html, and rebuild the index.

The HTML is self-contained (images embedded) and shows outputs only unless show_code is asked for.
Parameters that look like secrets are refused, and anything of secret shape is redacted from what is
written (notebook, HTML, index), should a cell ever print it.
"""
from __future__ import annotations

import contextlib
import functools
import html
import itertools
import json
import logging
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from perfkit import provenance
from perfkit.config import SECRET_NAME
from perfkit.errors import PerfkitError, root_cause
from perfkit.paths import ensure_writable_dir, project_root, reports_dir

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
# EMR Notebooks' PySpark kernels (sparkmagic): Python run in a Spark driver on the cluster
EMR_PYTHON_KERNELS = ("pysparkkernel", "pyspark3kernel")
# Log lines the JVM, Spark and Hadoop write to the kernel's stderr: ipykernel captures the process's file
# descriptors, so they land in output cells. They say nothing about the measurement and are dropped from the
# shared report (the tqdm progress lines and real errors, including log4j ERROR/FATAL lines, stay).
# the JVM's start-up lines can land after a progress bar's last redraw, on the same line (no newline between)
GLUED_JVM_NOISE = re.compile(r"(?:WARNING: Using incubator modules|Using Spark's default log4j profile"
                             r"|Setting default log level to|To adjust logging level use).*$", re.S)
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
# ipykernel's warning at every start on a plain-TCP connection (local, as papermill starts it): not a cause of death.
KERNEL_NOISE = re.compile(r"Kernel is running over TCP without encryption")


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
    """key=value pairs; values are read as YAML, so 3, 0.5, [spark, hive] and true keep their types, while dates and
    times stay the ISO text written (2026-01-01T00:00:00): the notebooks take them as strings."""
    import yaml

    parameters = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise PerfkitError(f"parameter {pair!r} is not key=value: write e.g. -p runs=5 -p engines='[spark, hive]'")
        try:
            parsed = yaml.load(value, Loader=_parameter_loader()) if value else ""
            json.dumps(parsed)  # what papermill and the report metadata can carry
        except (yaml.YAMLError, TypeError, ValueError) as err:
            why = " ".join(str(getattr(err, "problem", None) or err).split())
            raise PerfkitError(
                f"parameter {key.strip()}: {value!r} is not a plain YAML value ({why}): write a number, a string, "
                f"a list such as -p 'engines=[spark, hive]', or quote a string: -p \"{key.strip()}='{value}'\""
            ) from None
        parameters[key.strip()] = parsed
    return parameters


@functools.cache
def _parameter_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        """SafeLoader without the timestamp rule: a date or time stays a string (datetime is not JSON)."""

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return Loader


def render(notebook: Path | str, parameters: dict | None = None, out_root: Path | None = None,
           kernel: str | None = None, show_code: bool = False) -> Report:
    """Execute the notebook; keep the executed copy and its HTML even when a cell fails or the kernel dies (ok=False).

    What can be checked is checked before the kernel starts: the file is a notebook, its kernel is installed, the
    parameters are known and the report folders are writable. An interrupted run (Ctrl-C) leaves nothing behind.
    The HTML shows the outputs alone unless show_code; the executed .ipynb always keeps the code."""
    import nbformat
    import papermill as pm
    from traitlets.config import Config

    notebook = Path(notebook)
    if not notebook.exists():
        raise PerfkitError(f"notebook {notebook} does not exist: give the path of one of notebooks/*.ipynb")
    source = read_notebook(notebook)
    out_dir = report_dir(notebook, out_root)
    parameters = dict(parameters or {})
    check_parameters(parameters)
    declared = _parameter_names(source, notebook)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise PerfkitError(f"{notebook.name} has no parameter {', '.join(unknown)}: "
                           f"its parameters are {', '.join(declared)}")
    kernel, language = _kernel(source, notebook, kernel)
    root_fix = "pass a writable out_root" if out_root else "set PERFKIT_REPORTS to a writable folder"
    ensure_writable_dir(out_dir.parent, "reports folder", root_fix)
    created = not out_dir.exists()
    ensure_writable_dir(out_dir, "report folder", f"make it writable, or {root_fix}")

    now = datetime.now(timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%S.") + f"{now.microsecond // 1000:03d}Z"
    try:
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".render-") as work:
            executed, kernel_log = Path(work) / notebook.name, Path(work) / "kernel-stderr.log"
            started = time.monotonic()
            error, marked = None, True
            pm_log = logging.getLogger("papermill")  # nbclient logs through it too
            pm_level = pm_log.level
            pm_log.setLevel(logging.CRITICAL)  # its "Kernel died..." line on the terminal: the error is ours to report
            try:
                pm.execute_notebook(str(notebook), str(executed), parameters=parameters, kernel_name=kernel,
                                    language=language, cwd=str(project_root()), progress_bar=False,
                                    kernel_manager_class=_kernel_manager_class(),
                                    config=Config({"QuietKernelManager": {"stderr_path": str(kernel_log)}}))
            except pm.PapermillExecutionError as err:  # a cell raised: papermill marked it in the notebook
                error = f"{err.ename}: {err.evalue}"
            except Exception as err:  # noqa: BLE001 - the kernel died, timed out or never started
                error, marked = f"{type(err).__name__}: {root_cause(err)}", False
            finally:
                pm_log.setLevel(pm_level)
            if not executed.exists():
                raise PerfkitError(f"papermill wrote no output for {notebook}: {error}")
            nb = tidy(nbformat.read(str(executed), as_version=4))
            if not marked:
                _mark_stop(nb, error, kernel_log.read_text(errors="replace") if kernel_log.exists() else "")
            nb.metadata["perfkit"] = {
                "rendered_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "seconds": round(time.monotonic() - started, 1), "ok": error is None, "error": error,
                "parameters": parameters, "show_code": show_code, "git_commit": provenance.git_commit(),
                "versions": provenance.versions(),
            }
            # redact string by string: in the serialised JSON a newline is "\n", which glues an 'n' to the next token
            text = nbformat.writes(redact_notebook(nb))
            final_nb = _write_new_report(out_dir, stamp, text, redact(to_html(text, show_code=show_code)))
    except BaseException:
        # Ctrl-C or no report: nbclient has shut the kernel down on the way out and the `with` removed the work
        # folder; a report folder this run made goes too unless another run put something in it meanwhile
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()
        raise
    write_index(out_dir.parent)
    return Report(final_nb, final_nb.with_suffix(".html"), error is None, error)


def read_notebook(notebook: Path | str):
    """The notebook node of an .ipynb file, or a PerfkitError saying why the file is not one."""
    import nbformat

    def refuse(why: str) -> PerfkitError:
        return PerfkitError(f"{notebook} is not a Jupyter notebook ({why}): "
                            "give an .ipynb file saved by Jupyter, such as notebooks/st1_throughput_burst.ipynb")

    try:
        text = Path(notebook).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise refuse("binary, not UTF-8 text") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise refuse("not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells", data.get("worksheets")), list):
        raise refuse("JSON without a list of cells")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's notes on missing cell ids: papermill adds them
            return nbformat.reads(text, as_version=4)
    except Exception as err:  # noqa: BLE001 - nbformat's conversion and schema errors share no base class
        raise refuse(f"invalid: {root_cause(err, 120)}") from None


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the cell tagged `parameters`."""
    return _parameter_names(read_notebook(notebook), notebook)


def _parameter_names(nb, notebook: Path) -> list[str]:
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return re.findall(r"^([A-Za-z_]\w*)\s*=", cell.source, re.M)
    raise PerfkitError(f"{notebook} has no cell tagged 'parameters': papermill needs one")


def _kernel(nb, notebook: Path, kernel: str | None) -> tuple[str, str]:
    """The kernel the notebook will run on and its language (papermill writes the parameters in it); refused, before
    anything is created, if the notebook names no kernel or the kernel is not installed.

    A notebook made for EMR's PySpark kernel (sparkmagic's pysparkkernel: the cells run as Python in a Spark
    driver on the cluster) runs on this machine's own Python kernel when pysparkkernel is not installed here:
    its cells are plain Python, and the profile parameter, not the kernel, says where the work runs."""
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager, NoSuchKernel

    specs = KernelSpecManager()
    found = specs.find_kernel_specs()
    installed = ", ".join(sorted(found)) or "none"
    name = kernel or nb.metadata.get("kernelspec", {}).get("name")
    if not name:
        raise PerfkitError(f"{notebook} has no kernel: pass --kernel NAME (installed: {installed}) "
                           "or open it in Jupyter, choose a kernel and save it")
    if name == "python" or (name in EMR_PYTHON_KERNELS and not kernel and name not in found):
        name = NATIVE_KERNEL_NAME  # jupyter_client's alias for the Python kernel it runs in
    try:
        spec = specs.get_kernel_spec(name)
    except NoSuchKernel:
        asked = "--kernel" if kernel else f"{notebook} asks for kernel"
        raise PerfkitError(f"{asked} {name!r} is not an installed Jupyter kernel: "
                           f"pass --kernel with one of {installed}") from None
    return name, spec.language


@functools.cache
def _kernel_manager_class():
    """The kernel manager papermill uses: it starts the kernel with its own stderr in a file (stderr_path) rather than
    on the user's terminal. ipykernel logs there: a plain-TCP warning at every start, a ZMQ traceback when Ctrl-C
    shuts it down mid-cell, and a crash's last words (quoted in the report). Cell outputs travel separately."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Unicode

    class QuietKernelManager(AsyncKernelManager):
        stderr_path = Unicode("", config=True)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            if not self.stderr_path:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            with open(self.stderr_path, "ab") as log:  # the kernel process keeps its own copy of the descriptor
                return await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": log})

    return QuietKernelManager


def _mark_stop(nb, error: str, kernel_stderr: str) -> None:
    """papermill marks a cell that raised; a kernel that died or timed out leaves no mark. Say so at the top, with the
    kernel's last stderr lines, and before the cell that was running."""
    import nbformat

    def marker(text):
        cell = nbformat.v4.new_markdown_cell(text, metadata={"tags": ["papermill-error-cell-tag"]})
        if nb.nbformat_minor < 5:
            cell.pop("id", None)  # cell ids came with nbformat 4.5
        return cell

    said = [line for line in kernel_stderr.splitlines()
            if line.strip() and not KERNEL_NOISE.search(line) and not JVM_NOISE.search(line)]
    last_words = "\n\nThe kernel's last lines on stderr:\n\n```\n" + "\n".join(said[-20:]) + "\n```" if said else ""
    ran = [i for i, cell in enumerate(nb.cells) if cell.get("metadata", {}).get("papermill", {}).get("start_time")]
    if ran:
        nb.cells.insert(ran[-1], marker(f"**The run stopped in the cell below**: `{error}`"))
    nb.cells.insert(0, marker(f"**This run did not finish**: `{error}`; the cells after the one where it stopped "
                              f"did not run.{last_words}"))


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
                lines = (GLUED_JVM_NOISE.sub("", line) for line in output.text.splitlines(keepends=True))
                output.text = "".join(line if line.endswith("\n") or not line else line + "\n" for line in lines
                                      if line.strip() and not JVM_NOISE.search(line))
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
    """reports/index.html, a static page: one section per report (the most recently run first), its runs newest
    first, each with its date, status, where it ran (lab, a profile, or EMR and the cluster id), its key parameters
    and a link to the run before it."""
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
        for run, previous in zip(runs, runs[1:] + [None]):
            before = (f'<a href="{html.escape(previous["href"])}">{html.escape(previous["when"])}</a>'
                      if previous else "first run")
            rows.append(f'<tr><td><a href="{html.escape(run["href"])}">{html.escape(run["when"])}</a></td>'
                        f'<td>{html.escape(run["status"])}</td><td>{html.escape(run["where"])}</td>'
                        f'<td><code>{html.escape(run["shown"])}</code></td><td>{before}</td></tr>')
        sections.append(f'<h2 id="{html.escape(name)}">{html.escape(name)}</h2>\n'
                        '<table><tr><th>rendered (UTC)</th><th>status</th><th>ran on</th><th>parameters</th>'
                        '<th>previous run</th></tr>\n' + "\n".join(rows) + "\n</table>")
    body = "\n".join(sections) or "<p>No report yet: render one with <code>perfkit report NOTEBOOK</code>.</p>"
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>perfkit reports</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}code{{font-size:90%}}</style>
</head><body><h1>perfkit reports</h1>
{body}
</body></html>
"""
    index = root / "index.html"
    _atomic_write(index, page)
    return index


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
        "where": _ran_on(info.get("ran_on") or {}, params.get("profile") or _default_profile(data)),
        # an old report may predate a redaction rule
        "shown": redact(", ".join(f"{k}={v}" for k, v in params.items())),
    }


def _ran_on(ran_on: dict, profile) -> str:
    """lab | profile NAME (run here with another profile) | EMR j-... (profile NAME) (executed by EMR Notebooks)."""
    if ran_on.get("kind") == "emr":
        return f"EMR {ran_on.get('cluster_id') or '?'}" + (f" (profile {profile})" if profile else "")
    if not profile:
        return "local"
    return "lab" if profile == "lab" else f"profile {profile}"


def _default_profile(data: dict):
    """The profile parameter's default in the notebook's cell tagged parameters, if it is a literal."""
    import ast

    for cell in data.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell.get("source", ""))
            try:
                for node in ast.parse(source).body:
                    if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "profile" for t in node.targets):
                        return ast.literal_eval(node.value)
            except (SyntaxError, ValueError):
                return None
    return None


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
        _atomic_write(nb_path, notebook_text)
        _atomic_write(nb_path.with_suffix(".html"), page)
    except BaseException:
        nb_path.unlink(missing_ok=True)
        nb_path.with_suffix(".html").unlink(missing_ok=True)
        raise
    return nb_path


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(tmp, 0o644)  # reports are for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)  # a full disk leaves no half-written .tmp behind
        raise
