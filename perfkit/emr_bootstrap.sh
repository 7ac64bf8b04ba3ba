#!/bin/bash
# perfkit on an EMR node, into the node's Python, leaving the cluster's Spark alone (printed by `perfkit emr bootstrap`).
#
# As a bootstrap action it runs on every node: the Livy sessions of sparkmagic's PySpark kernel and their executors
# import perfkit from the cluster's python3. As a step on the master node, with PERFKIT_PYTHON=/emr/notebook-env/bin/python,
# it installs perfkit where EMR Studio's python3 kernel runs (the kernel perfkit's notebooks declare): notebook
# environments are made after the bootstrap actions, so a bootstrap action cannot reach them.
#
# Usage: perfkit-bootstrap.sh PACKAGE
#   PACKAGE: perfkit's wheel, as an s3:// URL or a path (python -m pip wheel --no-deps -w dist .), or a pip requirement
#   PERFKIT_PYTHON: the Python to install into (default: python3)
#   PERFKIT_EXTRAS: perfkit's extras to add, e.g. "report,tools" for the notebook environment (default: none; on every
#     node perfkit alone: no Jupyter, and no aws CLI v1 whose `aws` would shadow the node's own on its PATH)
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "perfkit bootstrap: give perfkit's wheel (s3://BUCKET/perfkit-VERSION-py3-none-any.whl) or a pip requirement" >&2
  exit 2
fi
package="$1"
python="${PERFKIT_PYTHON:-python3}"
sudo=""
if [ "$(id -u)" != 0 ] && [ ! -w "$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" ]; then
  sudo="sudo"  # the cluster's own Python belongs to root; a bootstrap action runs as hadoop
fi

case "$package" in
  s3://*)
    folder="$(mktemp -d)"
    aws s3 cp --only-show-errors "$package" "$folder/"
    package="$folder/${package##*/}"
    ;;
esac

# the Spark the cluster runs, as this Python sees it: pip must not bring one of its own (perfkit requires none)
spark_of() { "$python" -c 'import pyspark; print(pyspark.__version__, pyspark.__file__)' 2>/dev/null || echo "none"; }
before="$(spark_of)"
if [ -n "${PERFKIT_EXTRAS:-}" ]; then
  package="$package[$PERFKIT_EXTRAS]"
fi
$sudo "$python" -m pip install --quiet --disable-pip-version-check "$package"
after="$(spark_of)"
if [ "$before" != "$after" ]; then
  echo "perfkit bootstrap: installing $package changed this Python's pyspark ($before -> $after):" \
       "undo it with $python -m pip uninstall pyspark, and install perfkit without the extras that bring one" >&2
  exit 1
fi
"$python" -c 'import sys, perfkit; print(f"perfkit {perfkit.__version__} in {sys.executable} (Python {sys.version.split()[0]})")'
