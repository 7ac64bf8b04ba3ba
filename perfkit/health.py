"""Is a storage healthy right now, and was it healthy for the whole of a measured run?

A query blocked in storage-client retries (S3A retries for minutes while its server is down) can
still finish and look like a slow sample. The watch probes each storage the run reads just before
the run, every `interval` seconds during it, and just after it: one failed probe makes the run a
failure with that cause. An outage shorter than the interval can slip between two probes.

A storage found healthy less than RECENT_S ago (a probe, or a run that got its answer from it) is not asked again
just before the next run: runs interleaved across storages would otherwise pay a probe each (a round trip to S3,
20 ms behind ec2-s3, on runs of 0.2 s). An outage since then shows in the run's own probes and its answer.
"""
from __future__ import annotations

import threading
import time
import weakref
from typing import Callable

import requests
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from perfkit.config import Profile
from perfkit.errors import root_cause

Probe = Callable[[], "str | None"]  # None when healthy, else the reason in one line
_LAST_HEALTHY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # probe -> when last healthy (monotonic)
# a DataNode serving a benchmark's own parallel reads on 2 busy cores stalled a probe past 2 s (read jobs then
# failed as "unhealthy"); a frozen or dead service never answers, so a longer wait costs only detection time
PROBE_TIMEOUT_S = 10.0
RECENT_S = 5.0
DATANODE_INFO = "Hadoop:service=DataNode,name=DataNodeInfo"  # a small bean: the DataNode's own answer, no HDFS op
# one attempt, short timeouts: a probe answers "healthy now?", it must not retry its way past an outage.
# botocore's `max_attempts` in a Config's retries counts *retries* in every retry mode (1 meant two requests);
# `total_max_attempts` counts the first request too: 1 is exactly one HTTP request
PROBE_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=PROBE_TIMEOUT_S,
                      read_timeout=PROBE_TIMEOUT_S)


def hdfs_probe(profile: Profile, read_path: str | None = None) -> Probe:
    """The NameNode answers; with `read_path`, a DataNode holding that file's first block also answers.

    A frozen DataNode is still "live" to the NameNode for minutes: only a request served by it shows it. A probe must
    not change what perfkit counts of a run (perfkit.accounting.hdfs_jmx), and it runs every second during one: not a
    read of the data (a DataNode streams a whole block to a reader that asked for one byte), nor a checksum (the
    NameNode counts two block lookups for each). So the file's DataNodes are looked up once, at the first probe (before
    the first run), and then asked for their own JMX. A lookup again only after they failed: that run fails anyway."""
    from perfkit.storage import located_blocks

    status = f"{profile.webhdfs_url.rstrip('/')}/webhdfs/v1/?op=GETFILESTATUS&user.name={profile.hdfs_user}"
    session = requests.Session()  # kept-alive connections: a probe costs a round trip, not a TCP handshake
    datanodes: list[str] | None = None  # the web addresses of the DataNodes with the file's first block

    def answered(url: str, what: str) -> str | None:
        """None when `url` answers 200, else what failed ("HDFS at ... <what> (why)")."""
        try:
            response = session.get(url, timeout=PROBE_TIMEOUT_S)
        except requests.RequestException as err:
            return f"HDFS at {profile.webhdfs_url} {what} ({root_cause(err, 120)})"
        if response.status_code != 200:
            return f"HDFS at {profile.webhdfs_url} {what} (HTTP {response.status_code})"
        return None

    def probe() -> str | None:
        nonlocal datanodes
        problem = answered(status, "not reachable")
        if problem or read_path is None:
            return problem
        if datanodes is None:
            try:
                blocks = located_blocks(profile, read_path, 1, session, PROBE_TIMEOUT_S)
                datanodes = _datanode_web_urls(blocks, profile.webhdfs_url)
            except requests.RequestException as err:  # said as the probe's other requests say it
                code = getattr(err.response, "status_code", None)
                why = f"HTTP {code}" if code else root_cause(err, 120)
                return f"HDFS at {profile.webhdfs_url} cannot say which DataNodes hold {read_path} ({why})"
            except (ValueError, KeyError, TypeError) as err:
                return f"HDFS at {profile.webhdfs_url} gave unexpected block locations of {read_path} ({err!r})"
        problems = []
        for url in datanodes:
            problem = answered(f"{url}/jmx?qry={DATANODE_INFO}", f"cannot read {read_path}: its DataNode at {url} "
                               "does not answer")
            if problem is None:
                return None
            problems.append(problem)
        if problems:
            datanodes = None  # the block may live elsewhere by the next probe: look it up again
        return problems[0] if problems else None

    return probe


