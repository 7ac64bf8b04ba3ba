"""Replace a file whole or not at all: a reader sees the old content or the new one, never half a file."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_text(path: Path | str, text: str, mode: int = 0o644) -> Path:
    """Write `text` (UTF-8) to `path` whole or not at all, and give it `mode`.

    The temporary file is created exclusively and 0600 (mkstemp), so with mode=0o600 a secret is never readable by
    others, not even for an instant. On any failure (a full disk, Ctrl-C) the old file stays as it was and the
    temporary file is removed."""
    return _replace(path, lambda out: out.write(text.encode("utf-8")), mode)


def write_bytes(path: Path | str, data: bytes, mode: int = 0o644) -> Path:
    return _replace(path, lambda out: out.write(data), mode)


def copy_file(source: Path | str, path: Path | str, mode: int = 0o644) -> Path:
    def fill(out):
        with open(source, "rb") as data:
            shutil.copyfileobj(data, out, 8 << 20)

    return _replace(path, fill, mode)


def _replace(path: Path | str, fill, mode: int) -> Path:
    """fill(binary file) writes a temporary file beside `path` (a unique name: concurrent writers never share
    one), which is fsynced, given `mode` and moved over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
