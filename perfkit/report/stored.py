"""A stored run's report again (`perfkit report --from RUN.jsonl`): its experiment's notebook rendered with the run's
file as its `results` parameter, measuring nothing. Only a notebook that declares `results` can."""
from __future__ import annotations

from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.paths import project_root
from perfkit.report.parameters import notebook_parameters
from perfkit.results import RUN_GROUP, first_config, grouped_files, read_result_file

RESULTS_PARAMETER = "results"


def stored_run_notebook(results_file: Path | str, notebook: Path | str | None = None) -> Path:
    """The notebook that renders `results_file` again: `notebook` if given, else its experiment's in notebooks/;
    refused, naming the notebooks that can, when it has no `results` parameter."""
    first = read_result_file(results_file)[0]
    experiment, config = first["experiment"], first.get("config") or {}
    if whole := (config.get("payoff") or {}).get("of_run") or config.get("part_of"):  # a cache-tier run's sweep, bench
        found = next(Path(results_file).resolve().parent.parent.glob(f"*/{whole}.jsonl"), None)
        raise PerfkitError(f"{results_file} is a run of {experiment}, a part of run {whole}, whose report shows it. "
                           f"Fix: give {found or f'that run ({whole}.jsonl)'}")
    folder = project_root() / "notebooks"
    path = Path(notebook) if notebook else folder / f"{experiment}.ipynb"
    if path.is_file() and RESULTS_PARAMETER in notebook_parameters(path):
        return path
    able = sorted(p.stem for p in folder.glob("*.ipynb") if RESULTS_PARAMETER in notebook_parameters(p))
    raise PerfkitError(f"{results_file} is a run of {experiment}, and {path} cannot render a stored run (it has no "
                       f"`{RESULTS_PARAMETER}` parameter). Fix: give a run of {', '.join(able) or 'none yet'}, or "
                       "render its notebook again to measure anew")


def stored_results(results_file: Path | str) -> tuple[str | list[str], str | None]:
    """What the notebook's `results` gets for `results_file`: the file, or every file of its run group (a matrix's
    suites, the S3-distance settings) in the group's order; and a line that says so, or None. A part of the group
    that is not beside the file is named: its report lacks it."""
    files = grouped_files(results_file)
    group = (first_config(Path(results_file)) or {}).get(RUN_GROUP)
    if not group:
        return str(results_file), None
    found = [first_config(f)[RUN_GROUP].get("part") for f in files]
    line = (f"{Path(results_file).name} is one of {len(group['parts'])} parts of run {group['id']} "
            f"({', '.join(group['parts'])}): rendering " + ", ".join(f"{part} ({f.name})" for part, f in
                                                                     zip(found, files)))
    if missing := [part for part in group["parts"] if part not in found]:
        line += f"; not beside it, so not in the report: {', '.join(missing)}"
    return [str(f) for f in files], line
