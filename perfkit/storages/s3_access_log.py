"""The S3 server's own count of each request, from its access log: the lab's versitygw (`--access-log FILE`); and
what a run on S3 says where no server logs them (AWS: S3's own count is CloudWatch's, per window).

One line per request, written when the server answers it (so a run's requests are in the file when the run ends):
    owner bucket [time] ip requester request-id operation key uri status error bytes-sent object-size ...
The operation is the S3 action (`s3_GetObject` or `GetObject`). Bucket-level requests (HeadBucket, perfkit's own
health probe; ListBuckets) are counted apart: no request on a prefix, as CloudWatch's prefix filter sees it."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from perfkit.errors import root_cause
from perfkit.storages.base import Counted, ServerCounting

ACTIONS = {  # S3 action -> perfkit counter (perfkit.accounting.counters)
    "GetObject": "s3_get", "HeadObject": "s3_head", "ListObjects": "s3_list", "ListObjectsV2": "s3_list",
    "ListObjectVersions": "s3_list", "ListMultipartUploads": "s3_list", "ListParts": "s3_list",
    "PutObject": "s3_put", "CreateMultipartUpload": "s3_put", "UploadPart": "s3_put",
    "CompleteMultipartUpload": "s3_put", "CopyObject": "s3_copy", "UploadPartCopy": "s3_copy",
    "DeleteObject": "s3_delete", "DeleteObjects": "s3_delete", "AbortMultipartUpload": "s3_delete",
}
BUCKET_LEVEL = "s3_bucket_requests"  # HeadBucket, ListBuckets, GetBucketLocation, ...
LINE = re.compile(r"^(?P<owner>\S+) (?P<bucket>\S+) \[(?P<time>[^\]]*)\] (?P<ip>\S+) (?P<requester>\S+) "
                  r"(?P<request_id>\S+) (?P<operation>\S+) (?P<key>\S+) (?P<uri>\S+) (?P<status>\d{3}) "
                  r"(?P<error>\S+) (?P<bytes_sent>-|\d+) (?P<object_size>-|\d+) ")
THROTTLED = {"503", "429"}
# every counter a read gives, 0 until counted: a run's difference keeps only counters its snapshot before had
COUNTED = tuple(dict.fromkeys([*ACTIONS.values(), BUCKET_LEVEL, "s3_throttled", "s3_errors", "unparsed"]))


def classify(operation: str) -> str:
    action = operation.removeprefix("s3_")
    return ACTIONS.get(action, BUCKET_LEVEL)


def count_lines(lines) -> Counter:
    """perfkit's counters for these log lines: requests by type (failed ones too: S3 bills them), throttled answers,
    4xx/5xx answers, and lines that did not parse (`unparsed`: said, not dropped). No bytes: versitygw v1.8.0 logs
    0 bytes for a GET it streams (it logs the size of bodies it buffers), so the lab counts S3's bytes on the wire,
    in its network emulator, when S3 sits behind one."""
    found: Counter = Counter()
    for line in lines:
        if not line.strip() or line.startswith("log starts"):
            continue
        match = LINE.match(line)
        if not match:
            found["unparsed"] += 1
            continue
        name = classify(match["operation"])
        found[name] += 1
        status = match["status"]
        if status in THROTTLED:
            found["s3_throttled"] += 1
        if status[0] in "45":
            found["s3_errors"] += 1
    return found


class S3AccessLog:
    """Cumulative counters from an access log that only grows; read() reads what was appended since its last call.
    With skip_existing, the lines the log held at the first read are not counted: a run needs differences only, and
    a lab's log holds every request since its server started (parsing it took 0.4 s on a run's first snapshot)."""

    storage = "s3"

    def __init__(self, path: Path, name: str = "S3 server access log", skip_existing: bool = False):
        self.path, self.name = Path(path), name
        self._offset, self._counts, self._partial = 0, Counter(), ""
        self._skip = skip_existing

    def read(self) -> dict[str, float]:
        if not self.path.exists():
            raise FileNotFoundError(f"the S3 server's access log {self.path} is missing: restart the lab's S3 "
                                    "(perfkit lab down; perfkit lab up)")
        if self._skip:
            self._offset, self._skip = _after_the_last_line(self.path), False
        if self.path.stat().st_size < self._offset:  # the server started again with a new log
            self._offset, self._partial = 0, ""
        with self.path.open("r", encoding="utf-8", errors="replace") as log:
            log.seek(self._offset)
            text = self._partial + log.read()
            self._offset = log.tell()
        *lines, self._partial = text.split("\n")  # a line still being written waits for the next read
        self._counts.update(count_lines(lines))
        return {name: float(self._counts[name]) for name in COUNTED}


def _after_the_last_line(path: Path, tail: int = 65536) -> int:
    """The offset just after the log's last complete line (one still being written is read whole later)."""
    size = path.stat().st_size
    with path.open("rb") as log:
        log.seek(max(0, size - tail))
        start, data = log.tell(), log.read()
    newline = data.rfind(b"\n")
    return start + newline + 1 if newline >= 0 else start


def s3_server_counting(profile, storage: str) -> ServerCounting:
    """The S3 server's request log where the provider has one on this machine, and S3's bytes where a network
    emulator in front of it counts them; else why a run on S3 has no server-side count."""
    found = ServerCounting()
    log = profile.provider.s3_request_log()
    if log is not None:
        found.read.append(S3AccessLog(log, skip_existing=True))
    else:
        found.not_per_run = s3_not_per_run(profile)
    try:
        wire, why_not = profile.provider.s3_wire_bytes(), None
    except Exception as err:  # noqa: BLE001 - the emulator cannot be asked: S3's bytes are not counted at the server
        wire, why_not = None, f"not counted: the network emulator could not be asked ({root_cause(err, 160)})"
    if wire is not None:
        found.read.append(Counted("S3 bytes counted by the network emulator (responses, headers included)", wire,
                                  storage))
    elif log is not None:  # the server counts each run's requests but not their bytes: its runs say why
        found.not_counted = {"s3_bytes_read": why_not or profile.provider.s3_bytes_not_counted()}
    return found


def s3_not_per_run(profile) -> str:
    """Why a run on S3 has no server-side count where no S3 server logs each request for perfkit (AWS): S3's own count
    is CloudWatch's request metrics, per minute."""
    if profile.s3_request_metrics or profile.s3_request_metrics_filter:
        return ("not counted per run but over the experiment's window (its S3 window): S3 counts requests in "
                "CloudWatch per minute")
    return ("not counted: S3's own count is CloudWatch's request metrics, which this profile does not ask for; set "
            "s3_request_metrics: true in the profile (or name a filter: s3_request_metrics_filter) to count each "
            "experiment's window")
