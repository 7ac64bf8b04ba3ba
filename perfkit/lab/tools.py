"""Fetch the lab's tools into the tool cache (outside the clone), once per version."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import versions
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

_POM = Path(__file__).with_name("hadoop-pom.xml")
_YARN_POM = Path(__file__).with_name("yarn-pom.xml")
_NODE_ADDRESS = Path(__file__).with_name("node_address.c")
_JAR_VERSION = re.compile(r"-\d[^-]*(-(jre|tests|jdk\w*|v\d\w*))?\.jar$")
GO_TARBALL_INSTALL = Path("/usr/local/go/bin/go")  # where go.dev's tarball puts it, often not on PATH
# Spark brings its own netty, httpclient, codec and logging jars: S3A needs only these beside them.
_S3A_FOR_SPARK = re.compile(
    rf"^(hadoop-aws-.*|.*-{re.escape(versions.AWS_SDK)}|eventstream-.*|reactive-streams-.*|analyticsaccelerator-.*|wildfly-openssl-.*)\.jar$"
)


def java_home() -> Path:
    """A Java >= 17 for the daemons: JAVA_HOME, else the `java` on PATH."""
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else shutil.which("java")
    fix = f"install Java {versions.MIN_JAVA}+ (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
    if not java or not Path(java).exists():
        raise PerfkitError(f"lab: Java was not found. Fix: {fix}")
    out = subprocess.run([str(java), "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < versions.MIN_JAVA:
        raise PerfkitError(f"lab: {java} is not Java {versions.MIN_JAVA}+ ({out.splitlines()[:1]}). Fix: {fix}")
    return Path(java).resolve().parents[1]


def maven(what: str) -> str:
    """The `mvn` command, which every jar fetch of the lab needs once; its absence named with the fix."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise PerfkitError(f"lab: Maven (mvn) is needed once to fetch {what}. Fix: apt-get install maven")
    return mvn


def hadoop_lib() -> Path:
    """The Hadoop jars (daemons, CLI, MapReduce, DistCp, S3A), fetched with Maven."""
    return maven_lib(tool_cache() / f"hadoop-{versions.HADOOP}" / "lib", _POM, f"Hadoop {versions.HADOOP} jars")


def yarn_lib() -> Path:
    """The YARN daemons' and MapReduce ApplicationMaster's jars that hadoop_lib() lacks (the cluster shape only)."""
    lib = tool_cache() / f"hadoop-{versions.HADOOP}" / "yarn-lib"
    if (lib / ".complete").exists():
        return lib
    held = {artifact(jar.name) for jar in hadoop_lib().glob("*.jar")}
    # the same artifact at another version beside the Hadoop folder's would put two on one class path
    return maven_lib(lib, _YARN_POM, f"YARN {versions.HADOOP} jars", keep=lambda jar: artifact(jar) not in held)


def artifact(jar: str) -> str:
    """A jar's artifact name without its version: guava-33.4.8-jre.jar -> guava."""
    return _JAR_VERSION.sub("", jar)


def maven_lib(lib: Path, template: Path, what: str, values: dict[str, str] | None = None,
              keep=lambda jar: True) -> Path:
    """The runtime dependencies of the pom `template` (its @NAME@ fields filled in from `values`, by default the lab's
    Hadoop and AWS SDK), copied into `lib` once by Maven."""
    return fetched_once(lib, lib / ".complete", lambda: _fetch_maven_lib(lib, template, what, values, keep))


def _fetch_maven_lib(lib: Path, template: Path, what: str, values: dict[str, str] | None, keep) -> None:
    mvn = maven(f"the {what}")
    lib.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as work:
        pom = Path(work) / "pom.xml"
        text = template.read_text()
        for name, value in (values or {"HADOOP_VERSION": versions.HADOOP, "AWSSDK_VERSION": versions.AWS_SDK}).items():
            text = text.replace(f"@{name}@", value)
        pom.write_text(text)
        staging = Path(work) / "lib"
        print(f"lab: fetching {what} into {lib} (once) ...", flush=True)
        run = subprocess.run(
            [mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
             f"-DoutputDirectory={staging}", "-DincludeScope=runtime"],
            capture_output=True, text=True,
        )
        if run.returncode != 0:
            raise PerfkitError(
                f"lab: Maven could not fetch the {what}:\n{(run.stdout + run.stderr)[-2000:]}\n"
                "Fix: check that Maven can reach its repository, then run `perfkit lab up` again"
            )
        for jar in staging.glob("*.jar"):
            if not keep(jar.name):
                jar.unlink()
        (staging / ".complete").touch()
        shutil.rmtree(lib, ignore_errors=True)
        staging.rename(lib)


def node_address_library() -> Path:
    """node_address.c built once into a shared library (LD_PRELOAD): a cluster-shape process on its node's address."""
    built = tool_cache() / "native" / f"node_address-{_source_digest(_NODE_ADDRESS)}.so"
    return fetched_once(built, built, lambda: _build_node_address(built))


