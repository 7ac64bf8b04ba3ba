"""Profiles: where the compared storages and engines live (lab, emr, or a user's YAML file).

A notebook takes one `profile` parameter; nothing else changes between the lab and a cluster.
"""
from __future__ import annotations

import difflib
import importlib
import re
import socket
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import yaml

from perfkit.errors import PerfkitError
from perfkit.providers import Provider

BUILTIN = ("lab", "lab-cluster", "emr")
# profiles built by a package of their own, by name (as fsspec's known_implementations): module:function
PROVIDERS = {"lab": "perfkit.lab.provider:lab_profile", "lab-cluster": "perfkit.lab.provider:lab_cluster_profile"}
# a name that says its value is a credential (a report parameter, fs.s3a.secret.key, ...): never shown
SECRET_NAME = re.compile(r"secret|passw|token|credential|private|api[_.]?key|access[_.]?key|session[_.]?key", re.I)
HIDDEN = "***"
URL_SCHEMES = {"webhdfs_url": r"^https?://[^/\s]+", "s3_endpoint": r"^https?://[^/\s]+", "hdfs_uri": r"^hdfs://\S*$",
               "nfs_url": r"^(nfs://\S+)?$", "metastore_uri": r"^(thrift://[^/\s]+)?$"}
URL_EXAMPLES = {"webhdfs_url": "an http(s):// address, e.g. http://namenode:9870",
                "s3_endpoint": "an http(s):// address, e.g. http://127.0.0.1:7070 (or null for AWS itself)",
                "hdfs_uri": "an hdfs:// URI, e.g. hdfs://namenode:8020", "nfs_url": "an nfs:// URL, e.g. nfs://server/export",
                "metastore_uri": "a thrift:// address, e.g. thrift://master:9083"}


@dataclass(frozen=True)
class Profile:
    name: str
    hdfs_uri: str  # filesystem URI engines use, e.g. hdfs://127.0.0.1:9000
    webhdfs_url: str  # perfkit itself talks to HDFS over WebHDFS (no native client needed)
    hdfs_user: str
    s3_bucket: str
    s3_scheme: str  # s3a for Hadoop's S3A, s3 for EMRFS
    s3_endpoint: str | None  # None means AWS itself
    s3_region: str
    prefix: str  # everything perfkit writes lives under this prefix, on both storages
    spark_master: str
    hive_host: str  # Hive's HiveServer2
    hive_port: int
    hive_user: str = "perfkit"
    hive_webui_port: int = 10002  # HiveServer2's web UI (Hive's default port): its /jmx holds the S3A statistics
    spark_thrift_host: str = ""  # the Spark Thrift Server (Spark SQL behind a HiveServer2 endpoint)
    spark_thrift_port: int = 10001
    trino_host: str = ""
    trino_port: int = 8889
    trino_catalog: str = "hive"  # the Hive-connector catalog over the metastore the other engines share
    trino_user: str = "perfkit"
    trino_cache_catalog: str = ""  # a Trino catalog over the same metastore with the file-system cache on (trino-cache)
    alluxio_master: str = ""  # host:port of an Alluxio master whose namespace mounts the S3 bucket (alluxio tier)
    alluxio_master_web: str = ""  # host:port of its web server (REST API, workers' list); default: master's host:19999
    alluxio_s3_mount: str = ""  # the Alluxio folder where s3_bucket is mounted, e.g. /s3/my-bucket
    alluxio_s3_endpoint: str = ""  # Alluxio's S3 API (its proxy), e.g. http://master:39999/api/v1/s3
    alluxio_rest: str = ""  # its proxy's v1 REST API, e.g. http://master:39999/api/v1: frees the tier without a shell
    metastore_uri: str = ""  # the Hive metastore perfkit's Spark sessions use; empty: the cluster's own configuration
    spark_conf: dict = field(default_factory=dict)
    nfs_mount: str = ""  # where the NFS export is mounted (posix reads); none in the lab: no kernel NFS client
    nfs_url: str = ""  # the export for libnfs, nfs://server/export[?options]
    fuse_hdfs_mount: str = ""  # where HDFS is mounted through FUSE
    # S3's own count of an experiment's requests on AWS (CloudWatch request metrics on the prefix): perfkit makes a
    # filter for the run and removes it after (true), or uses the bucket's filter of this id (never removed)
    s3_request_metrics: bool = False
    s3_request_metrics_filter: str = ""
    # how often the cluster's Hadoop daemons (NameNode, DataNodes, HiveServer2) refresh what their JMX shows: their
    # metrics period (hadoop-metrics2.properties `*.period`, or `*.periodMillis` / 1000; Hadoop's default is 10 s)
    hadoop_metrics_period_s: float = 10.0
    # where the services run (a cluster, or the embedded lab): tools, credentials, fixes; never shown in a report
    provider: Provider = field(default_factory=Provider, repr=False, compare=False)

    def nfs_file_url(self, path: str) -> str:
        """libnfs URL of a path inside the export: the export's options stay at the end."""
        base, _, options = self.nfs_url.partition("?")
        url = base.rstrip("/") + "/" + path.lstrip("/")
        return f"{url}?{options}" if options else url

    def hdfs_path(self, *parts: str) -> str:
        return "/" + "/".join(p.strip("/") for p in (self.prefix, *parts) if p)

    def hdfs_url(self, *parts: str) -> str:
        return self.hdfs_url_of(self.hdfs_path(*parts))

    def hdfs_url_of(self, path: str) -> str:
        """The URL engines and Hadoop tools use for an absolute HDFS path."""
        base = self.hdfs_uri if self.hdfs_uri.endswith("://") else self.hdfs_uri.rstrip("/")  # hdfs:///path
        return base + "/" + path.lstrip("/")

    def s3_key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p)

    def s3_url(self, *parts: str) -> str:
        return f"{self.s3_scheme}://{self.s3_bucket}/{self.s3_key(*parts)}"

    def describe(self) -> dict:
        """What a report may show: addresses and settings, never credentials (spark_conf may hold S3A keys)."""
        shown = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "provider"}
        shown["spark_conf"] = {k: HIDDEN if SECRET_NAME.search(k) else v for k, v in self.spark_conf.items()}
        shown["provider"] = self.provider.name
        return shown


