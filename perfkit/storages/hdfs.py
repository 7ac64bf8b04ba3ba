"""HDFS through WebHDFS (perfkit needs no native client); engines read hdfs:// URLs of the profile's NameNode."""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

import requests
from hdfs.util import HdfsError

from perfkit import storage as clients
from perfkit.compat import zip_strict
from perfkit.storages.digest import hdfs_checksum_matches
from perfkit.errors import PerfkitError
from perfkit.storages.base import HIDDEN, Location, Storage, visible

BLOCK_THREADS = 8  # one small NameNode request per file
# how a Hadoop client (Spark, Hive, Trino's HDFS file system) reports a damaged block in its error
_CHECKSUM = re.compile(r"Checksum error:\s*(?:\w+:(?://[^/\s]*)?)?(/\S*?)(?=\s+at\s+\d|\s|$)")
_MISSING = re.compile(r"(?:Could not obtain block|BlockMissingException)\b.*?file=(\S+)")


class Hdfs(Storage):
    name = "hdfs"
    schemes = ("hdfs",)

    @cached_property
    def client(self):
        return clients.webhdfs_client(self.profile)

    def folder(self, *parts: str) -> Location:
        return Location(self.name, self.profile.hdfs_path(*parts))

    def url(self, loc: Location) -> str:
        return self.profile.hdfs_url_of(loc.path)

    def list_files(self, loc: Location) -> dict[str, int] | None:
        try:
            entries = self.client.list(loc.path, status=True)
        except HdfsError as err:
            if "does not exist" in str(err):
                return None
            raise
        return visible({name: st["length"] for name, st in entries if st["type"] == "FILE"})

    def replication(self, loc: Location) -> int | None:
        """The replication the files in `loc` have (the highest, one LISTSTATUS); None for a folder without files."""
        entries = self.client.list(loc.path, status=True)
        found = [int(st.get("replication") or 0) for _, st in entries if st["type"] == "FILE"]
        return max(found) if found else None

    def list_tree(self, loc: Location) -> dict[str, int] | None:
        """One WebHDFS LISTSTATUS per folder; hidden folders (_temporary, .hive-staging) are not entered."""
        found: dict[str, int] = {}
        todo = [""]
        while todo:
            rel = todo.pop()
            try:
                entries = self.client.list(f"{loc.path}/{rel}".rstrip("/"), status=True)
            except HdfsError as err:
                if "does not exist" in str(err) and not rel:
                    return None
                raise
            for name, st in entries:
                if not name or HIDDEN.match(name):
                    continue
                path = f"{rel}/{name}" if rel else name
                if st["type"] == "DIRECTORY":
                    todo.append(path)
                else:
                    found[path] = st["length"]
        return found

    def read_range(self, loc: Location, name: str, offset: int, length: int) -> bytes:
        with self.client.read(f"{loc.path}/{name}", offset=offset, length=length) as reader:
            return reader.read()

    def read_text(self, loc: Location, name: str) -> str | None:
        try:
            with self.client.read(f"{loc.path}/{name}") as reader:
                return reader.read().decode()
        except HdfsError as err:
            if "does not exist" in str(err) or "not found" in str(err):
                return None
            raise

    def checksum_matches(self, loc: Location, local: Path, digest) -> bool:
        # HDFS's file checksum (an MD5 of the blocks' CRC MD5s), computed by the DataNodes from their stored CRCs
        return hdfs_checksum_matches(local, digest, self.client.checksum(f"{loc.path}/{local.name}"))

    def damaged(self, loc: Location, files: dict[str, int]) -> dict[str, str]:
        names = sorted(files)
        with ThreadPoolExecutor(BLOCK_THREADS) as pool:
            found = list(pool.map(lambda name: self.block_problem(f"{loc.path}/{name}", files[name]), names))
        return {name: why for name, why in zip_strict(names, found) if why}

    def block_problem(self, path: str, size: int) -> str | None:
        """What the NameNode knows is wrong with the file's blocks (WebHDFS GET_BLOCK_LOCATIONS: a block whose
        replicas are all corrupt says isCorrupt; one with no live replica lists no location), or None."""
        try:
            blocks = clients.located_blocks(self.profile, path, size)
        except (requests.RequestException, ValueError, KeyError, TypeError) as err:
            raise PerfkitError(f"HDFS at {self.profile.webhdfs_url}: cannot list the blocks of {path} ({err}). Fix: "
                               + self.profile.provider.fix("hdfs", "check that the NameNode answers")) from None
        for block in blocks:
            where = f"block {block.get('block', {}).get('blockId', '?')} at byte {block.get('startOffset', '?')}"
            if block.get("isCorrupt"):
                return f"{where} is corrupt (every replica failed its checksum)"
            if not block.get("locations"):
                return f"{where} has no live replica"
        return None

    def explain(self, error: str) -> str | None:
        if found := _CHECKSUM.search(error):
            return f"corrupt block in {_path_of(found.group(1))} (HDFS checksum error)"
        if found := _MISSING.search(error):
            path = _path_of(found.group(1))
            # a client that finds every replica failing its checksum reports them and then finds none to read
            try:
                corrupt = "is corrupt" in (self.block_problem(path, 1 << 62) or "")
            except PerfkitError:
                corrupt = False
            if corrupt:
                return f"corrupt block in {path} (HDFS checksum error)"
            return f"missing block in {path} (no DataNode holds a replica)"
        return None

    def upload(self, loc: Location, local: Path) -> None:
        clients.upload_to_hdfs(self.client, local, f"{loc.path}/{local.name}")

    def write_text(self, loc: Location, name: str, text: str) -> None:
        self.client.write(f"{loc.path}/{name}", text.encode(), overwrite=True)

    def make_folder(self, loc: Location) -> None:
        self.client.makedirs(loc.path)

    def delete_tree(self, loc: Location) -> None:
        self.client.delete(loc.path, recursive=True)

    def check(self) -> None:
        clients.check_hdfs(self.profile)

    def health_probe(self, read_file: str | None = None):
        from perfkit.health import hdfs_probe

        return hdfs_probe(self.profile, read_file)


def _path_of(name: str) -> str:
    """The file's path in an hdfs:// URL or a bare path, without trailing punctuation."""
    return (urlsplit(name).path if "://" in name else name).rstrip(".,;:)'\"")
