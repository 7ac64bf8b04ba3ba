"""Notebook files and nodes: read one (or say why the file is not one), tidy its outputs, convert it to HTML."""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from perfkit.errors import PerfkitError, root_cause

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


WHERE_S3_SAT = re.compile(r"^\*\*(S3 (?:behind|on this machine|as this cluster).*)\*\*$", re.S)


def report_title(nb) -> str:
    """The page title: the notebook's first heading, then where S3 sat for the run (the network line an experiment
    displays first) when it shows one: a shared page names its conditions before anyone opens it."""
    heading = next((line.lstrip("#").strip() for cell in nb.cells if cell.cell_type == "markdown"
                    for line in cell.source.splitlines() if line.startswith("# ")), "")
    where = next((match.group(1) for cell in nb.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
                  if (match := WHERE_S3_SAT.match(str(output.get("data", {}).get("text/markdown", "")).strip()))), "")
    return " — ".join(part for part in (heading, where) if part)
