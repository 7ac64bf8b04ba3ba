"""Replace a file whole or not at all: a reader sees the old content or the new one, never half a file.

Every write goes through a temporary file beside the target whose name is unique to that write, so two
processes writing the same file at once (two runs generating the same dataset) each move a complete file
into place; with a fixed temporary name one would rename the other's file away from under it.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

SHARED = 0o666  # less the umask, as for any file the user makes: 0644 under the usual umask 022
PRIVATE = 0o600  # secrets: never readable by others, not even for an instant
ENCODING = "utf-8"  # explicit: the same bytes whatever the locale


@contextlib.contextmanager
def replacing(path: Path | str, mode: int = SHARED) -> Iterator[Path]:
    """A new empty temporary file beside `path` for the block to fill (by name: any writer that takes a path);
    when the block ends it is flushed to disk and moved over `path`. On any failure (a full disk, Ctrl-C) the old
    file stays as it was and the temporary file is removed.

    The file is created exclusively with `mode` and the kernel applies the umask (tempfile.mkstemp would make it
    0600 always, and reading the umask to correct that means setting it, process-wide)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_unique(path, mode)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)  # on disk before the rename: after a crash the name holds the old file or the whole new one
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: Path | str, text: str, mode: int = SHARED) -> Path:
    """Replace `path` with `text`, UTF-8 encoded; mode=PRIVATE for a file that holds secrets."""
    return write_bytes(path, text.encode(ENCODING), mode)


def write_bytes(path: Path | str, data: bytes, mode: int = SHARED) -> Path:
    with replacing(path, mode) as tmp, open(tmp, "wb") as out:
        out.write(data)
    return Path(path)


def copy_file(source: Path | str, path: Path | str, mode: int = SHARED) -> Path:
    """Replace `path` with a copy of the file `source` (its bytes; not its mode or times)."""
    with replacing(path, mode) as tmp:
        shutil.copyfile(source, tmp)
    return Path(path)


def _create_unique(path: Path, mode: int, attempts: int = 100) -> Path:
    for _ in range(attempts):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
            return tmp
        except FileExistsError:  # 48 random bits: only ever a leftover of a killed writer
            continue
    raise FileExistsError(f"no unused temporary name beside {path} after {attempts} tries")
