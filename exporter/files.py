"""Reading the exporter's own files (config, secrets, certificates) without ever blocking on one.

Opening a FIFO for reading waits for a writer, forever: a config or token path replaced by one
would wedge a reload or a refresh for good. These open without blocking and refuse anything
that is not a regular file, with an OSError whose `strerror` says what it is.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["check_regular_file", "read_regular_file"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _refuse(mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    raise OSError(errno.EINVAL, f"{kind}, not a regular file")


def read_regular_file(path: str, limit: int) -> bytes:
    """Up to `limit` bytes of the regular file at `path` (symbolic links followed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        _refuse(os.fstat(fd).st_mode)
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_regular_file(path: str) -> None:
    """Raise OSError unless `path` is a regular file, before a library opens it itself."""
    _refuse(os.stat(path).st_mode)
