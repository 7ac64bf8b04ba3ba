"""perfkit's own copy: parallel ranged GETs streamed straight into HDFS, no local disk in between.

`concurrency` files are copied at once. Within a file, up to `prefetch` ranged GETs run ahead of
the writer, and the parts are written in order into one WebHDFS CREATE whose request body is
streamed (chunked), so no file is ever held whole in memory or on disk.
"""
from __future__ import annotations

import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from botocore.config import Config

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.transfer import TransferMethod

MiB = 1 << 20


class Stream(TransferMethod):
    name = "stream"
    parallel = True

    def copy(self, manifest, dest, scratch):
        part = int(self.options.get("part_mb", 8)) * MiB
        prefetch = int(self.options.get("prefetch", 4))
        # one HTTP connection per GET that can be in flight
        s3 = s3_storage.s3_client(self.profile, Config(max_pool_connections=self.concurrency * prefetch + 2))
        hdfs = hdfs_storage.webhdfs_client(self.profile)

        with ThreadPoolExecutor(self.concurrency * prefetch, thread_name_prefix="get") as getters:
            def parts(key: str, size: int):
                ranges = [(start, min(start + part, size) - 1) for start in range(0, size, part)]
                fetch = lambda r: s3.get_object(  # noqa: E731
                    Bucket=manifest.bucket, Key=key, Range=f"bytes={r[0]}-{r[1]}")["Body"].read()
                ahead = deque(getters.submit(fetch, r) for r in ranges[:prefetch])
                for r in ranges[prefetch:] + [None] * len(ahead):
                    data = ahead.popleft().result()
                    if r is not None:
                        ahead.append(getters.submit(fetch, r))
                    yield data

            def one(item: tuple[str, int]) -> float:
                name, size = item
                t0 = time.perf_counter()
                hdfs.write(f"{dest}/{name}", data=parts(manifest.key(name), size), overwrite=True)
                return time.perf_counter() - t0

            with ThreadPoolExecutor(self.concurrency, thread_name_prefix="file") as writers:
                seconds = list(writers.map(one, manifest.files))
        return {name: s for (name, _), s in zip(manifest.files, seconds)}
