"""Hadoop DistCp (local MapReduce in the lab, YARN on a cluster) and EMR's S3DistCp."""
from __future__ import annotations

import shutil

from perfkit.errors import PerfkitError
from perfkit.hadoop_cli import HadoopCli, run_tool
from perfkit.transfer import TransferMethod

STRATEGIES = ("uniformsize", "dynamic")


class DistCp(TransferMethod):
    """`hadoop distcp -m <concurrency> -strategy <strategy> -f <listing> <dest>`."""

    name = "distcp"
    parallel = True

    def copy(self, manifest, dest, scratch):
        strategy = self.options.get("strategy", "uniformsize")
        if strategy not in STRATEGIES:
            raise PerfkitError(f"distcp: unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
        listing = scratch / "distcp-sources.txt"
        listing.write_text("".join(self.source_url(manifest, name) + "\n" for name, _ in manifest.files))
        # local MapReduce runs one map at a time unless told otherwise: let -m maps run together
        local_maps = ([f"-Dmapreduce.local.map.tasks.maximum={self.concurrency}"]
                      if self.profile.provider.local_mapreduce else [])
        HadoopCli(self.profile).run("distcp", *local_maps, "-m", str(self.concurrency), "-strategy", strategy,
               "-f", listing.as_uri(), self.dest_url(dest))
        return {}


class S3DistCp(TransferMethod):
    """EMR's s3-dist-cp; it exists only on EMR nodes."""

    name = "s3-dist-cp"

    def unavailable(self):
        if shutil.which("s3-dist-cp") is None:
            return "s3-dist-cp is not on PATH: it ships only on EMR cluster nodes"
        return None

    def copy(self, manifest, dest, scratch):
        argv = ["s3-dist-cp", f"--src={manifest.url('s3')}", f"--dest={self.dest_url(dest)}",
                "--srcPattern=.*/[^/]+$"]
        run_tool(argv, what="s3-dist-cp")
        return {}
