"""The Python side of the lab's Livy stand-in: one process per session, beside its Spark driver, running each
statement under the rules of Livy's own Python REPL (repl/src/main/resources/fake_shell.py, read, not copied):

- the code is compiled whole; when that fails, it is cut into lines that start with `%` (magics) and the runs of
  other lines between them, each compiled on its own (a syntax error is the statement's error);
- every statement but the last runs as `exec`, the last as `single`: an expression's `repr` is printed, as at a
  `>>>` prompt; there is no IPython (no display hooks, no rich output);
- what the code printed (stdout, then stderr) follows the magic's own text, and comes back as `text/plain`, right-
  stripped; `text/plain` is left out only when it is empty and a magic gave another type;
- magics: `%table NAME` (application/vnd.livy.table.v1+json), `%json NAME` (application/json), `%matplot NAME`
  (image/png of NAME.gcf()); any other is an error;
- an error is its type's name, its text and the formatted traceback, less the frames above the user's code.

It speaks JSON lines on the pipes its server opened: a request {"code": ...} in, a reply out (the "content" of
Livy's execute_reply: status ok with data, or error with ename, evalue and traceback)."""
from __future__ import annotations

import ast
import base64
import datetime
import decimal
import io
import json
import os
import re
import signal
import sys
import traceback

TABLE = "application/vnd.livy.table.v1+json"
_USER_FRAME = re.compile(r'\s*File "<stdin>".*in <module>')


class UnknownMagic(Exception):
    pass


def error_reply(exc_type, exc_value, tb) -> dict:
    formatted = traceback.format_exception(exc_type, exc_value, tb, chain=False)
    for i, line in enumerate(formatted):
        if _USER_FRAME.match(line):  # keep the "Traceback" header, drop the REPL's own frames above the user's
            formatted = formatted[:1] + formatted[i + 1:]
            break
    return {"status": "error", "ename": exc_type.__name__, "evalue": str(exc_value), "traceback": formatted}


class Repl:
    """Runs statements in one namespace (`spark`, `sc` and `sqlContext` put there by the session)."""

    def __init__(self, namespace: dict | None = None):
        self.namespace = namespace if namespace is not None else {}
        self.magics = {"table": self._table, "json": self._json, "matplot": self._matplot}
        self.running = False  # a statement is taken: a SIGINT from now on cancels it
        self.in_code = False  # the statement's own code runs: a SIGINT stops it where it is
        self.cancelled = False

    def interrupt(self, signum=None, frame=None) -> None:
        """SIGINT (a cancel): stops the statement that runs, or keeps the one just taken from starting; between
        statements there is nothing to stop."""
        if self.running:
            self.cancelled = True
        if self.in_code:
            raise KeyboardInterrupt

    def take(self) -> None:
        """A statement is taken (the server interrupts only after the REPL said so: a SIGINT sent before it would
        fall between statements and be lost)."""
        self.running, self.cancelled = True, False

    def execute(self, code: str) -> dict:
        self.running = True
        try:
            return self._execute(code)
        finally:
            self.running = self.cancelled = False

    def _execute(self, code: str) -> dict:
        try:
            chunks = self._chunks(code)
        except SyntaxError as err:
            return error_reply(type(err), err, None)
        out, err = io.StringIO(), io.StringIO()
        real = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        result: dict = {}
        try:
            for chunk in chunks:
                result = self._magic(chunk) if isinstance(chunk, str) else self._run(chunk)
        except UnknownMagic as magic:
            return error_reply(UnknownMagic, magic, None)
        except _Raised as raised:
            return error_reply(*raised.exc_info)
        finally:
            sys.stdout, sys.stderr = real
        if result.get("status") == "error":  # a magic's own error (a name that is not there)
            return result
        data = dict(result or {})
        text = (data.pop("text/plain", "") + out.getvalue() + err.getvalue()).rstrip()
        if text or not data:
            data["text/plain"] = text
        return {"status": "ok", "data": data}

    @staticmethod
    def _chunks(code: str) -> list:
        """Compiled modules, and magic lines (str)."""
        try:
            return [compile(code, "<stdin>", "exec", ast.PyCF_ONLY_AST, 1)]
        except SyntaxError:
            pass
        chunks, normal = [], []
        for line in code.rstrip().split("\n"):
            if line.startswith("%"):
                if normal:
                    chunks.append("\n".join(normal))
                    normal = []
                chunks.append(line)
            else:
                normal.append(line)
        if normal:
            chunks.append("\n".join(normal))
        return [c if c.startswith("%") else compile(c, "<stdin>", "exec", ast.PyCF_ONLY_AST, 1) for c in chunks]

    def _run(self, module) -> dict:
        body = module.body
        try:
            self.in_code = True
            if self.cancelled:  # cancelled after it was taken, before its code began
                raise KeyboardInterrupt
            for node in body[:-1]:
                exec(compile(ast.Module([node], []), "<stdin>", "exec"), self.namespace)
            for node in body[-1:]:
                exec(compile(ast.Interactive([node]), "<stdin>", "single"), self.namespace)
        except BaseException:  # noqa: BLE001 - the user's error (KeyboardInterrupt: a cancel) is the reply
            raise _Raised(sys.exc_info()) from None
        finally:
            self.in_code = False
        return {}

    def _magic(self, line: str) -> dict:
        name, _, rest = line[1:].partition(" ")
        if not name:
            raise UnknownMagic("magic command not specified")
        if name not in self.magics:
            raise UnknownMagic(f"unknown magic command '{name}'")
        return self.magics[name](*([rest] if rest else []))

    def _value(self, name: str):
        return self.namespace[name]

    def _json(self, name: str) -> dict:
        try:
            return {"application/json": self._value(name)}
        except KeyError:
            return error_reply(*sys.exc_info()[:2], None)

    def _matplot(self, name: str) -> dict:
        try:
            png = io.BytesIO()
            self._value(name).gcf().savefig(png, format="png")
        except Exception:  # noqa: BLE001 - whatever went wrong is the reply, as Livy's
            return error_reply(*sys.exc_info()[:2], None)
        return {"image/png": base64.b64encode(png.getvalue()).decode(), "text/plain": ""}

    def _table(self, name: str) -> dict:
        try:
            value = self._value(name)
        except KeyError:
            return error_reply(*sys.exc_info()[:2], None)
        rows = value if isinstance(value, (list, tuple)) else [value]
        headers: dict = {}
        data = []
        for row in rows:
            if type(row).__name__ == "Row":
                row = row.asDict()
            if not isinstance(row, (list, tuple, dict)):
                row = [row]
            cells = sorted(row.items()) if isinstance(row, dict) else enumerate(row)
            converted = []
            for key, cell in cells:
                kind, cell = _table_cell(cell)
                header = headers.setdefault(key, {"name": str(key), "type": kind})
                if kind != "NULL_TYPE" and header["type"] != kind:
                    if header["type"] != "NULL_TYPE":
                        return error_reply(Exception, Exception("table rows have different types"), None)
                    header["type"] = kind
                converted.append(cell)
            data.append(converted)
        return {TABLE: {"headers": [h for _, h in sorted(headers.items())], "data": data}}


