import os
import re
import shutil
import tempfile
from dataclasses import fields

import pytest

from perfkit.config import load_profile
from perfkit.lab import Lab
from perfkit.lab.settings import JAVA_OPTIONS_ENV, LabPorts, lab_home
from perfkit.network import PROFILES

# a failed lab test shows the causes its daemons logged meanwhile: CI keeps no lab log, and a HiveServer2 answer
# says only "return code 2 from MapRedTask" when a local job ran out of heap
LOG_CAUSE = re.compile(r"^(Caused by: \S+|\S*(Error|Exception): )")
CAUSES_SHOWN = 12
# `make test` runs these tests on two labs side by side (pytest-xdist, one lab per worker): worker gwN beyond the
# first gets a lab of its own, its ports each the default + N * WORKER_PORT_SHIFT (clear of the cluster module's +100)
WORKER_PORT_SHIFT = 200
# The JVMs of the labs these tests start (daemons, Spark's driver, the Hadoop tools) compile with C1 only: the tests
# check behaviour, not speed, and C2's compiles were a third of the CPU on CI's two busy cores (test_suites_lab alone:
# 766 -> 539 CPU-s, 423 -> 378 s). The runs' versions say so ("lab JVM options"). PERFKIT_LAB_JAVA_OPTIONS="" runs
# them with the JVMs' full JIT, as `make report` does.
TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


RESULTS_APART: dict[str, str] = {}


def pytest_configure(config):
    """Under pytest-xdist, worker gwN (N >= 1) runs on a lab of its own: its home, ports, locks and logs, set in this
    process's environment before any lab or profile is made, so every perfkit process it starts inherits them.
    gw0 (and a run without workers) keeps the default lab, which may already be up. The labs these tests start run
    their JVMs as TEST_JAVA_OPTIONS says, unless PERFKIT_LAB_JAVA_OPTIONS is set already."""
    os.environ.setdefault(JAVA_OPTIONS_ENV, TEST_JAVA_OPTIONS)
    # the runs these tests record go to a folder of this process's, removed at its end: not the checkout's
    # data/results, where a user's compare report looks for "the latest two comparable runs"
    RESULTS_APART["folder"] = os.environ["PERFKIT_RESULTS"] = tempfile.mkdtemp(prefix="perfkit-test-runs-")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) if worker.startswith("gw") else 0
    if not index:
        return
    ports = LabPorts.from_env()
    state = lab_home().parent / worker  # not under the default home, nor its name a prefix of it
    os.environ.update({"PERFKIT_LAB_HOME": str(state / "lab"), "PERFKIT_LOCK_DIR": str(state / "locks"),
                       "PERFKIT_LOG_DIR": str(state / "logs")})
    for port in fields(LabPorts):
        os.environ[f"PERFKIT_LAB_PORT_{port.name.upper()}"] = str(getattr(ports, port.name) + index * WORKER_PORT_SHIFT)


def pytest_unconfigure(config):
    if folder := RESULTS_APART.pop("folder", None):
        shutil.rmtree(folder, ignore_errors=True)


# The longest modules go first: pytest-xdist hands a free worker the next module in this order (`make test` turns off
# its own order, by number of tests, which put one-test modules of a minute or more, like test_sigterm_lab, last).
# Seconds from the two-lab run of c3ee97b (the lab start falls on whichever module a worker runs first), the matrix
# notebook's 304 s counted with test_suites_lab, where it went since (it reuses that module's TPC-H data).
LONGEST_FIRST = {"test_suites_lab.py": 1280, "test_notebook.py": 735, "test_io_accounting_lab.py": 362,
                 "test_alluxio_lab.py": 323, "test_queries.py": 197, "test_cache_tier_lab.py": 140,
                 "test_bench.py": 250, "test_engine_conformance.py": 83, "test_sigterm_lab.py": 76}
# test_zz_lab_down stops its worker's lab, after every other module of that worker; the cluster module's own lab after
LAST = "test_zz"
# A worker's lab starts without these services; each starts when the first module that uses it begins (the table
# below): Alluxio's three JVMs are a sixth of a lab's start and a third of its CPU at rest. The modules that use
# Alluxio run one after another on one worker (pytest_xdist_make_scheduler), so the other lab never starts it.
# (test_lab, test_lab_faults and test_transfer_faults check or heal the whole lab: they use both)
WHOLE_LAB = {"test_lab.py", "test_lab_faults.py", "test_transfer_faults.py"}
ON_DEMAND = {
    "alluxio": {"test_alluxio_lab.py", "test_cache_tier_lab.py", "test_promote_lab.py", "test_s3_network_lab.py",
                "test_storage_conformance.py", *WHOLE_LAB},
    "spark-thrift": {"test_engine_conformance.py", "test_partitions_lab.py", "test_query_faults.py",
                     "test_s3_network_lab.py", "test_zz_lab_down.py", *WHOLE_LAB},
}
ALLUXIO_GROUP = "modules using alluxio"


