"""HDFS through WebHDFS (perfkit needs no native client); engines read hdfs:// URLs of the profile's NameNode."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

from hdfs.util import HdfsError

from perfkit import storage as clients
from perfkit.datasets.digest import hdfs_checksum_matches
from perfkit.storages.base import HIDDEN, Location, Storage, visible


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
