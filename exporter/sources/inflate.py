"""A reply's body decompressed while it streams in, never past a size limit.

httpx inflates each network chunk whole: 64 KiB of gzip can become 64 MiB before anyone counts
it. Here the raw bytes are inflated a bounded step at a time, so a body is cut as soon as it
grows past its limit, whatever its compression ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from exporter.errors import UpstreamPayloadError, UpstreamTooLarge

__all__ = ["ACCEPT_ENCODING", "Inflater", "format_bytes"]

# What the exporter can inflate within a bound; anything else must come as identity.
ACCEPT_ENCODING = "gzip, deflate"
_STEP = 1 << 20  # bytes of output at a time


def format_bytes(size: float) -> str:
    """A size as the config spells it (64MiB, 512KiB or bytes)."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{int(size // factor)}{unit}"
    return f"{int(size)}B"


class Inflater:
    """Turns the raw chunks of one body into its content, counting against `limit` bytes."""

    def __init__(self, what: str, content_encoding: str | None, limit: float) -> None:
        codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise UpstreamPayloadError(f"{what}: unsupported Content-Encoding {content_encoding}")
        self._what = what
        self._coding = codings[0] if codings else None
        self._limit = limit
        self._size = 0
        self._started = False  # some input went in (a deflate body is zlib or raw by then)
        self._pending = False  # a compressed stream has begun and not ended
        self._z = self._decompressor()

    def _decompressor(self) -> zlib._Decompress:
        # deflate is meant to be zlib-wrapped; the first chunk tells if it came raw instead.
        return zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in (self._coding or "") else 0))

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The content in `raw`, in pieces; UpstreamTooLarge once past the limit."""
        if self._coding is None:
            yield self._counted(raw)
            return
        data = raw
        while True:
            # One byte past what is left, so that going over the limit is seen.
            room = int(min(_STEP, max(self._limit - self._size, 0) + 1))
            try:
                piece = self._z.decompress(data, room)
            except zlib.error:
                if self._coding == "deflate" and not self._started:
                    self._z, self._started = zlib.decompressobj(-zlib.MAX_WBITS), True
                    continue
                raise UpstreamPayloadError(
                    f"{self._what}: the {self._coding} body is corrupt"
                ) from None
            self._started = self._pending = True
            yield self._counted(piece)
            if self._z.eof:
                # Another gzip member may follow (RFC 1952 allows several).
                data, self._z, self._pending = self._z.unused_data, self._decompressor(), False
                if not data:
                    return
                continue
            data = self._z.unconsumed_tail
            if not data and len(piece) < room:
                return  # everything given is inflated; what is held back needs more input

    def finish(self) -> None:
        """Check the body did not end inside a compressed stream."""
        if self._pending:
            raise UpstreamPayloadError(f"{self._what}: the {self._coding} body ends early")

    def _counted(self, piece: bytes) -> bytes:
        self._size += len(piece)
        if self._size > self._limit:
            raise UpstreamTooLarge(
                f"{self._what}: the body is larger than max_response_size "
                f"({format_bytes(self._limit)}) after decompression; not read further"
            )
        return piece
