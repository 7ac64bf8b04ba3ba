"""S3 (AWS, or any S3-compatible server at the profile's endpoint) through boto3; engines read s3a:// or s3://."""
from __future__ import annotations

import re
import threading
from functools import cached_property
from pathlib import Path

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ParamValidationError

from perfkit import health
from perfkit.config import Profile
from perfkit.errors import ServiceError, root_cause
from perfkit.storages.base import S3_CLIENT, Location, Storage, is_http_url, provider_fix, visible, visible_tree
from perfkit.storages.digest import UPLOAD_CONFIG, s3_etag
from perfkit.storages.s3_access_log import s3_server_counting
from perfkit.prices import GB

RETRIES = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5)
# S3's bucket naming rules; s3a:// URLs carry the bucket as a host name, so legacy names (capitals, _) fail there too
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_BUCKET_RULES = ("S3 bucket names are 3 to 63 lowercase letters, digits, dots and hyphens, start and end with a "
                 "letter or digit, and are not an IP address")
_REGION = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$")  # what botocore accepts


# what an S3 server answers when it asks for fewer requests: AWS's 503 SlowDown, and the codes of other stores
THROTTLING_CODES = {"SlowDown", "SlowDownRead", "SlowDownWrite", "Throttling", "ThrottlingException",
                    "RequestLimitExceeded", "TooManyRequests", "TooManyRequestsException", "503", "429"}
THROTTLING_STATUS = {503, 429}


class S3(Storage):
    name = "s3"
    schemes = ("s3", "s3a", "s3n")
    colour = "#ff7f0e"
    reads_remote = True
    engine_client = S3_CLIENT

    @classmethod
    def month_stored(cls, prices, bytes_, replication=3, volume_type="st1"):
        """One copy in the price table's storage class (S3 keeps its own redundancy in the price)."""
        return prices.texts["storage_class"], bytes_ / GB, bytes_ / GB * prices.figures["s3"]["storage_per_gb_month"]

    @classmethod
    def request_cost(cls, prices, counts):
        return prices.request_cost(counts)

    @cached_property
    def client(self):
        return shared_s3_client(self.profile)

    def folder(self, *parts: str) -> Location:
        return Location(self.name, self.profile.s3_key(*parts), self.profile.s3_bucket)

    @classmethod
    def parse(cls, parts) -> Location | None:
        return Location(cls.name, parts.path.strip("/"), parts.netloc) if parts.netloc else None

    def url(self, loc: Location) -> str:
        return f"{self.profile.s3_scheme}://{loc.bucket}/{loc.path}"

    def list_files(self, loc: Location) -> dict[str, int] | None:
        found, prefix, any_key = {}, loc.path + "/", False
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=loc.bucket, Prefix=prefix,
                                                                          Delimiter="/"):
            any_key = any_key or bool(page.get("Contents") or page.get("CommonPrefixes"))
            found.update({o["Key"][len(prefix):]: o["Size"] for o in page.get("Contents", [])})
        return visible(found) if any_key else None

    def list_tree(self, loc: Location) -> dict[str, int] | None:
        """Every key below the prefix, without a delimiter (1,000 a request); folder markers ("name/", what S3A's
        mkdir leaves) make the folder exist but are not files."""
        found, prefix, any_key = {}, loc.path + "/", False
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=loc.bucket, Prefix=prefix):
            contents = page.get("Contents", [])
            any_key = any_key or bool(contents)
            found.update({o["Key"][len(prefix):]: o["Size"] for o in contents if not o["Key"].endswith("/")})
        return visible_tree(found) if any_key else None

    def read_range(self, loc: Location, name: str, offset: int, length: int) -> bytes:
        rng = f"bytes={offset}-{offset + length - 1}"
        return self.client.get_object(Bucket=loc.bucket, Key=f"{loc.path}/{name}", Range=rng)["Body"].read()

    def read_text(self, loc: Location, name: str) -> str | None:
        try:
            return self.client.get_object(Bucket=loc.bucket, Key=f"{loc.path}/{name}")["Body"].read().decode()
        except Exception as err:
            if getattr(err, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise

    def checksum_matches(self, loc: Location, local: Path, digest) -> bool:
        # the ETag from HEAD: an MD5, or for a multipart upload the MD5 of the parts' MD5s (perfkit's part size)
        head = self.client.head_object(Bucket=loc.bucket, Key=f"{loc.path}/{local.name}")
        return head["ETag"].strip('"') == s3_etag(local, digest)

    def upload(self, loc: Location, local: Path) -> None:
        upload_to_s3(self.client, local, loc.bucket, f"{loc.path}/{local.name}",
                             UPLOAD_CONFIG)  # the part size the expected ETag assumes

    def write_text(self, loc: Location, name: str, text: str) -> None:
        self.client.put_object(Bucket=loc.bucket, Key=f"{loc.path}/{name}", Body=text.encode())

    def delete_tree(self, loc: Location) -> None:
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=loc.bucket, Prefix=loc.path + "/"):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                self.client.delete_objects(Bucket=loc.bucket, Delete={"Objects": keys, "Quiet": True})

    def check(self) -> None:
        check_s3(self.profile)

    def server_counting(self):
        return s3_server_counting(self.profile, self.name)

    def snapshot(self, engine=None, storage: str | None = None) -> dict[str, float]:
        """The engine's throttled and retried S3 requests so far (Engine.s3_counters) of the S3 client a run on
        `storage` (this one, or a tier in front of it) uses; {} when the engine does not count them."""
        counters = engine.s3_counters(storage=storage or self.name) if engine is not None else None
        return dict(counters) if counters is not None else {}

    def health_probe(self, read_file: str | None = None):
        return s3_probe(self.profile)


