"""Spark settings any Spark perfkit starts shares: the driver's log file, properties files."""
from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.paths import log_dir

DRIVER_LOG4J2 = """# written by perfkit: the Spark driver logs to a file; the terminal and reports show perfkit's lines
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{ISO8601}} %p %c{{1}}: %m%n%ex
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
"""


def spark_properties(conf: dict[str, str]) -> str:
    """A Spark properties file (Java properties syntax, read as UTF-8 by spark-submit --properties-file)."""
    def escape(text: str, key: bool) -> str:
        text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        return re.sub(r"([=: #!])", r"\\\1", text) if key else re.sub(r"^([ #!])", r"\\\1", text)

    lines = ["# written by perfkit: it holds the lab's S3 keys, so only its owner may read it"]
    return "\n".join(lines + [f"{escape(k, True)}={escape(str(v), False)}" for k, v in conf.items()]) + "\n"


def driver_log_conf() -> dict[str, str]:
    """Driver JVM options pointing log4j2 at a file under perfkit's log folder (spark-driver.log)."""
    folder = log_dir()
    config = folder / "spark-driver-log4j2.properties"
    text = DRIVER_LOG4J2.format(log=folder / "spark-driver.log")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not config.exists() or config.read_text() != text:
            config.write_text(text)
    except OSError as err:
        name = f"PERFKIT_LOG_DIR={folder}" if os.environ.get("PERFKIT_LOG_DIR") else f"perfkit's log folder {folder}"
        problem = ("is a file, not a folder" if isinstance(err, FileExistsError) else
                   "is not a folder (a file is in its path)" if isinstance(err, NotADirectoryError) else
                   f"cannot be written ({err.strerror or err})")
        raise PerfkitError(f"{name} {problem}: the Spark driver logs there. "
                           "Fix: set PERFKIT_LOG_DIR to a folder you can write to") from None
    return {"spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={Path(config).as_uri()}"}


def hive_session_conf() -> dict[str, str]:
    """A Hive session id of this session's own, given rather than made: the Hive client inside Spark prints
    "Hive Session ID = ..." to the process's stderr (past log4j, whatever hive.session.silent says) only when it
    makes one. Unique per session: Hive names its scratch folders after it."""
    return {"spark.hadoop.hive.session.id": str(uuid.uuid4())}
