"""Cache tiers in front of S3, compared as storages: the same S3 objects, read through a cache.

- `trino-cache`: Trino's file-system cache (Alluxio's caching library inside Trino, pages on local disk), as a
  catalog of its own over the shared metastore: the S3 tables read through it. Only Trino reads through it.
- `alluxio`: an Alluxio cluster whose namespace mounts the S3 bucket; tables over alluxio:// locations, read by
  Spark, Hive and Trino alike (perfkit.tiers.alluxio_client talks to it).

Each tier can be emptied (before a cold read, and only then) and reports its own counters: bytes served from the
cache and bytes fetched from S3, so a "hot" read that did not hit the cache shows.
"""
from __future__ import annotations

from perfkit.tiers.alluxio import Alluxio
from perfkit.tiers.base import Counters, Tier, is_tier, tier
from perfkit.tiers.trino_cache import TrinoCache

__all__ = ["Alluxio", "Counters", "Tier", "TrinoCache", "is_tier", "tier"]
