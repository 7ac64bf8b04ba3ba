"""Copy methods made of command-line tools: the aws CLI, `hadoop fs` and gohdfs."""
from __future__ import annotations

import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from perfkit.extras import missing
from perfkit.hadoop_cli import HadoopCli, gohdfs, gohdfs_unavailable, run_tool
from perfkit.transfer import TransferMethod, aws_env
from perfkit.transfer.manifest import Manifest


def aws_command(profile, *args: str) -> list[str]:
    """`aws ARGS` as perfkit runs it: the aws CLI of this Python (perfkit[tools]), at the profile's S3 endpoint."""
    endpoint = ["--endpoint-url", profile.s3_endpoint] if profile.s3_endpoint else []
    return [sys.executable, "-m", "awscli", *args, *endpoint, "--only-show-errors"]


class AwsCliMixin:
    def aws(self, *args: str) -> list[str]:
        return aws_command(self.profile, *args)

    def unavailable(self) -> str | None:
        return missing("awscli", f"the {self.name} method (the aws CLI)")

    def download(self, manifest: Manifest, name: str, local: Path, env: dict | None = None) -> None:
        src = manifest.url("s3", name)
        run_tool(self.aws("s3", "cp", src, str(local)), env or aws_env(self.profile), f"aws s3 cp {src}")


class CliSequential(AwsCliMixin, TransferMethod):
    """Per file: `aws s3 cp` to local disk, `hadoop fs -put`, delete the local copy."""

    name = "cli-sequential"

    def copy(self, manifest, dest, scratch):
        times = {}
        for name, _ in manifest.files:
            t0 = time.perf_counter()
            local = scratch / name
            self.download(manifest, name, local)
            HadoopCli(self.profile).run("fs", "-put", "-f", str(local), self.dest_url(dest, name))
            local.unlink()
            times[name] = time.perf_counter() - t0
        return times


class GohdfsSequential(AwsCliMixin, TransferMethod):
    """Per file: `aws s3 cp` to local disk, gohdfs `put`, delete the local copy."""

    name = "gohdfs-sequential"

    def unavailable(self):
        return super().unavailable() or gohdfs_unavailable(self.profile)

    def copy(self, manifest, dest, scratch):
        binary, env = gohdfs(self.profile)
        env, times = aws_env(self.profile, env), {}
        for name, _ in manifest.files:
            t0 = time.perf_counter()
            local = scratch / name
            self.download(manifest, name, local, env)
            run_tool([binary, "put", str(local), f"{dest}/{name}"], env, f"gohdfs put {name}")
            local.unlink()
            times[name] = time.perf_counter() - t0
        return times


class HdfsCp(TransferMethod):
    """`hadoop fs -cp s3a://... hdfs://...`, one process per file, `concurrency` at once (xargs -P)."""

    name = "hdfs-cp"
    parallel = True

    def copy(self, manifest, dest, scratch):
        def one(name: str) -> float:
            t0 = time.perf_counter()
            HadoopCli(self.profile).run("fs", "-cp", "-f", self.source_url(manifest, name), self.dest_url(dest, name))
            return time.perf_counter() - t0

        names = [name for name, _ in manifest.files]
        with ThreadPoolExecutor(self.concurrency) as pool:
            return dict(zip(names, pool.map(one, names)))


class AwsCli(AwsCliMixin, TransferMethod):
    """`aws s3 cp --recursive` with max_concurrent_requests = concurrency, then one `hadoop fs -put`."""

    name = "awscli"
    parallel = True

    def copy(self, manifest, dest, scratch):
        config = scratch / "aws-config"
        config.write_text(f"[default]\ns3 =\n  max_concurrent_requests = {self.concurrency}\n")
        local = scratch / "download"
        local.mkdir()
        run_tool(self.aws("s3", "cp", "--recursive", "--exclude", "*/*", manifest.url("s3"), str(local)),
                 aws_env(self.profile, {"AWS_CONFIG_FILE": str(config)}), "aws s3 cp --recursive")
        files = sorted(str(p) for p in local.iterdir())
        HadoopCli(self.profile).run("fs", "-put", "-f", *files, self.dest_url(dest))
        shutil.rmtree(local)
        return {}