def _build_node_address(built: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise PerfkitError("lab: the cluster shape needs a C compiler once, to build the shim that puts each node "
                           "on its own loopback address. Fix: apt-get install gcc")
    built.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=built.parent) as work:
        out = Path(work) / built.name
        run = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(_NODE_ADDRESS), "-ldl"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise PerfkitError(f"lab: building {_NODE_ADDRESS.name} failed:\n{run.stderr[-1500:]}\n"
                               "Fix: install a working C compiler (apt-get install gcc)")
        out.rename(built)


def _source_digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def s3a_jars() -> list[Path]:
    """The jars Spark needs on top of its own to read s3a:// paths."""
    return sorted(p for p in hadoop_lib().iterdir() if _S3A_FOR_SPARK.match(p.name))


def versitygw() -> Path:
    """The versitygw S3 server binary."""
    return go_tool("versitygw", versions.VERSITYGW_MODULE, versions.VERSITYGW, "the S3 server (versitygw)")


def gohdfs() -> Path:
    """colinmarc/hdfs, the Go HDFS client (`hdfs put`, ...), as published comparisons used it."""
    return go_tool("hdfs", versions.GOHDFS_MODULE, versions.GOHDFS, "the Go HDFS client (gohdfs)")


# what the lab runs of rclone: `serve nfs` of a local folder and `mount` of HDFS (`version` names the build)
RCLONE_PACKAGES = ("backend/local", "backend/hdfs", "cmd/serve", "cmd/serve/nfs", "cmd/mount", "cmd/version")


def rclone() -> Path:
    """rclone: the lab's NFS server (`serve nfs`) and its FUSE mount of HDFS (`mount`). Built with only those parts
    (rclone's own main compiles its 70 backends and every command: most of a fresh lab's build time)."""
    return go_main("rclone", versions.RCLONE_MODULE, versions.RCLONE, RCLONE_PACKAGES,
                   "rclone (NFS server, FUSE mount)")


def toxiproxy() -> Path:
    """Toxiproxy's server: latency and bandwidth between the lab's S3 clients and its S3 server."""
    return go_tool("server", versions.TOXIPROXY_MODULE, versions.TOXIPROXY, "the network emulator (Toxiproxy)",
                   name="toxiproxy-server")


def _go(what: str) -> str:
    """The `go` command, on PATH or where Go's tarball installs it; `what` names what it is needed for."""
    go = shutil.which("go") or (str(GO_TARBALL_INSTALL) if GO_TARBALL_INSTALL.exists() else None)
    if not go:
        raise PerfkitError(f"lab: Go is needed once to build {what}. Fix: install Go 1.22+ (apt-get install golang)")
    return go


def _run_go(argv: list[str], what: str, **options) -> None:
    """Run a Go command; its failure named as `what`, with Go's own words and the likely fix."""
    run = subprocess.run(argv, capture_output=True, text=True, **options)
    if run.returncode != 0:
        raise PerfkitError(f"lab: {what} failed:\n{run.stderr[-2000:]}\nFix: check that Go can reach its module proxy")


def go_tool(command: str, module: str, version: str, what: str, name: str = "") -> Path:
    """A Go binary built once with `go install module@version` into the tool cache (as `name`, default `command`)."""
    def install(go: str, work: Path) -> Path:
        _run_go([go, "install", f"{module}@{version}"], f"`go install {module}@{version}`",
                env={**os.environ, "GOBIN": str(work)})
        return work / command

    binary = tool_cache() / "go" / "bin" / f"{name or command}-{version}"
    return _built_once(binary, what, f"{command} {version}", install)


def go_main(name: str, module: str, version: str, packages: tuple[str, ...], what: str) -> Path:
    """A Go program's main (`module`'s cmd.Main) built once with only `packages` of it linked in, as `name`-`version`-
    lab in the tool cache: a module of our own that requires `module`@`version` and imports those packages."""
    def build(go: str, work: Path) -> Path:
        imports = "\n".join(f'\t_ "{module}/{package}"' for package in packages)
        (work / "go.mod").write_text(f"module perfkit.lab/{name}\n\ngo 1.22\n\nrequire {module} {version}\n")
        (work / "main.go").write_text(f'package main\n\nimport (\n\t"{module}/cmd"\n{imports}\n)\n\n'
                                      "func main() {\n\tcmd.Main()\n}\n")
        for step, args in (("mod tidy", []), ("build", ["-trimpath", "-o", str(work / name), "."])):
            _run_go([go, *step.split(), *args], f"`go {step}` of {what} ({module}@{version})", cwd=work)
        return work / name

    binary = tool_cache() / "go" / "bin" / f"{name}-{version}-lab"
    return _built_once(binary, what, f"{name} {version} ({', '.join(packages)})", build)


def _built_once(binary: Path, what: str, described: str, build) -> Path:
    """`binary`, built by `build(go, work folder)` (which returns the file it built) unless it exists; a failed build
    leaves nothing behind."""
    def make() -> None:
        go = _go(what)
        binary.parent.mkdir(parents=True, exist_ok=True)
        print(f"lab: building {described} into {binary} (once) ...", flush=True)
        with tempfile.TemporaryDirectory(dir=binary.parent) as work:
            build(go, Path(work)).rename(binary)

    return fetched_once(binary, binary, make)


def spark_home() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise PerfkitError("lab: pyspark is not installed. "
                           "Fix: pip install -e '.[dev,lab]' (or `make install`)") from exc
    return Path(pyspark.__file__).parent