def _datanode_web_urls(blocks: list[dict], namenode_url: str) -> list[str]:
    """The web addresses of the DataNodes holding a file's first block (a file without a block has none), each on the
    port of the NameNode's scheme."""
    secure = namenode_url.startswith("https://")
    return [f"{'https' if secure else 'http'}://{node['ipAddr']}:{node['infoSecurePort' if secure else 'infoPort']}"
            for node in (blocks[0].get("locations", []) if blocks else [])]


def nfs_probe(profile: Profile) -> Probe:
    """The NFS export lists its root within the probe's time (libnfs' nfs-ls; a frozen server does not answer)."""
    import shutil
    import subprocess

    if not profile.nfs_url or shutil.which("nfs-ls") is None:
        return lambda: None  # nothing to ask it with: the reads themselves will fail if it is gone

    def probe() -> str | None:
        try:
            subprocess.run(["nfs-ls", profile.nfs_url], capture_output=True, timeout=PROBE_TIMEOUT_S, check=True)
        except subprocess.TimeoutExpired:
            return f"NFS at {profile.nfs_url} did not answer within {PROBE_TIMEOUT_S:g} s"
        except subprocess.CalledProcessError as err:
            return (f"NFS at {profile.nfs_url} failed "
                    f"({root_cause(err.stderr.decode(errors='replace') or str(err), 120)})")
        return None

    return probe


def s3_probe(profile: Profile) -> Probe:
    """One HEAD of the bucket. A throttled answer (503 SlowDown, 429) is a server that answers and asks for fewer
    requests: healthy, since the engines count their throttled requests and flag the run (perfkit.storages.s3)."""
    from perfkit.storage import s3_client, throttling

    client = s3_client(profile, PROBE_CONFIG)
    where = f"S3 bucket {profile.s3_bucket!r}" + (f" at {profile.s3_endpoint}" if profile.s3_endpoint else "")

    def probe() -> str | None:
        try:
            client.head_bucket(Bucket=profile.s3_bucket)
        except ClientError as err:
            return None if throttling(err) else f"{where} not healthy ({root_cause(err, 120)})"
        except BotoCoreError as err:
            return f"{where} not healthy ({root_cause(err, 120)})"
        return None

    return probe


class HealthWatch:
    """Context manager: probes before, during (every `interval` s) and after the block, unless the block says the
    run got its answer (answered()).

        with HealthWatch(probes) as watch:
            run()
            watch.answered()
        if watch.problem: ...   # the first failed probe, with when it failed
    """

    def __init__(self, probes: dict[str, Probe], interval: float = 1.0):
        self.probes, self.interval = probes, interval
        self.recent_s = max(interval, RECENT_S)
        self.problems: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self, when: str, recent_ok: bool = False) -> None:
        """Probe every storage; with recent_ok, one found healthy less than `recent_s` ago is not asked again
        (runs one after the other: the previous run's last probe or answer stands for this run's first)."""
        now = time.monotonic()
        for probe in self.probes.values():
            if recent_ok and now - _LAST_HEALTHY.get(probe, -1e9) < self.recent_s:
                continue
            reason = probe()
            if reason:
                self.problems.append(f"{reason} {when}")
            else:
                _LAST_HEALTHY[probe] = time.monotonic()

    @property
    def problem(self) -> str | None:
        return self.problems[0] if self.problems else None

    def answered(self) -> None:
        """The run read its storages and got its answer: the storages answered until now, which stands for the
        probe after the run (a round trip to S3 on every run, 5% of a short query behind an emulated network) and
        for the next run's first (back-to-back runs)."""
        self._answered = True
        for probe in self.probes.values():
            _LAST_HEALTHY[probe] = time.monotonic()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.check(f"{time.monotonic() - self._t0:.1f} s into the run")

    def __enter__(self) -> "HealthWatch":
        self._t0, self._answered = time.monotonic(), False
        self.check("before the run", recent_ok=True)
        if self.probes and not self.problems:
            self._thread = threading.Thread(target=self._loop, name="perfkit-health-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if not self._answered:  # a failed run: was the storage the cause?
                self.check("after the run")
