"""Hostile HTTP request heads: a fixed catalogue and a hypothesis strategy built around it.

Bad request lines, huge and numerous headers, duplicated or conflicting Content-Length,
obs-fold, NULs and other control bytes, non-ASCII, pipelined requests, truncated heads and
bodies that lie about their length; shared by the parser's fuzz test and the live listener's.
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["HOSTILE", "SCRAPE", "hostile_heads", "well_formed_heads"]

SCRAPE = b"GET /metrics HTTP/1.1\r\nHost: exporter:10290\r\nAccept: */*\r\n\r\n"

HOSTILE: tuple[bytes, ...] = (
    b"nonsense\r\n\r\n",
    b"GET /metrics\r\n\r\n",  # HTTP/0.9
    b"GET  /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /metrics HTTP/2.0\r\nHost: a\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n\r\n",  # no Host
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    b"G\x00T /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n",
    b"GET /m\xc3\xa9trics HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: \xff\xfe\r\nX-\xc3\xa9: 1\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\n\tfolded: too\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 2\r\n\r\nx",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nshort",  # body cut
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
    b"0\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"4000\r\n"
    + b"x" * 0x4000
    + b"\r\n" * 2,  # a chunk past the body bound
    b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"y" * 40_000 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\n" + b"A: b\r\n" * 101 + b"\r\n",
    b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: a\r\n\r\n",
    b"\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /metrics HTTP/1.1\nHost: a\n\n",  # bare LF
    b"GET /metrics HTTP/1.1\rHost: a\r\r",  # bare CR
    SCRAPE + SCRAPE + b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",  # pipelined
    SCRAPE[:-2],  # truncated: no empty line
    SCRAPE[:9],
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS hello on the plain port
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",  # HTTP/2's preface
)

_VALID_HEADERS = (
    b"Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
    b"Accept-Encoding: gzip",
    b"Authorization: Basic cHJvbWV0aGV1czpzY3JhcGUtbWU=",
    b"User-Agent: Prometheus/3.0.0",
    b"X-Prometheus-Scrape-Timeout-Seconds: 10",
    b"Connection: keep-alive",
)
_NASTY_BYTES = (b"\x00", b"\r", b"\n", b" ", b"\t", b":", b"\xff", b"\xc3\xa9", b"\x7f", b",")


@st.composite
def well_formed_heads(draw: st.DrawFn) -> bytes:
    """A request a scraper or a browser could send: any path, a Host, some usual headers."""
    method = draw(st.sampled_from([b"GET", b"HEAD", b"POST", b"OPTIONS"]))
    path = draw(st.from_regex(rb"\A/[a-zA-Z0-9._~%/-]{0,40}(\?[a-z0-9=&]{0,20})?\Z"))
    version = draw(st.sampled_from([b"HTTP/1.1", b"HTTP/1.0"]))
    headers = draw(st.lists(st.sampled_from(_VALID_HEADERS), max_size=6))
    lines = [b" ".join((method, path, version)), b"Host: exporter", *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _mutate(draw: st.DrawFn, head: bytes) -> bytes:
    """One hostile change to a head: a byte inserted, a cut, a header grown or repeated."""
    kind = draw(st.sampled_from(["insert", "cut", "grow", "repeat", "pipeline", "replace"]))
    at = draw(st.integers(0, len(head)))
    if kind == "insert":
        return head[:at] + draw(st.sampled_from(_NASTY_BYTES)) + head[at:]
    if kind == "cut":
        return head[:at]
    if kind == "grow":
        size = draw(st.integers(1, 24_000))
        return head[:-2] + b"X-Big: " + b"y" * size + b"\r\n\r\n"
    if kind == "repeat":
        line = draw(st.sampled_from([b"Content-Length: 0", b"Host: b", b"Content-Length: 5"]))
        count = draw(st.integers(1, 120))
        return head[:-2] + (line + b"\r\n") * count + b"\r\n"
    if kind == "pipeline":
        return head + draw(st.sampled_from(HOSTILE))
    return head[:at] + draw(st.binary(max_size=64)) + head[at + 1 :]


@st.composite
def hostile_heads(draw: st.DrawFn) -> bytes:
    """A catalogued hostile head, random bytes, or a well-formed head mutated once or more."""
    base = draw(
        st.one_of(
            st.sampled_from(HOSTILE),
            st.binary(max_size=512),
            well_formed_heads(),
        )
    )
    for _ in range(draw(st.integers(0, 3))):
        base = _mutate(draw, base)
    return base