class _Raised(Exception):
    def __init__(self, exc_info):
        self.exc_info = exc_info


def _table_cell(value) -> tuple[str, object]:
    if value is None:
        return "NULL_TYPE", None
    if isinstance(value, bool):
        return "BOOLEAN_TYPE", value
    if isinstance(value, int):
        return "INT_TYPE", value
    if isinstance(value, float):
        return "DOUBLE_TYPE", value
    if isinstance(value, datetime.datetime):
        return "TIMESTAMP_TYPE", str(value)
    if isinstance(value, datetime.date):
        return "DATE_TYPE", str(value)
    if isinstance(value, decimal.Decimal):
        return "DECIMAL_TYPE", str(value)
    if isinstance(value, (list, tuple)):
        return "ARRAY_TYPE", [_table_cell(v)[1] for v in value]
    if isinstance(value, dict):
        return "MAP_TYPE", {k: _table_cell(v)[1] for k, v in value.items()}
    return "STRING_TYPE", str(value)


def spark_namespace(conf: dict[str, str], name: str) -> dict:
    """The session's Spark driver, as Livy puts it in the namespace: `spark`, `sc`, `sqlContext`. Its settings are
    the cluster's defaults (the lab's, as spark-defaults.conf gives a cluster's: YARN, S3A, the metastore), then the
    session's own (Livy's POST /sessions `conf`, from sparkmagic's %%configure)."""
    from pyspark.sql import SparkSession, SQLContext

    from perfkit.config import load_profile

    profile = load_profile("lab-cluster")
    os.environ.update(profile.provider.spark_environment())
    defaults = {**profile.provider.spark_conf(profile), "spark.master": "yarn", "spark.submit.deployMode": "client"}
    builder = SparkSession.builder.appName(name)
    for key, value in {**defaults, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    return {"spark": spark, "sc": spark.sparkContext, "sqlContext": SQLContext(spark.sparkContext, spark)}


def main() -> None:
    """Serve one session: its settings as JSON in argv[1]; requests on stdin, replies on the stdout it started with
    (Spark's JVM and the user's prints are kept off that pipe: the process's fd 1 becomes its log)."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w")
    settings = json.loads(sys.argv[1])
    # without Spark only for the server's own tests (as Livy's LIVY_TEST): no YARN application, the same protocol
    if os.environ.get("PERFKIT_LIVY_NO_SPARK"):
        namespace = {"spark": None, "sc": None, "sqlContext": None}
    else:
        namespace = spark_namespace(settings["conf"], settings["name"])
    sc = namespace["sc"]
    replies.write(json.dumps({"ready": True, "appId": sc and sc.applicationId,
                              "sparkUiUrl": sc and sc.uiWebUrl}) + "\n")
    replies.flush()
    repl = Repl(namespace)
    signal.signal(signal.SIGINT, repl.interrupt)
    try:
        for line in sys.stdin:
            if line.strip():
                repl.take()
                replies.write(json.dumps({"started": True}) + "\n")  # from now on a cancel reaches this statement
                replies.flush()
                replies.write(json.dumps(repl.execute(json.loads(line)["code"]), default=str) + "\n")
                replies.flush()
    finally:
        if namespace["spark"] is not None:
            namespace["spark"].stop()


if __name__ == "__main__":
    main()