def pytest_xdist_make_scheduler(config, log):
    """`make test`'s --dist loadfile (a module at a time, module fixtures shared) with one change: the modules
    that use Alluxio are one unit. pytest-xdist's own loadgroup cannot say it with pytest 9 (its group suffix on
    the node id no longer reaches the scheduler)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class AlluxioModulesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return ALLUXIO_GROUP if module.rsplit("/", 1)[-1] in ON_DEMAND["alluxio"] else module

    return AlluxioModulesTogether(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.lab)
    position = {id(item): n for n, item in enumerate(items)}
    items.sort(key=lambda item: (item.path.name.startswith(LAST), -LONGEST_FIRST.get(item.path.name, 0),
                                 position[id(item)]))


def _log_sizes() -> dict:
    return {log: log.stat().st_size for log in (lab_home() / "logs").glob("*.log")}


def _causes_since(sizes: dict) -> str:
    causes: list[str] = []
    for log, size in _log_sizes().items():
        start = sizes.get(log, 0)
        with open(log, "rb") as f:
            f.seek(start if start <= size else 0)  # a log started anew since: all of it
            for line in f.read().decode("utf-8", "replace").splitlines():
                if LOG_CAUSE.match(line.strip()) and (cause := f"{log.name}: {line.strip()[:300]}") not in causes:
                    causes.append(cause)
    return "\n".join(causes[-CAUSES_SHOWN:])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    item.lab_log_sizes = _log_sizes()  # before the module's fixtures run their work
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and hasattr(item, "lab_log_sizes") and (causes := _causes_since(item.lab_log_sizes)):
        report.sections.append(("causes in the lab's logs during this test", causes))


@pytest.fixture(scope="session")
def lab():
    """The real lab, started if it is not up; stopped again at the end if these tests started it."""
    lab = Lab()
    started_here = not lab.is_up()
    # the tests expect S3 on this machine (a `make report` leaves it behind ec2-s3); set before the clients start
    lab.set_network(PROFILES["local"])
    lab.up([s.name for s in lab.shaped(lab.services) if s.name not in ON_DEMAND])
    yield lab
    if started_here:
        lab.down()


@pytest.fixture(scope="module", autouse=True)
def lab_services(request):
    """The services of ON_DEMAND the module uses, started (with what they need) before its tests."""
    if used := sorted(name for name, modules in ON_DEMAND.items() if request.node.path.name in modules):
        request.getfixturevalue("lab").up(used)


@pytest.fixture(scope="session")
def profile(lab):
    return load_profile("lab")


@pytest.fixture
def s3_counts_agree(profile):
    """A check of measured runs through engines that count their own S3 requests: on every run on S3 the server and
    the engine counted the same GET, HEAD and LIST requests (the run attributable, only the server's bytes missing on
    the lab's `local` network); the S3 server saw none of a run on HDFS, the NameNode did."""
    from perfkit.accounting.table import EXACT

    no_bytes = {"s3_bytes_read": profile.provider.s3_bytes_not_counted()}

    def check(runs, engines: set[str]) -> None:
        on_s3 = [r for r in runs if r.storage == "s3"]
        assert {r.subject for r in on_s3} == engines
        for r in on_s3:
            assert r.io["attributable"] and r.io["missing"] == {} and r.io["not_counted"] == no_bytes, \
                (r.subject, r.case, r.io)
            server, engine = r.io["server"], r.io["engine"]
            assert server["s3_get"] > 0, (r.subject, r.case, server)
            # the whole record in the message (a str: pytest shortens a tuple's repr), retries and sources included
            assert {n: server.get(n, 0) for n in EXACT} == {n: engine.get(n, 0) for n in EXACT}, \
                f"{r.subject} {r.case} iteration {r.iteration}: {r.io}"
        for r in (r for r in runs if r.storage == "hdfs"):
            assert r.io["server"].get("s3_get", 0) == 0 and r.io["server"]["hdfs_read_ops"] > 0, (r.subject, r.case)

    return check