def lab_profile(name: str = "lab") -> Profile:
    """The embedded lab's profile (`lab`, or `lab-cluster`: its cluster shape), built by the lab package (looked up
    by name: the lab builds on this module)."""
    module, _, function = PROVIDERS[name].partition(":")
    return getattr(importlib.import_module(module), function)()


def provider_secrets() -> list[str]:
    """The secrets the providers on this machine hold (the lab's S3 key): a report redacts them, whichever profile
    its notebook ran with."""
    found = []
    for name in PROVIDERS:
        try:
            found += load_profile(name).provider.secrets()
        except PerfkitError:  # e.g. a lab port variable that is not a number: that lab has no keys to hide
            pass
    return found


def emr_profile(bucket: str = "", master: str = "", region: str = "us-east-1") -> Profile:
    if not bucket:
        raise PerfkitError("profile 'emr' needs an S3 bucket: pass bucket=NAME (the notebook parameter `bucket`)")
    master = master or socket.getfqdn()  # notebooks on EMR run on the master node
    return Profile(
        name="emr",
        hdfs_uri="hdfs://",
        webhdfs_url=f"http://{master}:9870",
        hdfs_user="hadoop",
        s3_bucket=bucket.removeprefix("s3://").strip("/"),
        s3_scheme="s3",
        s3_endpoint=None,
        s3_region=region,
        prefix="perfkit",
        spark_master="yarn",
        hive_host=master,
        hive_port=10000,
        hive_user="hadoop",
        spark_thrift_host=master,
        spark_thrift_port=10001,
        trino_host=master,
        trino_port=8889,  # EMR's Trino listens on 8889, not 8080
        trino_user="hadoop",
        # metastore_uri stays empty: Spark and Trino on EMR use the cluster's own (a metastore or AWS Glue)
    )


def load_profile(name: str = "lab", **options) -> Profile:
    """`lab`, `emr` (options: bucket, master, region) or the path of a YAML file.

    A YAML profile names a `base` (lab or emr) and overrides any Profile field, e.g.
        base: emr
        bucket: my-bucket
        spark_master: yarn
    """
    network = options.pop("network", None)
    options = {k: v for k, v in options.items() if v not in (None, "")}
    if network not in (None, ""):
        return _behind_network(name, network, options)
    if name in BUILTIN:
        return _builtin(name, options, f"profile {name!r}")
    path = Path(name)
    if path.suffix in (".yml", ".yaml"):
        data = _read_yaml(path)
        base = data.pop("base", "lab")
        if base not in BUILTIN:
            raise PerfkitError(f"profile file {path}: base {base!r} is unknown; use one of {', '.join(BUILTIN)}")
        return replace(_builtin(base, {**data, **options}, f"profile file {path}"), name=path.stem)
    raise PerfkitError(f"unknown profile {name!r}: use 'lab', 'lab-cluster', 'emr' or the path of a YAML profile file")


def _behind_network(name: str, network, options: dict) -> Profile:
    """The profile once its provider has put S3 behind `network` (a name of perfkit.network.PROFILES or values): the
    lab's S3 clients, and so the profile's s3_endpoint, change with it."""
    from perfkit.network import network_profile

    wanted = network_profile(network)
    before = load_profile(name, **options)
    if "s3_endpoint" in options or (Path(name).suffix in (".yml", ".yaml") and "s3_endpoint" in _read_yaml(Path(name))):
        raise PerfkitError(f"profile {name!r} sets s3_endpoint and network={wanted.name!r} sets the lab's S3 path too: "
                           "keep one (remove s3_endpoint to emulate a network)")
    before.provider.use_network(wanted)
    return load_profile(name, **options)


