"""API calls to fetch 100 EBS volumes x 4 metrics over one day: perfkit's batched GetMetricData against
one GetMetricStatistics call per metric and volume (the common pattern). Both run against a moto
server over HTTP in this process, and both counts are what the client really sent.

    python bench/cloudwatch_calls.py [--volumes 100 --period 300] [--quick]

--quick (what the AWS tests run, tests/aws/test_bench_cloudwatch_calls.py): 5 volumes; its figures say nothing,
only that the script still runs. Any size given besides it wins.
"""
from __future__ import annotations

import argparse
import os
import socket
from datetime import datetime, timedelta, timezone

import boto3
from moto.server import ThreadedMotoServer

from perfkit.metrics import EBS_METRICS
from perfkit.metrics.cloudwatch import fetch_ebs_metrics

METRICS = ["VolumeReadBytes", "VolumeWriteBytes", "VolumeQueueLength", "BurstBalance"]
QUICK = {"volumes": 5}  # --quick: a few volumes, every metric, both ways


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volumes", type=int, default=100)
    parser.add_argument("--period", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run both ways: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    try:
        calls: list[str] = []
        client = boto3.session.Session().client("cloudwatch", region_name="us-east-1",
                                                endpoint_url=f"http://127.0.0.1:{port}")
        client.meta.events.register("before-call", lambda model, **kw: calls.append(model.name))
        end = datetime.now(timezone.utc).replace(second=0, microsecond=0)
        start = end - timedelta(days=1)
        volumes = [f"vol-{i:017x}" for i in range(args.volumes)]

        fetch_ebs_metrics(volumes, start, end, args.period, metrics=METRICS, client=client)
        perfkit_calls = len(calls)

        calls.clear()
        for volume in volumes:
            for metric in METRICS:
                client.get_metric_statistics(Namespace="AWS/EBS", MetricName=metric,
                                             Dimensions=[{"Name": "VolumeId", "Value": volume}], StartTime=start,
                                             EndTime=end, Period=args.period, Statistics=[EBS_METRICS[metric][0]])
        naive_calls = len(calls)
    finally:
        server.stop()
    print(f"cloudwatch_calls: {args.volumes} volumes x {len(METRICS)} metrics, one day at {args.period} s")
    print(f"  perfkit (GetMetricData, batched):           {perfkit_calls} calls")
    print(f"  one call per metric and volume (GetMetricStatistics): {naive_calls} calls")
    print(f"  ratio: {naive_calls / perfkit_calls:.0f}x fewer calls")


if __name__ == "__main__":
    main()
