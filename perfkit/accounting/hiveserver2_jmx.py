"""Hive's own count of what it asked of S3: the S3A statistics of HiveServer2's JVM, from its web UI's JMX servlet.

S3A publishes each file system's statistics as a metrics source, Hadoop:service=s3a-file-system,name=S3AMetrics<N>-
<bucket> (its tag.bucket names the bucket), cumulative while the file system lives; HiveServer2 keeps its file system
of a bucket (one per user; the lab runs without doAs). They are the whole query's only where its tasks run in that JVM
(MapReduce or Tez in local mode, as in the lab); on YARN they hold the planning's listings alone. On the lab they
matched the S3 server's log request for request (GET, HEAD, LIST) over the taxi suite."""
from __future__ import annotations

import requests

from perfkit.jmx_freshness import FreshReads

S3A_SOURCES = "Hadoop:service=s3a-file-system,name=S3AMetrics*"
TIMEOUT_S = 5.0


class HiveServer2S3A:
    def __init__(self, webui_url: str, bucket: str, period_s: float = 10.0, session=None):
        self.url, self.bucket = f"{webui_url.rstrip('/')}/jmx", bucket
        self.session = session or requests.Session()
        self._fresh = FreshReads(period_s)

    def read(self) -> dict[str, float]:
        """S3A's statistics by name, summed over the JVM's file systems of the bucket ({} before the first)."""
        return self._fresh(self._read)

    def _read(self) -> dict[str, float]:
        try:
            response = self.session.get(self.url, params={"qry": S3A_SOURCES}, timeout=TIMEOUT_S)
            response.raise_for_status()
            beans = response.json().get("beans", [])
        except (requests.RequestException, ValueError) as err:
            raise LookupError(f"HiveServer2's JMX at {self.url} not read ({type(err).__name__}: {err}): check "
                              "hive_webui_port in the profile and that HiveServer2's web UI is on") from None
        found: dict[str, float] = {}
        for bean in beans:
            if bean.get("tag.bucket") != self.bucket:
                continue
            for name, value in bean.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    found[name] = found.get(name, 0) + value
        return found