EMR_OPTIONS = ("bucket", "master", "region")
_TYPES = {"hive_port": int, "hive_webui_port": int, "spark_thrift_port": int, "trino_port": int, "spark_conf": dict,
          "s3_request_metrics": bool, "hadoop_metrics_period_s": float}  # every other setting is text
_KIND_NAMES = {bool: "true or false", int: "a whole number", float: "a number of seconds above 0",
               dict: "a mapping of `key: value` lines", str: "text"}


def _builtin(base: str, options: dict, where: str) -> Profile:
    """The base profile with `options` over it; `where` names the source in messages (a YAML file, or the profile)."""
    own = EMR_OPTIONS if base == "emr" else ()
    if base in PROVIDERS and "bucket" in options:  # --bucket / bucket= given with the lab, whose bucket is its own
        raise PerfkitError(f"{where}: a bucket is for profile emr; the lab uses its own bucket "
                           "(to change it, set s3_bucket in a YAML profile with base: lab)")
    _check_settings(options, own, where)
    _check_filter_id(options, where)
    if base in PROVIDERS:
        _check_request_metrics(options, where, "the lab's S3 server counts every run's requests itself (its "
                                               "access log)")
        return replace(lab_profile(base), **options)
    if "bucket" not in options and where.startswith("profile file"):  # the fix is in the file, not a parameter
        raise PerfkitError(f"{where} (base: emr) needs an S3 bucket: add a line `bucket: NAME` to it")
    if options.get("s3_endpoint"):
        _check_request_metrics(options, where, f"CloudWatch counts AWS S3's requests, not those of the S3 at "
                                               f"{options['s3_endpoint']}")
    return replace(emr_profile(**{k: options.pop(k) for k in own if k in options}), **options)


FILTER_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # S3's rule for a metrics configuration's id


def _check_request_metrics(options: dict, where: str, why_not: str) -> None:
    """CloudWatch's S3 request metrics count AWS S3 only: asking for them elsewhere is named before anything runs."""
    asked = [k for k in ("s3_request_metrics", "s3_request_metrics_filter") if options.get(k)]
    if asked:
        raise PerfkitError(f"{where}: {asked[0]} is for a profile on AWS S3, and {why_not}. Fix: remove it")


def _check_filter_id(options: dict, where: str) -> None:
    value = options.get("s3_request_metrics_filter")
    if value and not FILTER_ID.match(value):
        raise PerfkitError(f"{where}: s3_request_metrics_filter {value!r} is not a metrics filter id (up to 64 "
                           "letters, digits, '.', '-' or '_'): give the id of one of the bucket's filters")


def _read_yaml(path: Path) -> dict:
    """The settings of a YAML profile file; every way it can be unusable is one message naming the file."""
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise PerfkitError(f"profile file {path} does not exist: give the path of a YAML profile, "
                           "or 'lab' or 'emr'") from None
    except (OSError, UnicodeDecodeError) as err:
        raise PerfkitError(f"profile file {path} cannot be read ({err}): give a readable YAML text file") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise PerfkitError(f"profile file {path}{at} is not valid YAML ({problem}): fix the syntax there "
                           "(one `setting: value` per line, starting with `base: lab` or `base: emr`)") from None
    if data is None:  # an empty file would silently run as the lab
        raise PerfkitError(f"profile file {path} is empty: write at least `base: lab` or `base: emr`, "
                           "then the settings to override")
    if not isinstance(data, dict):
        raise PerfkitError(f"profile file {path} must hold a mapping of settings (base: lab|emr, then overrides)")
    return data


def _check_settings(options: dict, extra: tuple[str, ...], where: str) -> None:
    """Unknown names get the closest known one; values get their type checked before anything runs."""
    known = sorted((set(Profile.__dataclass_fields__) - {"provider"}) | set(extra))
    for key in sorted(options, key=str):
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise PerfkitError(f"{where} has no setting {key!r}: {hint}known settings are {', '.join(known)}")
        value, kind = options[key], _TYPES.get(key, str)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):  # YAML's `10` is an int
            value = options[key] = float(value)
        # bool is an int to Python, but `hive_port: true` is a mistake; s3_endpoint may be null (AWS itself)
        if (not isinstance(value, kind) or (kind is int and isinstance(value, bool))) and not (
                key == "s3_endpoint" and value is None):
            raise PerfkitError(f"{where}: setting {key!r} must be {_KIND_NAMES[kind]}, not {value!r}")
        if kind is float and not 0 < value < float("inf"):
            raise PerfkitError(f"{where}: setting {key!r} must be {_KIND_NAMES[kind]}, not {value!r}")
        if key.endswith("_port") and not 0 < value < 65536:
            raise PerfkitError(f"{where}: setting {key!r} = {value} is not a port: give a number from 1 to 65535")
        scheme = URL_SCHEMES.get(key)
        if scheme and value is not None and not re.match(scheme, value):
            raise PerfkitError(f"{where}: setting {key!r} = {value!r} is not {URL_EXAMPLES[key]}")

