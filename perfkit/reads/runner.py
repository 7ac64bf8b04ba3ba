"""J parallel jobs, each a separate process, each reading its list of files with one method.

How a job is timed: its process is started and the method set up (module imported, buffer
allocated, connections opened) *before* the clock; then all jobs wait at one barrier,
and each stamps its own `start` when the barrier releases them and its `end` after its last file.
So a job's [start, end] holds only its reads (opening, reading and closing each of its files),
never a process start or an import, and no job starts reading while another is still starting
up. The aggregate over jobs (perfkit.reads.aggregate) is bytes / (last end - first start).
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

from perfkit.config import Profile
from perfkit.errors import PerfkitError

READY_TIMEOUT_S = 600  # how long a prepared job waits for the slowest job to be prepared

_barrier = None  # the run's start barrier, set in each job process by _join_run


def _join_run(barrier) -> None:
    global _barrier
    _barrier = barrier


def run_job(method_name: str, profile: Profile, locations: list[str], barrier=None) -> dict:
    """One job: set up, wait for the common start, read every file, report start, end, bytes (or the error).

    `barrier` (anything with wait() and abort(), such as threading.Barrier) defaults to the run's
    barrier in a job process; with neither, the job starts as soon as it is set up.
    """
    from perfkit.reads import get_method

    barrier = barrier if barrier is not None else _barrier
    try:
        method = get_method(method_name, profile)
        method.prepare()
    except BaseException:
        if barrier is not None:
            barrier.abort()  # release the other jobs: this run cannot start
        raise
    if barrier is not None:
        barrier.wait(READY_TIMEOUT_S)
    start, total = time.time(), 0
    try:
        for location in locations:
            total += method.read(location)
    except PerfkitError as err:
        return {"start": start, "end": time.time(), "bytes": total, "ok": False, "error": str(err), "pid": os.getpid()}
    return {"start": start, "end": time.time(), "bytes": total, "ok": True, "error": None, "pid": os.getpid()}


def run_jobs(method_name: str, profile: Profile, plan: list[list[str]]) -> list[dict]:
    """Run one job per list in `plan`, all at once, each in its own process; results in plan order.

    A job that fails to read records ok=False and its error; a job that fails to set up fails the run.
    """
    from perfkit.reads import method_class

    method_class(method_name)  # import the method's module here, once: the forked jobs inherit it
    context = multiprocessing.get_context("fork")  # fast start; the jobs share nothing but the plan
    barrier = context.Barrier(len(plan))
    # All len(plan) processes are forked at once (fork context), and none finishes its job before
    # every job has reached the barrier, so each process runs exactly one job.
    with ProcessPoolExecutor(max_workers=len(plan), mp_context=context,
                             initializer=_join_run, initargs=(barrier,)) as pool:
        futures = [pool.submit(run_job, method_name, profile, locations) for locations in plan]
        errors = [f.exception() for f in futures]
    failed = [e for e in errors if e is not None]
    if failed:  # the job that failed first, not the ones it released from the barrier
        raise next((e for e in failed if not isinstance(e, threading.BrokenBarrierError)), failed[0])
    return [f.result() for f in futures]
