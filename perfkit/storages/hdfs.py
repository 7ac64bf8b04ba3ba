"""HDFS through WebHDFS (perfkit needs no native client); engines read hdfs:// URLs of the profile's NameNode."""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from urllib.parse import quote, urlsplit

import requests
from hdfs import InsecureClient
from hdfs.util import HdfsError

from perfkit import health
from perfkit.config import Profile
from perfkit.compat import zip_strict
from perfkit.prices import GB
from perfkit.storages.digest import hdfs_checksum_matches
from perfkit.storages.hdfs_jmx import hdfs_server_counting
from perfkit.errors import PerfkitError, ServiceError, root_cause
from perfkit.storages.base import HDFS_CLIENT, HIDDEN, Location, Storage, is_http_url, provider_fix, visible

BLOCK_THREADS = 8  # one small NameNode request per file
# how a Hadoop client (Spark, Hive, Trino's HDFS file system) reports a damaged block in its error
_CHECKSUM = re.compile(r"Checksum error:\s*(?:\w+:(?://[^/\s]*)?)?(/\S*?)(?=\s+at\s+\d|\s|$)")
_MISSING = re.compile(r"(?:Could not obtain block|BlockMissingException)\b.*?file=(\S+)")
DATANODE_INFO = "Hadoop:service=DataNode,name=DataNodeInfo"  # a small bean: the DataNode's own answer, no HDFS op


class Hdfs(Storage):
    name = "hdfs"
    schemes = ("hdfs",)
    colour = "#1f77b4"
    copy_target = True
    engine_client = HDFS_CLIENT

    @classmethod
    def month_stored(cls, prices, bytes_, replication=3, volume_type="st1"):
        """Every replica on EBS volumes of `volume_type` (a cluster's DataNodes)."""
        replicas = f"{replication} replica" + ("" if replication == 1 else "s")
        gb = bytes_ * replication / GB
        return f"HDFS on EBS {volume_type}, {replicas}", gb, gb * prices.ebs_per_gb_month(volume_type)

    @cached_property
    def client(self):
        return webhdfs_client(self.profile)

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
            blocks = located_blocks(self.profile, path, size)
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
        upload_to_hdfs(self.client, local, f"{loc.path}/{local.name}")

    def write_text(self, loc: Location, name: str, text: str) -> None:
        self.client.write(f"{loc.path}/{name}", text.encode(), overwrite=True)

    def make_folder(self, loc: Location) -> None:
        self.client.makedirs(loc.path)

    def delete_tree(self, loc: Location) -> None:
        self.client.delete(loc.path, recursive=True)

    def server_counting(self):
        return hdfs_server_counting(self.profile)

    def check(self) -> None:
        check_hdfs(self.profile)

    def health_probe(self, read_file: str | None = None):
        return hdfs_probe(self.profile, read_file)


def _path_of(name: str) -> str:
    """The file's path in an hdfs:// URL or a bare path, without trailing punctuation."""
    return (urlsplit(name).path if "://" in name else name).rstrip(".,;:)'\"")


# the clients, the check and the probe ------------------------------------------------------------------------------
def webhdfs_client(profile: Profile) -> InsecureClient:
    return InsecureClient(profile.webhdfs_url, user=profile.hdfs_user, timeout=30)


def located_blocks(profile: Profile, path: str, length: int, session=requests, timeout_s: float = 30) -> list[dict]:
    """The blocks of `path`'s first `length` bytes as the NameNode knows them (WebHDFS GET_BLOCK_LOCATIONS), each with
    its live replicas' DataNodes (`locations`: ipAddr, infoPort, ...) and isCorrupt. Raises requests' errors, and
    ValueError, KeyError or TypeError for an answer of another shape."""
    url = f"{profile.webhdfs_url.rstrip('/')}/webhdfs/v1{quote(path)}"
    params = {"op": "GET_BLOCK_LOCATIONS", "offset": 0, "length": max(length, 1), "user.name": profile.hdfs_user}
    response = session.get(url, params=params, timeout=timeout_s)
    response.raise_for_status()
    return response.json()["LocatedBlocks"]["locatedBlocks"]


def check_hdfs(profile: Profile) -> None:
    if not is_http_url(profile.webhdfs_url):
        raise ServiceError(f"HDFS at {profile.webhdfs_url}", "webhdfs_url is not an http(s):// URL (WebHDFS)",
                           "set the profile's webhdfs_url to the NameNode's web address, e.g. http://namenode:9870")
    try:
        webhdfs_client(profile).status("/")
    except (requests.RequestException, HdfsError) as err:
        raise ServiceError(f"HDFS at {profile.webhdfs_url}", f"not reachable ({type(err).__name__})",
                           provider_fix(profile, "webhdfs_url", "hdfs")) from None


def hdfs_listing(client: InsecureClient, path: str) -> dict[str, int]:
    """{file name: size} of the files directly under an HDFS folder ({} if it does not exist)."""
    try:
        return {name: st["length"] for name, st in client.list(path, status=True) if st["type"] == "FILE"}
    except HdfsError as err:
        if "does not exist" in str(err):
            return {}
        raise


def upload_to_hdfs(client: InsecureClient, local: Path, path: str) -> None:
    client.upload(path, str(local), overwrite=True)


def hdfs_probe(profile: Profile, read_path: str | None = None) -> health.Probe:
    """The NameNode answers; with `read_path`, a DataNode holding that file's first block also answers.

    A frozen DataNode is still "live" to the NameNode for minutes: only a request served by it shows it. A probe must
    not change what perfkit counts of a run (perfkit.storages.hdfs_jmx), and it runs every second during one: not a
    read of the data (a DataNode streams a whole block to a reader that asked for one byte), nor a checksum (the
    NameNode counts two block lookups for each). So the file's DataNodes are looked up once, at the first probe (before
    the first run), and then asked for their own JMX. A lookup again only after they failed: that run fails anyway."""
    status = f"{profile.webhdfs_url.rstrip('/')}/webhdfs/v1/?op=GETFILESTATUS&user.name={profile.hdfs_user}"
    session = requests.Session()  # kept-alive connections: a probe costs a round trip, not a TCP handshake
    datanodes: list[str] | None = None  # the web addresses of the DataNodes with the file's first block

    def answered(url: str, what: str) -> str | None:
        """None when `url` answers 200, else what failed ("HDFS at ... <what> (why)")."""
        try:
            response = session.get(url, timeout=health.PROBE_TIMEOUT_S)
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
                blocks = located_blocks(profile, read_path, 1, session, health.PROBE_TIMEOUT_S)
                datanodes = _datanode_web_urls(blocks, profile.webhdfs_url)
            except requests.RequestException as err:  # said as the probe's other requests say it
                code = getattr(err.response, "status_code", None)
                why = f"HTTP {code}" if code else root_cause(err, 120)
                return f"HDFS at {profile.webhdfs_url} cannot say which DataNodes hold {read_path} ({why})"
            except (ValueError, KeyError, TypeError) as err:
                return f"HDFS at {profile.webhdfs_url} gave unexpected block locations of {read_path} ({err!r})"
        problems = []
        for url in datanodes:
            problem = answered(f"{url}/jmx?qry={DATANODE_INFO}",
                               f"cannot read {read_path}: its DataNode at {url} does not answer")
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
