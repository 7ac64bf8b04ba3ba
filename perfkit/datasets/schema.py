"""The columns of a user's ORC or Parquet files, read from one file's footer, as Hive types for every engine's DDL."""
from __future__ import annotations

import pyarrow as pa

from perfkit.errors import PerfkitError, shorten

FORMATS = {".orc": "orc", ".parquet": "parquet", ".parq": "parquet"}


def hive_type(arrow: pa.DataType) -> str:
    """The Hive (and Spark) type name of an Arrow type; Trino's engine maps the few it spells otherwise."""
    simple = [(pa.types.is_boolean, "boolean"), (pa.types.is_int8, "tinyint"), (pa.types.is_int16, "smallint"),
              (pa.types.is_int32, "int"), (pa.types.is_int64, "bigint"), (pa.types.is_float32, "float"),
              (pa.types.is_float64, "double"), (pa.types.is_date, "date"), (pa.types.is_timestamp, "timestamp"),
              (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary")]
    for check, name in simple:
        if check(arrow):
            return name
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return f"array<{hive_type(arrow.value_type)}>"
    if pa.types.is_map(arrow):
        return f"map<{hive_type(arrow.key_type)},{hive_type(arrow.item_type)}>"
    if pa.types.is_struct(arrow):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type)}" for f in arrow) + ">"
    raise PerfkitError(f"column type {arrow} has no Hive equivalent perfkit knows: cast that column in the files, "
                       "or leave it out of the table")


def columns_of(schema: pa.Schema) -> list[tuple[str, str]]:
    return [(field.name, hive_type(field.type)) for field in schema]


def read_schema(source, file_format: str) -> pa.Schema:
    """The schema in the footer of one file; `source` is a path or a seekable file (only the footer is read)."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    try:
        return orc.ORCFile(source).schema if file_format == "orc" else pq.read_schema(source)
    except (pa.ArrowInvalid, OSError) as err:
        raise PerfkitError(f"{getattr(source, 'name', source)} is not a readable {file_format.upper()} file "
                           f"({shorten(' '.join(str(err).split()), 200)})") from None


def read_rows(source, file_format: str) -> int:
    """The row count in the footer of one file (ORC's file footer, Parquet's metadata): no row is read."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    try:
        return orc.ORCFile(source).nrows if file_format == "orc" else pq.ParquetFile(source).metadata.num_rows
    except (pa.ArrowInvalid, OSError) as err:
        raise PerfkitError(f"{getattr(source, 'name', source)} is not a readable {file_format.upper()} file "
                           f"({shorten(' '.join(str(err).split()), 200)})") from None


def format_of(names: list[str], where: str) -> str:
    """The one format of a location's data files, by extension; mixed formats or none are refused."""
    found = {FORMATS[ext] for name in names if (ext := _ext(name)) in FORMATS}
    if not found:
        raise PerfkitError(f"{where} holds no .orc or .parquet file: give a location of ORC or Parquet files "
                           "(or say its format)")
    if len(found) > 1:
        raise PerfkitError(f"{where} mixes formats ({', '.join(sorted(found))}): an engine reads one format per "
                           "table. Fix: point at a folder of one format")
    return found.pop()


def _ext(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > name.rfind("/") else ""
