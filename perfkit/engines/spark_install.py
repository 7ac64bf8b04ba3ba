"""Which Spark this process drives: the pyspark installed beside perfkit (the lab's, `pip install perfkit[spark]`), or a
cluster's own through SPARK_HOME (EMR's /usr/lib/spark: its pyspark is not a pip package, so perfkit requires none)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from perfkit.errors import PerfkitError

# where EMR keeps its Spark; a kernel started by EMR Studio (Jupyter Enterprise Gateway) may not have SPARK_HOME set
EMR_SPARK_HOME = Path("/usr/lib/spark")
FIX = ("Fix: on a cluster, set SPARK_HOME to its Spark (EMR: /usr/lib/spark); elsewhere `pip install 'perfkit[spark]'` "
       "(any pyspark 3.5 or 4.x)")


def spark_python_path(home: Path) -> list[Path]:
    """The folders a Spark distribution keeps its Python side in: SPARK_HOME/python and the py4j it ships."""
    python = home / "python"
    if not (python / "pyspark" / "__init__.py").exists():
        raise PerfkitError(f"SPARK_HOME {home} has no pyspark (no {python / 'pyspark'}). {FIX}")
    py4j = sorted((python / "lib").glob("py4j-*-src.zip"))
    if not py4j:
        raise PerfkitError(f"SPARK_HOME {home} has no py4j (no {python / 'lib'}/py4j-*-src.zip). {FIX}")
    return [python, py4j[-1]]


def import_pyspark():
    """pyspark, imported: the installed one, else SPARK_HOME's (added to sys.path), else one clear error."""
    try:
        import pyspark
    except ImportError:
        home = os.environ.get("SPARK_HOME")
        if not home and (EMR_SPARK_HOME / "python" / "pyspark").is_dir():
            home = os.environ["SPARK_HOME"] = str(EMR_SPARK_HOME)  # pyspark's launcher finds spark-submit by it
        if not home:
            raise PerfkitError(f"the Spark engine needs pyspark, which this Python ({sys.executable}) does not have, "
                               f"and SPARK_HOME is not set. {FIX}") from None
        for entry in reversed(spark_python_path(Path(home))):
            if str(entry) not in sys.path:
                sys.path.insert(0, str(entry))
        import pyspark
    return pyspark


def pyspark_version() -> str:
    return import_pyspark().__version__


def spark_home() -> Path:
    """The Spark the session runs: SPARK_HOME (a cluster's, e.g. /usr/lib/spark), else the installed pyspark's."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    return Path(import_pyspark().__file__).parent
