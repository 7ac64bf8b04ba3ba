"""Talk to an Alluxio cluster as a client: its shell (`alluxio fs ...`) and its byte counters.

The shell comes from the profile's provider: the `alluxio` command on a cluster's PATH, or in the lab Alluxio's
own FileSystemShell class run on the lab's Java with a client configuration (the master's address, no keys). The
counters come the same way everywhere: the master's REST API lists the live workers, and each worker's web port
serves its own metrics.
"""
from __future__ import annotations

import http.client
import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request

from perfkit.config import Profile
from perfkit.errors import PerfkitError, root_cause

MASTER_WEB_PORT = 19999  # Alluxio's default (alluxio.master.web.port)
# the master's RPCs a client's read can make: a file's status (an open is one), a listing, whether a path exists, the
# workers and a block's locations, and the cluster's configuration (which a new client context fetches first)
READ_RPCS = ("GetStatus", "ListStatus", "CheckExistence", "GetWorkerInfoList", "GetBlockInfo", "getConfiguration",
             "getConfigHash")


class AlluxioClient:
    def __init__(self, profile: Profile):
        self.profile = profile

    def command(self, *args: str) -> list[str]:
        return self.profile.provider.alluxio_shell(*args)

    def fs(self, *args: str, timeout: float = 600) -> str:
        """`alluxio fs ARGS`; its output, or PerfkitError with the shell's own reason in one line."""
        run = subprocess.run(self.command(*args), capture_output=True, text=True, timeout=timeout,
                             env=_quiet_env())
        if run.returncode != 0:
            said = "\n".join(line for line in (run.stderr + run.stdout).splitlines() if not line.startswith("SLF4J"))
            raise PerfkitError(f"alluxio fs {' '.join(args)} failed (exit {run.returncode}): "
                               f"{root_cause(said or 'no output', 300)}. Fix: " + self.profile.provider.fix(
                                   "alluxio", f"check the Alluxio master at {self.profile.alluxio_master}"))
        return run.stdout

    def version(self) -> str:
        """The version the Alluxio master reports."""
        return str(self.master_info()["version"])

    def free(self, path: str) -> None:
        """Evict every cached block under `path` from the workers (the data stays on S3): through the proxy's REST
        API where the profile names it (0.1 s), else the shell (a JVM's start, 3 s). The workers drop the blocks
        at their next heartbeats, after this returns."""
        if self.profile.alluxio_rest:
            self._post(path, "free", {"recursive": True, "forced": True}, "free")
        else:
            self.fs("free", "-f", path)

    def _post(self, path: str, operation: str, options: dict, doing: str, gone_ok: bool = False) -> None:
        """POST the proxy's v1 paths API: /paths/<path>/<operation> with its options as JSON (`gone_ok`: a path that
        does not exist is no error)."""
        url = f"{self.profile.alluxio_rest.rstrip('/')}/paths/{urllib.parse.quote(path)}/{operation}"
        request = urllib.request.Request(url, data=json.dumps(options).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            urllib.request.urlopen(request, timeout=600).close()
        except urllib.error.HTTPError as err:  # Alluxio's own reason, e.g. {"message": "Path ... does not exist."}
            said = err.read().decode(errors="replace")
            try:
                answer = json.loads(said)
            except ValueError:
                answer = None
            if isinstance(answer, dict):
                said = answer.get("message", said)
            if gone_ok and isinstance(answer, dict) and answer.get("statusCode") == "NOT_FOUND":
                return
            raise PerfkitError(f"Alluxio's REST API refused to {doing} {path} (HTTP {err.code}): "
                               f"{root_cause(said, 300)}. Fix: check that {path} is under the folder where the bucket "
                               "is mounted (alluxio_s3_mount)") from None
        except (OSError, http.client.HTTPException) as err:
            raise PerfkitError(f"Alluxio's REST API at {self.profile.alluxio_rest} does not answer "
                               f"({root_cause(err, 200)}). Fix: " + self.profile.provider.fix(
                                   "alluxio", "check that its proxy runs, or leave alluxio_rest out of the profile "
                                   "to go through the shell")) from None

    def sync_metadata(self, path: str) -> None:
        """The master's view of every file under `path` made S3's own (lengths, new and gone files): a listing
        that syncs through the REST API where the profile names it, else the shell's loadMetadata. A folder gone
        from S3 is gone from the master's view after it (Alluxio then says it does not exist: that is no error)."""
        if self.profile.alluxio_rest:
            self._post(path, "list-status", {"recursive": True, "commonOptions": {"syncIntervalMs": 0}},
                       "sync the metadata of", gone_ok=True)
        else:
            self.fs("loadMetadata", "-R", "-F", path)

    def master_web(self) -> str:
        """host:port of the master's web server (its REST API): the profile's, or Alluxio's default port 19999."""
        host = self.profile.alluxio_master.rpartition(":")[0] or self.profile.alluxio_master
        return self.profile.alluxio_master_web or f"{host}:{MASTER_WEB_PORT}"

    def master_info(self) -> dict:
        """The master's /api/v1/master/info: capacity, and the workers with their addresses."""
        info = get_json(f"http://{self.master_web()}/api/v1/master/info?QUERY_RAW_CONFIGURATION=false")
        if info is None or "capacity" not in info:
            fix = self.profile.provider.fix("alluxio", "check that it runs, or set alluxio_master_web (host:port) "
                                            "in the profile")
            raise PerfkitError(f"the Alluxio master's web server at {self.master_web()} does not answer. Fix: {fix}")
        return info

    def store(self, info: dict | None = None) -> tuple[int, int]:
        """(bytes the workers' stores hold, bytes they can hold), as the master sums them (in `info` if given)."""
        capacity = (info or self.master_info())["capacity"]
        return int(capacity["used"]), int(capacity["total"])

    def worker_metrics(self, info: dict | None = None) -> dict[str, float]:
        """Every live worker's own counters and gauges (/metrics/json/ on its web port), summed by name; the workers
        are those the master lists (in `info` if given). A worker that does not answer is an error: its share would
        be missing from every count."""
        totals: dict[str, float] = {}
        for worker in (info or self.master_info()).get("workers") or []:
            where = f"{worker['address']['host']}:{worker['address']['webPort']}"
            data = get_json(f"http://{where}/metrics/json/")
            if data is None:
                raise PerfkitError(f"the Alluxio worker at {where} gives no metrics: its counters cannot be summed. "
                                   "Fix: check that worker (the master lists it as live)")
            for kind in ("counters", "gauges"):
                for name, entry in (data.get(kind) or {}).items():
                    value = entry.get("count", entry.get("value"))
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        totals[name] = totals.get(name, 0) + value
        return totals

    def worker_counters(self) -> tuple[int, int]:
        """(bytes the workers served from their cache, bytes they read from under-filesystems), over all workers."""
        metrics = self.worker_metrics()
        from_ufs = sum(v for k, v in metrics.items() if k.startswith("Worker.BytesReadPerUfs."))
        return int(metrics.get("Worker.BytesReadCache", 0)), int(from_ufs)

    def master_rpcs(self) -> dict[str, int]:
        """The master's count of each RPC in READ_RPCS since it started (its /metrics/json/: RpcUtils times every
        RPC as Master.<name>, Master.<name>.User:<user> for an authenticated caller)."""
        data = get_json(f"http://{self.master_web()}/metrics/json/")
        if data is None:
            raise PerfkitError(f"the Alluxio master's web server at {self.master_web()} gives no metrics. Fix: "
                               + self.profile.provider.fix("alluxio", "check that it runs"))
        counts = dict.fromkeys(READ_RPCS, 0)
        for name, entry in (data.get("timers") or {}).items():
            rpc = name.removeprefix("Master.").split(".User:")[0]
            if name.startswith("Master.") and rpc in counts:
                counts[rpc] += int(entry.get("count", 0))
        return counts

    def caching_tasks(self, info: dict | None = None) -> int:
        """Cache requests the workers are still working on (running or queued): a read through Alluxio asks
        the worker to fetch the whole blocks it touched, in the background."""
        metrics = self.worker_metrics(info)
        return int(metrics.get("Worker.CacheManagerThreadActiveCount", 0)
                   + metrics.get("Worker.CacheManagerThreadQueueWaitingTaskCount", 0))


def get_json(url: str, timeout: float = 10) -> dict | None:
    """An Alluxio web server's JSON answer, or None when it does not give one."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.load(response)
    except (OSError, http.client.HTTPException, ValueError):  # refused, timed out, cut off, an HTTP error, not JSON
        return None


def _quiet_env() -> dict:
    import os

    return {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
