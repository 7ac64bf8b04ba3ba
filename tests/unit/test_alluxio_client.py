"""AlluxioClient's counters on a cluster of two workers: a master and its workers served over HTTP on loopback,
answering what Alluxio 2.9's REST API and /metrics/json/ answer, so the client's own HTTP code runs."""
import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perfkit.tiers.alluxio_client import AlluxioClient
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.tiers import Alluxio


def _serve(pages: dict[str, dict]):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            page = pages.get(self.path)
            body = json.dumps(page).encode()
            self.send_response(200 if page is not None else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _worker(cache: int, s3: int, active: int, queued: int) -> dict:
    return {"counters": {"Worker.BytesReadCache": {"count": cache},
                         "Worker.BytesReadPerUfs.UFS:s3.bucket": {"count": s3},
                         "Worker.BlocksAccessed": {"count": cache // 10}, "Worker.BytesReadRemote": {"count": cache}},
            "gauges": {"Worker.CacheManagerThreadActiveCount": {"value": active},
                       "Worker.CacheManagerThreadQueueWaitingTaskCount": {"value": queued},
                       "Worker.Healthy": {"value": True}}}


@pytest.fixture
def cluster():
    pages = [{"/metrics/json/": _worker(100, 7, 1, 2)}, {"/metrics/json/": _worker(50, 3, 0, 4)}]
    workers = [_serve(page) for page in pages]
    info = {"version": "2.9.6", "capacity": {"used": 30, "total": 2000},
            "workers": [{"address": {"host": "127.0.0.1", "webPort": w.server_port, "rpcPort": 29999}}
                        for w in workers]}
    # the master's RPC timers, as Alluxio 2.9.6 names them: a client's (with its user, or not yet authenticated), a
    # worker's heartbeat, and a call the master makes to the under-filesystem (not a client's)
    timers = {"Master.GetStatus.User:root": {"count": 9}, "Master.getConfiguration": {"count": 1},
              "Master.getConfiguration.User:root": {"count": 8}, "Master.GetWorkerInfoList.User:root": {"count": 8},
              "Master.blockHeartbeat.User:root": {"count": 40}, "Master.ListStatus.UFS:s3:%2F%2Fb%2F": {"count": 3},
              "Master.TotalRpcs": {"count": 99}}
    master = _serve({"/api/v1/master/info?QUERY_RAW_CONFIGURATION=false": info, "/metrics/json/": {"timers": timers}})
    profile = replace(load_profile("emr", bucket="b"), alluxio_master="127.0.0.1:19998", alluxio_s3_mount="/b",
                      alluxio_master_web=f"127.0.0.1:{master.server_port}")
    yield profile, workers, pages
    for server in (master, *workers):
        server.shutdown()


def test_counters_and_cache_requests_are_summed_over_every_worker_the_master_lists(cluster):
    profile, _, _ = cluster
    client = AlluxioClient(profile)
    assert client.worker_counters() == (150, 10)
    assert client.caching_tasks() == 1 + 2 + 0 + 4
    assert client.store() == (30, 2000)
    assert client.version() == "2.9.6"
    assert Alluxio(profile).counters().cache_bytes == 150
    assert client.master_rpcs() == {"GetStatus": 9, "ListStatus": 0, "CheckExistence": 0, "GetWorkerInfoList": 8,
                                    "GetBlockInfo": 0, "getConfiguration": 9, "getConfigHash": 0}
    activity = Alluxio(profile).activity()
    assert (activity["master GetStatus"], activity["worker blocks read"], activity["worker bytes sent"]) == (9, 15, 150)


def test_a_worker_that_gives_no_metrics_is_named(cluster):
    profile, workers, _ = cluster
    port = workers[1].server_port
    workers[1].shutdown()
    workers[1].server_close()
    with pytest.raises(PerfkitError, match=rf"the Alluxio worker at 127.0.0.1:{port} gives no metrics: its counters "
                                           r"cannot be summed. Fix: check that worker"):
        AlluxioClient(profile).worker_counters()


def test_the_masters_web_port_defaults_to_alluxios_and_a_silent_master_is_named():
    profile = replace(load_profile("emr", bucket="b"), alluxio_master="127.0.0.1:1", alluxio_s3_mount="/b")
    assert AlluxioClient(profile).master_web() == "127.0.0.1:19999"
    silent = replace(profile, alluxio_master_web="127.0.0.1:1")
    with pytest.raises(PerfkitError, match=r"^the Alluxio master's web server at 127.0.0.1:1 does not answer. Fix: "
                                           r"check that it runs, or set alluxio_master_web \(host:port\) "
                                           r"in the profile$"):
        AlluxioClient(silent).store()


def test_settle_waits_for_every_workers_cache_requests(cluster, monkeypatch):
    import perfkit.tiers.alluxio

    profile, _, pages = cluster
    monkeypatch.setattr(perfkit.tiers.alluxio, "SETTLE_POLL_S", 0.01)
    assert Alluxio(profile).settle(timeout_s=0.3) == ("Alluxio's background caching still busy after 0.3 s: "
                                                      "the next try races it")
    pages[0]["/metrics/json/"] = _worker(100, 7, 0, 0)
    assert Alluxio(profile).settle(timeout_s=0.3).startswith("Alluxio's background caching still busy")  # worker 2
    pages[1]["/metrics/json/"] = _worker(50, 3, 0, 0)
    assert Alluxio(profile).settle(timeout_s=5).startswith("Alluxio's background caching done after ")
