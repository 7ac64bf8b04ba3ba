"""The storages by name: imported lazily, extended with `register(name, "module:Class")` or a class."""
from __future__ import annotations

from urllib.parse import urlparse

from perfkit.config import Profile
from perfkit.errors import PerfkitError
from perfkit.registry import Registry

REGISTRY = Registry("storage", {
    "hdfs": "perfkit.storages.hdfs:Hdfs",
    "s3": "perfkit.storages.s3:S3",
    "trino-cache": "perfkit.tiers.trino_cache:TrinoCache",  # cache tiers in front of S3: they read the S3 copy
    "alluxio": "perfkit.tiers.alluxio:Alluxio",
    "nfs": "perfkit.storages.mounted:Nfs",  # mounts: the read experiment reads their files, engines do not
    "fuse-hdfs": "perfkit.storages.mounted:FuseHdfs",
})
register = REGISTRY.register


def storage_class(name: str) -> type:
    return REGISTRY.load(name)


def get_storage(name: str, profile: Profile):
    return storage_class(name)(profile)


def placed() -> list[str]:
    """The storages that hold the data engines query (datasets are placed on them), in registry order."""
    return [name for name in REGISTRY if storage_class(name).backing is None and storage_class(name).queried]


def tiers() -> list[str]:
    """The storages that engines query through a cache in front of another storage's copy."""
    return [name for name in REGISTRY if storage_class(name).backing is not None and storage_class(name).queried]


def reads_remote(name: str) -> bool:
    """Whether reads of the storage of this name cross the network to a remote store (S3); False for a name no
    storage has."""
    return name in REGISTRY and storage_class(name).reads_remote


def client_of(name: str | None) -> str | None:
    """The engines' client that reads the storage of this name directly (perfkit.storages.base.S3_CLIENT,
    HDFS_CLIENT); None for no storage, or one read through another client (a tier's own)."""
    return storage_class(name).engine_client if name in REGISTRY else None


def hadoop_scheme_of(name: str | None) -> str | None:
    """The Hadoop file system's scheme Spark and Hive read the storage of this name through where it is a client of
    its own (alluxio), whose statistics count the bytes they read; None for the rest."""
    return getattr(storage_class(name), "hadoop_scheme", None) if name in REGISTRY else None


def break_even_pair(names) -> tuple[str, str] | None:
    """(the storage read remotely, the one its data can be copied into) among `names`, by their capabilities (the
    first of each, in the order given): what a break-even compares; None when `names` lack either."""
    known = [name for name in names if name in REGISTRY]
    remote = next((n for n in known if storage_class(n).reads_remote and storage_class(n).backing is None), None)
    target = next((n for n in known if storage_class(n).copy_target), None)
    return (remote, target) if remote and target else None


def backing_of(name: str) -> str | None:
    """The storage whose copy a run on `name` reads: a tier's backing storage, else `name` itself; None for a name
    that is no storage (a record of an engine that could not start, say)."""
    return (storage_class(name).backing or name) if name in REGISTRY else None


def colour_of(name: str) -> str | None:
    """A storage's colour in plots; None for a storage without one and for a name that is no storage."""
    return storage_class(name).colour if name in REGISTRY else None


def storage_probes(profile: Profile, storages: list[str], read_files: dict[str, str] | None = None) -> dict:
    """A health probe (perfkit.health) per storage, each its class's; `read_files` (storage -> a path of it the run
    reads) lets a storage's probe read through its data servers (HDFS's, through a DataNode)."""
    read_files = read_files or {}
    return {name: get_storage(name, profile).health_probe(read_files.get(name) or None)
            for name in storages if name in REGISTRY}


def storage_of_url(url: str, where: str):
    """The Location of a URL, by its scheme (hdfs://, s3:// s3a:// s3n://, or a registered storage's own)."""
    parts = urlparse(str(url).strip())
    for name in placed():
        if parts.scheme in storage_class(name).schemes:
            loc = storage_class(name).parse(parts)
            if loc is not None:
                return loc
            break
    forms = "hdfs:///path/to/folder or s3://bucket/prefix/"
    raise PerfkitError(f"{where}: {url!r} is not a table location: give {forms} (a folder of ORC or Parquet files)")
