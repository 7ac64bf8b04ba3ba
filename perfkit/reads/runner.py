"""J parallel jobs, each a separate process, each reading its list of files with one method."""
from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from perfkit.config import Profile
from perfkit.errors import PerfkitError


def run_job(method_name: str, profile: Profile, locations: list[str], start_at: float) -> dict:
    """One job: wait for the common start, read every file, report start, end, bytes (or the error)."""
    from perfkit.reads import get_method

    method = get_method(method_name, profile)
    method.prepare()
    time.sleep(max(0.0, start_at - time.time()))
    start, total = time.time(), 0
    try:
        for location in locations:
            total += method.read(location)
    except PerfkitError as err:
        return {"start": start, "end": time.time(), "bytes": total, "ok": False, "error": str(err), "pid": os.getpid()}
    return {"start": start, "end": time.time(), "bytes": total, "ok": True, "error": None, "pid": os.getpid()}


def run_jobs(method_name: str, profile: Profile, plan: list[list[str]]) -> list[dict]:
    """Run one job per list in `plan`, all at once, each in its own process; results in plan order."""
    context = multiprocessing.get_context("fork")  # fast start; the jobs share nothing but the plan
    start_at = time.time() + 0.3 + 0.05 * len(plan)  # every process is up before the first read
    with ProcessPoolExecutor(max_workers=len(plan), mp_context=context) as pool:
        futures = [pool.submit(run_job, method_name, profile, locations, start_at) for locations in plan]
        return [f.result() for f in futures]