# the clients, the check and the probe ------------------------------------------------------------------------------
def throttling(err: ClientError) -> str | None:
    """'503 SlowDown' (the status and the server's code) when the answer says the server throttles, else None.

    A HEAD answer has no body: its code is the status alone ('503'); S3 answers 503 only for SlowDown (and a
    rare internal overload that asks for the same thing: fewer requests)."""
    response = getattr(err, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    message = str(response.get("Error", {}).get("Message", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code in THROTTLING_CODES or status in THROTTLING_STATUS or "reduce your request rate" in message.lower():
        shown = [str(status)] if status else []
        return " ".join(shown + ([code] if code and code != str(status) else [])) or code
    return None


def s3_client(profile: Profile, config: Config | None = None):
    """boto3 S3 client: the keys the profile's provider gives (the lab's), else the standard AWS chain."""
    kwargs = {"region_name": profile.s3_region, "config": RETRIES.merge(config) if config else RETRIES}
    if profile.s3_endpoint:
        kwargs["endpoint_url"] = profile.s3_endpoint
    creds = profile.provider.s3_credentials()
    if not creds:
        return boto3.session.Session().client("s3", **kwargs)  # a fresh session: the credential chain as it is now
    kwargs.update(aws_access_key_id=creds["access_key"], aws_secret_access_key=creds["secret_key"])
    # keys given: no chain to follow, so one session serves every client, and its loaded service model with it
    # (a client from a fresh session cost 0.13-0.15 s, most of it loading that model; s3_distance made 70)
    with _KEYED_SESSION_LOCK:  # a boto3 session is not safe to share between threads while it makes clients
        return _KEYED_SESSION.client("s3", **kwargs)


_KEYED_SESSION = boto3.session.Session()
_KEYED_SESSION_LOCK = threading.Lock()


_SHARED_S3: dict[tuple, object] = {}
_SHARED_S3_LOCK = threading.Lock()


def shared_s3_client(profile: Profile):
    """One S3 client per endpoint, region and keys, for many small requests (listings, footers, markers): making a
    client costs 0.1-0.3 s, and boto3's clients are safe to share between threads."""
    creds = profile.provider.s3_credentials()
    key = (profile.s3_endpoint, profile.s3_region, tuple(sorted(creds.items())) if creds else None)
    with _SHARED_S3_LOCK:
        if key not in _SHARED_S3:
            _SHARED_S3[key] = s3_client(profile, Config(max_pool_connections=32))
        return _SHARED_S3[key]


def _bucket_name_ok(name: str) -> bool:
    return (bool(_BUCKET.match(name)) and ".." not in name and not re.fullmatch(r"[\d.]+", name)
            and not name.startswith(("xn--", "sthree-")) and not name.endswith(("-s3alias", "--ol-s3")))


def check_s3(profile: Profile) -> None:
    where = f"S3 bucket {profile.s3_bucket!r}" + (f" at {profile.s3_endpoint}" if profile.s3_endpoint else "")
    # what boto3 would refuse with a traceback or a misleading error, named here before any request
    if profile.s3_endpoint is not None and not is_http_url(profile.s3_endpoint):
        raise ServiceError(where, f"invalid endpoint URL {profile.s3_endpoint!r}", "set the profile's s3_endpoint "
                           "to an http(s):// address, e.g. http://127.0.0.1:7070 (or null for AWS itself)")
    if not profile.s3_region:
        raise ServiceError(where, "the region is empty", "set the profile's s3_region, e.g. us-east-1")
    if not _REGION.match(profile.s3_region):
        raise ServiceError(where, f"invalid region {profile.s3_region!r}",
                           "set the profile's s3_region to a region name, e.g. us-east-1")
    if not _bucket_name_ok(profile.s3_bucket):
        raise ServiceError(where, "the bucket name is empty" if not profile.s3_bucket else
                           f"invalid bucket name ({_BUCKET_RULES})",
                           "set the profile's s3_bucket (or bucket= / --bucket) to a valid bucket name")
    try:
        s3_client(profile).head_bucket(Bucket=profile.s3_bucket)
    except NoCredentialsError:
        raise ServiceError(where, "no AWS credentials found", "configure the standard AWS chain (aws configure, "
                           "environment or instance profile)") from None
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "")
        if (impostor := profile.provider.s3_impostor(profile)) is not None:
            raise ServiceError(where, *impostor) from None
        if code in ("404", "NoSuchBucket"):
            raise ServiceError(where, "the bucket does not exist",
                               "create it, or pass the name of an existing bucket "
                               "(profile setting s3_bucket / bucket=)") from None
        if throttled := throttling(err):  # the server answers, and asks for fewer requests: not a matter of keys
            raise ServiceError(where, f"throttled ({throttled}): the S3 server asks for fewer requests",
                               "lower the request rate (fewer engines/threads at once) or wait, and check the "
                               "endpoint's request limits") from None
        raise ServiceError(where, f"refused ({code})", "check the credentials and the bucket policy") from None
    except ParamValidationError as err:  # a setting the checks above let through
        raise ServiceError(where, f"invalid request ({' '.join(str(err).split())})",
                           "check the profile's s3_bucket and s3_region") from None
    except BotoCoreError as err:
        raise ServiceError(where, f"not reachable ({type(err).__name__})",
                           provider_fix(profile, "s3_endpoint", "s3")) from None
    # S3 answers at the endpoint: do the engines the provider configured send their requests there too?
    if (elsewhere := profile.provider.s3_clients_elsewhere(profile)) is not None:
        raise ServiceError(where, *elsewhere)


def s3_listing(client, bucket: str, prefix: str) -> dict[str, int]:
    """{object name below the prefix: size}, through the paginator (any number of objects). Empty folder markers
    ("name/", 0 bytes: what S3A's mkdir and Alluxio leave) are folders, not files: left out."""
    prefix = prefix.rstrip("/") + "/"
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            if obj["Key"].endswith("/") and obj["Size"] == 0:
                continue
            found[obj["Key"][len(prefix):]] = obj["Size"]
    return found


def upload_to_s3(client, local: Path, bucket: str, key: str, config=None) -> None:
    client.upload_file(str(local), bucket, key, Config=config)  # s3transfer: multipart for large files


def s3_probe(profile: Profile) -> health.Probe:
    """One HEAD of the bucket. A throttled answer (503 SlowDown, 429) is a server that answers and asks for fewer
    requests: healthy, since the engines count their throttled requests and flag the run (perfkit.storages.s3)."""
    client = s3_client(profile, health.PROBE_CONFIG)
    where = f"S3 bucket {profile.s3_bucket!r}" + (f" at {profile.s3_endpoint}" if profile.s3_endpoint else "")

    def probe() -> str | None:
        try:
            client.head_bucket(Bucket=profile.s3_bucket)
        except ClientError as err:
            return None if throttling(err) else f"{where} not healthy ({root_cause(err, 120)})"
        except BotoCoreError as err:
            return f"{where} not healthy ({root_cause(err, 120)})"
        return None

    return probe
