"""Trino's own count of the S3 calls of a catalog's native file system: io.trino.filesystem.s3.S3FileSystemStats.

A one-node Trino is read over HTTP, the counters by name from its OpenMetrics resource
(`/metrics?name[]=JMX_<domain>_NAME_<catalog>_TYPE_<type>_ATTRIBUTE_<attribute>`, one getAttribute each). The bean's
own JMX resource renders all its ~840 attributes, percentiles included: 193 KB and 8-9 ms a read on the lab, against
3-4 ms for the 20 counters perfkit needs, and a run reads them twice. A Trino whose /metrics does not give them is
read through the bean. A cluster's counters sit on its workers: the engine sums them with a query of its jmx catalog.
"""
from __future__ import annotations

import json
import re
import urllib.parse

import requests

from perfkit.kept_alive_http import KeptAliveHttp

BEAN = "io.trino.filesystem.s3:type=S3FileSystemStats,name={catalog}"
# the bean's attributes per S3 API (each call, and its retries apart) -> perfkit's counters (perfkit.accounting).
# Trino 476 shows no UploadPart attribute (its accessor is no JMX getter): a multipart upload's parts are not counted
API_COUNTERS = {"HeadObject": "s3_head", "GetObject": "s3_get", "ListObjectsV2": "s3_list", "PutObject": "s3_put",
                "CreateMultipartUpload": "s3_put", "CompleteMultipartUpload": "s3_put",
                "DeleteObject": "s3_delete", "DeleteObjects": "s3_delete", "AbortMultipartUpload": "s3_delete"}
API_CALLS = {f"{api}.{kind}.TotalCount": counter
             for api, counter in API_COUNTERS.items() for kind in ("Calls", "Retries")}
# over every API: ThrottlingExceptions counts throttled attempts
FAULT_COUNTERS = {"Total.ThrottlingExceptions.TotalCount": "s3_throttled", "Total.Retries.TotalCount": "s3_retried"}
ATTRIBUTES = [*API_CALLS, *FAULT_COUNTERS]
WANTED = {attribute.lower() for attribute in ATTRIBUTES}  # as the bean's resource and the jmx catalog name them
TIMEOUT_S = 10
# an exposition line: the metric's name, its labels if any, its value
EXPOSITION = re.compile(r"^([A-Za-z0-9_:]+)(?:\{[^}]*\})?\s+(\S+)", re.MULTILINE)


def metric_name(catalog: str, attribute: str) -> str:
    """The name under which the OpenMetrics resource gives one of the bean's attributes (without the JMX_ that asks
    for it). The resource finds the bean again from the name: dots in the domain and the attribute are underscores."""
    return f"io_trino_filesystem_s3_NAME_{catalog}_TYPE_S3FileSystemStats_ATTRIBUTE_{attribute.replace('.', '_')}"


def counters_from_metrics(text: str, catalogs: list[str]) -> dict[str, float]:
    """The counters of `catalogs` summed, by lower-case attribute name, from the resource's answer; LookupError when
    it gives none of a catalog's (no such bean: a catalog without the native S3 file system, or a Trino whose
    resource does not look JMX names up)."""
    values = {name: float(value) for name, value in EXPOSITION.findall(text)}
    found: dict[str, float] = {}
    for catalog in catalogs:
        names = {attribute: metric_name(catalog, attribute) for attribute in ATTRIBUTES}
        mine = {attribute: values[name] for attribute, name in names.items() if name in values}
        if not mine:
            raise LookupError(f"Trino's /metrics gives no S3FileSystemStats of catalog {catalog}")
        for attribute, value in mine.items():
            found[attribute.lower()] = found.get(attribute.lower(), 0) + value
    return found


def counters_from_bean(attributes: list[dict]) -> dict[str, float]:
    """The counters, by lower-case attribute name, from the bean's JMX resource (every attribute, name and value)."""
    return {a["name"].lower(): a["value"] for a in attributes
            if a["name"].lower() in WANTED and isinstance(a.get("value"), (int, float))}


class S3StatsOverHttp:
    """The counters of a one-node Trino's catalogs, summed, from its coordinator at `base_url`."""

    def __init__(self, base_url: str, user: str):
        self.base_url, self.session = base_url.rstrip("/"), KeptAliveHttp({"X-Trino-User": user})
        self.metrics_answer = True  # until /metrics answered without them: then the bean, from then on

    def read(self, catalogs: list[str]) -> dict[str, float]:
        lacks_them = False  # whether /metrics answered, without the counters (not a dropped connection, a 503)
        if self.metrics_answer:
            try:
                return self._from_metrics(catalogs)
            except (OSError, LookupError, ValueError) as err:
                # no /metrics, no JMX lookup there, or no such bean (the bean's resource says which); or a failure
                # that says nothing about /metrics, which is asked again at the next read
                lacks_them = not _transient(err)
        found: dict[str, float] = {}
        for catalog in catalogs:
            for name, value in self._from_bean(catalog).items():
                found[name] = found.get(name, 0) + value
        if lacks_them:
            self.metrics_answer = False  # the bean answered where /metrics could not
        return found

    def _from_metrics(self, catalogs: list[str]) -> dict[str, float]:
        query = urllib.parse.urlencode([("name[]", f"JMX_{metric_name(c, a)}") for c in catalogs for a in ATTRIBUTES])
        return counters_from_metrics(self._get(f"/metrics?{query}").decode(), catalogs)

    def _from_bean(self, catalog: str) -> dict[str, float]:
        bean = urllib.parse.quote(BEAN.format(catalog=catalog), safe=":,=")
        return counters_from_bean(json.loads(self._get(f"/v1/jmx/mbean/{bean}"))["attributes"])

    def _get(self, path: str) -> bytes:
        answer = self.session.get(self.base_url + path, timeout=TIMEOUT_S)
        answer.raise_for_status()
        return answer.content


def _transient(err: Exception) -> bool:
    """A failure of the connection or of the server (5xx), not an answer that /metrics lacks the counters."""
    if isinstance(err, requests.HTTPError):
        return getattr(err.response, "status_code", 500) >= 500
    return isinstance(err, (requests.ConnectionError, requests.Timeout))
