"""The copy half of the first study's trade: how long copying a dataset's S3 files to HDFS takes, measured in the same
run (behind the same network) by each method given, every copy verified. The fastest is what a user would pay once
before querying HDFS instead of S3 (perfkit.breakeven does the arithmetic)."""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from perfkit.config import Profile
from perfkit.errors import PerfkitError
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison

COPY_METHODS = ["stream", "distcp"]  # perfkit's own parallel copy, and the cluster's usual tool
COPY_CONCURRENCY = 4


@dataclass
class CopyCost:
    seconds: dict[str, float] = field(default_factory=dict)  # method -> seconds for every table folder, verified
    failed: dict[str, str] = field(default_factory=dict)  # method -> why it did not count
    bytes: int = 0

    @property
    def fastest(self) -> tuple[str, float] | None:
        return min(self.seconds.items(), key=lambda item: item[1]) if self.seconds else None

    def sentence(self) -> str:
        if not self.fastest:
            why = "; ".join(f"{m}: {e}" for m, e in self.failed.items()) or "no method given"
            return f"the copy to HDFS was not measured ({why})"
        method, seconds = self.fastest
        others = ", ".join(f"{m} {s:.1f} s" for m, s in sorted(self.seconds.items()) if m != method)
        return (f"copying {self.bytes / 1e6:.0f} MB S3 → HDFS took {seconds:.1f} s by {method}, the fastest"
                + (f" (also {others})" if others else "") + ", verified")


def measure_copy(profile: Profile, s3_locations: list[str], methods: list[str] | None = None,
                 concurrency: int = COPY_CONCURRENCY, progress: bool = False, calibration=None) -> CopyCost:
    """Copy each folder of `s3_locations` (the tables' S3 URLs) into a fresh HDFS folder once per method; each copy is
    timed and verified by its TransferComparison (saved with the transfer runs), and removed after. `calibration`:
    the S3 path as the query runs just before measured it, reused when the network is still the same."""
    cost = CopyCost()
    for location in s3_locations:
        parts = urlsplit(location)
        if parts.netloc != profile.s3_bucket:
            raise PerfkitError(f"copy cost: {location} is not in the profile's bucket {profile.s3_bucket}")
        transfer = TransferComparison(profile, methods=list(methods or COPY_METHODS), concurrency=[concurrency],
                                      source_prefix=parts.path.strip("/"))
        transfer.share_calibration(calibration)
        try:
            transfer.prepare(progress)
        except PerfkitError as err:  # e.g. a partitioned folder: its files sit in sub-folders
            cost.failed = {m: str(err) for m in transfer.methods}
            cost.seconds = {}
            return cost
        cost.bytes += transfer.manifest.total_bytes
        results = transfer.run(progress)
        for name in transfer.methods:
            copies = [r for r in results.records if r.subject == name and r.case == "total"]
            if not copies or not all(r.ok for r in copies):
                cost.failed.setdefault(name, next((r.error for r in copies if not r.ok), None) or "did not run")
            elif name not in cost.failed:
                cost.seconds[name] = cost.seconds.get(name, 0.0) + sum(r.wall_s for r in copies)
    for name in cost.failed:
        cost.seconds.pop(name, None)  # a method counts only when it copied every folder
    return cost
