"""One gzip member built from chunks compressed one by one, so a chunk is compressed only once.

A rendering is chunks: each family's header and its series lines. A chunk's deflate blocks are
made with a compressor of its own and flushed to a byte boundary, so the blocks of the chunks
of a rendering, laid end to end and closed by an empty final block, are one valid deflate
stream (RFC 1951: no block refers to bytes before its own chunk). An unchanged family keeps
its Chunk, and so its compressed bytes, and the text and OpenMetrics bodies share theirs.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

__all__ = ["Chunk", "gzip_of", "gzip_prefixed"]

# zlib's default level: gzip's 9 took three times the CPU for a body a tenth smaller.
_LEVEL = 6
# RFC 1952: deflate, no flags, no mtime (the same bytes for the same body), OS unknown.
_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_LAST_BLOCK = zlib.compressobj(_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS).flush()  # empty, final


class Chunk:
    """Bytes of the exposition and their deflate blocks, compressed when first asked for."""

    __slots__ = ("_deflated", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._deflated: bytes | None = None

    def deflated(self) -> bytes:
        """The data as raw deflate blocks, none of them final, ending on a byte boundary."""
        if self._deflated is None:
            compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
            # Benign if two threads race here: both compute the very same bytes.
            self._deflated = compressor.compress(self.data) + compressor.flush(zlib.Z_SYNC_FLUSH)
        return self._deflated


def gzip_of(chunks: Sequence[Chunk]) -> bytes:
    """One gzip member whose content is the chunks' data, in order."""
    crc, size = 0, 0
    for chunk in chunks:
        crc = zlib.crc32(chunk.data, crc)
        size += len(chunk.data)
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return b"".join([_HEADER, *(chunk.deflated() for chunk in chunks), _LAST_BLOCK, trailer])


def gzip_prefixed(chunks: Sequence[Chunk], member: bytes, data: bytes) -> bytes:
    """One gzip member of the chunks' data followed by `data`, whose own member is `member`.

    `member`'s deflate blocks are reused as they are (gzip_of ends every chunk on a byte
    boundary with no block referring back), so only the chunks are compressed, and the CRC
    continues over `data` rather than restarting.
    """
    crc, size = 0, 0
    for chunk in chunks:
        crc = zlib.crc32(chunk.data, crc)
        size += len(chunk.data)
    crc = zlib.crc32(data, crc)
    trailer = struct.pack("<II", crc, (size + len(data)) & 0xFFFFFFFF)
    body = member[len(_HEADER) : -8]  # its blocks and its final empty block
    return b"".join([_HEADER, *(chunk.deflated() for chunk in chunks), body, trailer])
