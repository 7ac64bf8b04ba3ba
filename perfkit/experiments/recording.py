"""A run's recording: its ResultSet, saved whatever happens to the run.

Every experiment measures inside one:

    results_dir_checked(EXPERIMENT)  # first: a folder that cannot be written fails before any work
    ...prepare...
    with recording(EXPERIMENT, config, cleanup=self.cleanup) as results:
        ...measure, results.add(...), results.save() after each step...

What was measured is saved when the block ends, on success or not; a run that ends by an exception (Ctrl-C,
SIGTERM, a service gone) is marked `interrupted` in its file, so no one reads a part as the whole; the cleanup
runs last, even when the save fails (a full disk: ResultSet.save keeps the records elsewhere and says where).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from perfkit.results import ResultSet


@contextlib.contextmanager
def recording(experiment: str, config: dict, run_id: str | None = None, *, keep_empty: bool = True,
              cleanup: Callable[[], object] | None = None) -> Iterator[ResultSet]:
    """A new ResultSet for `experiment`, saved at the end of the block; `keep_empty=False`: no file when nothing was
    recorded (a study that measured nothing here); `cleanup`: what the run must remove after, called last."""
    results = ResultSet(experiment, config, run_id=run_id)
    try:
        yield results
    except BaseException:
        results.config["interrupted"] = True  # every record shares the config: the file says the run is incomplete
        raise
    finally:
        try:
            if results.records or keep_empty:
                results.save()
        finally:
            if cleanup is not None:
                cleanup()
