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
    yield profile, workers, pages, info
    for server in (master, *workers):
        server.shutdown()


def test_counters_and_cache_requests_are_summed_over_every_worker_the_master_lists(cluster):
    profile, _, _, _ = cluster
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
    profile, workers, _, _ = cluster
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

    profile, _, pages, _ = cluster
    monkeypatch.setattr(perfkit.tiers.alluxio, "SETTLE_POLL_S", 0.01)
    assert Alluxio(profile).settle(timeout_s=0.3) == ("Alluxio's background caching still busy after 0.3 s: "
                                                      "the next try races it")
    pages[0]["/metrics/json/"] = _worker(100, 7, 0, 0)
    assert Alluxio(profile).settle(timeout_s=0.3).startswith("Alluxio's background caching still busy")  # worker 2
    pages[1]["/metrics/json/"] = _worker(50, 3, 0, 0)
    assert Alluxio(profile).settle(timeout_s=5).startswith("Alluxio's background caching done after ")


def _proxy(answer, asked: list):
    """An Alluxio proxy's v1 REST API: records each POST (path, JSON body), answers answer(path) -> (status, body)."""
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            asked.append((self.path, body))
            status, page = answer(self.path)
            self.send_response(status)
            self.end_headers()
            self.wfile.write(json.dumps(page).encode() if page is not None else b"")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_emptying_through_the_rest_api_frees_the_mount_and_waits_until_the_master_counts_nothing_held(cluster):
    profile, _, _, info = cluster  # the master's served page: the free below empties its store
    asked = []

    def answer(path):
        info["capacity"]["used"] = 0  # what the workers report at their heartbeats after the free
        return 200, None

    proxy = _proxy(answer, asked)
    try:
        rest = replace(profile, alluxio_rest=f"http://127.0.0.1:{proxy.server_port}/api/v1")
        assert Alluxio(rest).empty() == "Alluxio freed /b (the bucket's mount)"
    finally:
        proxy.shutdown()
    assert asked == [("/api/v1/paths//b/free", {"recursive": True, "forced": True})]


def test_a_free_the_rest_api_refuses_is_named_with_alluxios_reason(cluster):
    profile, _, _, _ = cluster
    proxy = _proxy(lambda path: (500, {"message": 'Path "/b" does not exist.', "statusCode": "NOT_FOUND"}), [])
    try:
        rest = replace(profile, alluxio_rest=f"http://127.0.0.1:{proxy.server_port}/api/v1")
        with pytest.raises(PerfkitError, match=r'^Alluxio\'s REST API refused to free /b \(HTTP 500\): Path "/b" '
                                               r"does not exist.\. Fix: check that /b is under the folder where the "
                                               r"bucket is mounted \(alluxio_s3_mount\)$"):
            Alluxio(rest).empty()
    finally:
        proxy.shutdown()


def test_refreshing_syncs_each_folders_metadata_through_the_rest_api(cluster):
    profile, _, _, _ = cluster
    asked = []
    gone = {"message": 'Path "/b/perfkit/datasets/zones" does not exist.', "statusCode": "NOT_FOUND"}
    proxy = _proxy(lambda path: (200, []) if "taxi" in path else (500, gone), asked)
    try:
        rest = replace(profile, alluxio_rest=f"http://127.0.0.1:{proxy.server_port}/api/v1/")
        # a folder gone from S3 is gone from Alluxio's view after the sync, which then says it does not exist
        Alluxio(rest).refresh(["s3://b/perfkit/datasets/taxi/orc", "s3a://b/perfkit/datasets/zones"])
    finally:
        proxy.shutdown()
    sync = {"recursive": True, "commonOptions": {"syncIntervalMs": 0}}  # a listing that syncs with S3 first
    assert asked == [("/api/v1/paths//b/perfkit/datasets/taxi/orc/list-status", sync),
                     ("/api/v1/paths//b/perfkit/datasets/zones/list-status", sync)]


def test_without_the_rest_api_the_shell_frees_and_loads_the_metadata(cluster, monkeypatch):
    profile, _, _, info = cluster
    shell = []

    def fs(self, *args, timeout=600):
        shell.append(args)
        info["capacity"]["used"] = 0
        return ""

    monkeypatch.setattr(AlluxioClient, "fs", fs)
    Alluxio(profile).refresh(["s3://b/perfkit/t"])
    assert Alluxio(profile).empty() == "Alluxio freed /b (the bucket's mount)"
    assert shell == [("loadMetadata", "-R", "-F", "/b/perfkit/t"), ("free", "-f", "/b")]


def test_a_profile_without_alluxio_refreshes_nothing_and_its_runs_stay_unavailable(monkeypatch):
    monkeypatch.setattr(AlluxioClient, "fs", lambda self, *args, **kw: pytest.fail(f"alluxio fs {args} was run"))
    Alluxio(load_profile("emr", bucket="b")).refresh(["s3://b/perfkit/t"])
