"""S3 (AWS, or any S3-compatible server at the profile's endpoint) through boto3; engines read s3a:// or s3://."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

from perfkit import storage as clients
from perfkit.storages.digest import UPLOAD_CONFIG, s3_etag
from perfkit.storages.base import Location, Storage, visible, visible_tree


class S3(Storage):
    name = "s3"
    schemes = ("s3", "s3a", "s3n")

    @cached_property
    def client(self):
        return clients.shared_s3_client(self.profile)

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
        clients.upload_to_s3(self.client, local, loc.bucket, f"{loc.path}/{local.name}",
                             UPLOAD_CONFIG)  # the part size the expected ETag assumes

    def write_text(self, loc: Location, name: str, text: str) -> None:
        self.client.put_object(Bucket=loc.bucket, Key=f"{loc.path}/{name}", Body=text.encode())

    def delete_tree(self, loc: Location) -> None:
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=loc.bucket, Prefix=loc.path + "/"):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                self.client.delete_objects(Bucket=loc.bucket, Delete={"Objects": keys, "Quiet": True})

    def check(self) -> None:
        clients.check_s3(self.profile)

    def snapshot(self, engine=None, storage: str | None = None) -> dict[str, float]:
        """The engine's throttled and retried S3 requests so far (Engine.s3_counters) of the S3 client a run on
        `storage` (this one, or a tier in front of it) uses; {} when the engine does not count them."""
        counters = engine.s3_counters(storage=storage or self.name) if engine is not None else None
        return dict(counters) if counters is not None else {}

    def health_probe(self, read_file: str | None = None):
        from perfkit.health import s3_probe

        return s3_probe(self.profile)
