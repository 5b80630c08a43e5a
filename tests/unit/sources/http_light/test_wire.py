"""Responses read off a scripted stream: every framing, heads split anywhere, hostile heads."""

from __future__ import annotations

import itertools

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.sources.http_light.wire import DISCONNECTED, MAX_HEAD, Head, ResponseReader
from tests.support.properties import examples
from tests.support.scripted_http import Script, ScriptedStream

BODY = b'# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\nDCGM_FI_DEV_GPU_UTIL{gpu="0"} 7\n'


def _read(*steps: bytes | BaseException) -> tuple[Head, bytes, ResponseReader]:
    reader = ResponseReader(ScriptedStream(Script(list(steps))), lambda: 1.0)
    head = reader.head()
    return head, b"".join(reader.body(head)), reader


def _split(data: bytes, at: list[int]) -> list[bytes]:
    cuts = sorted({0, len(data), *(min(a, len(data)) for a in at)})
    return [data[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def _chunked(body: bytes, sizes: list[int], extension: bytes = b"") -> bytes:
    out, at = b"", 0
    for size in [*sizes, len(body)]:
        piece = body[at : at + size]
        if piece:
            out += b"%x%s\r\n%s\r\n" % (len(piece), extension, piece)
        at += len(piece)
    return out + b"0\r\n\r\n"


def test_a_sized_body_with_its_head_one_byte_a_read() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)
    head, body, reader = _read(*(answer[i : i + 1] for i in range(len(answer))))
    assert (head.status, head.reason, head.minor) == (200, "OK", 1)
    assert body == BODY and reader.reusable


def test_a_chunked_body_with_extensions_and_trailers_as_go_and_others_send_it() -> None:
    framed = _chunked(BODY, [3, 17], extension=b';name="v; x"') + b""
    framed = framed[:-2] + b"Expires: never\r\n\r\n"  # a trailer field before the end
    answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n" + framed
    head, body, reader = _read(*_split(answer, [5, 40, 41, 90]))
    assert head.headers["transfer-encoding"] == "Chunked"
    assert body == BODY and reader.reusable


def test_connection_close_and_http_1_0_are_not_kept() -> None:
    sized = b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY)
    assert not _read(b"HTTP/1.1 200 OK\r\nConnection: close\r\n" + sized)[2].reusable
    assert not _read(b"HTTP/1.0 200 OK\r\n" + sized)[2].reusable


def test_without_a_length_the_body_runs_to_the_end_of_the_stream() -> None:
    _, body, reader = _read(b"HTTP/1.1 200 OK\r\n\r\n", BODY[:10], BODY[10:])
    assert body == BODY and not reader.reusable


def test_bare_line_feeds_an_obsolete_fold_and_a_missing_reason_are_read() -> None:
    answer = b"HTTP/1.1 200\nX-Long: one\n  two\nContent-Length: 2\nX-Long: three\n\nok"
    head, body, _ = _read(answer)
    assert head.reason == "" and body == b"ok"
    assert head.headers["x-long"] == "one two, three"


def test_informational_heads_are_skipped_and_a_protocol_switch_refused() -> None:
    informational = b"HTTP/1.1 100 Continue\r\n\r\n"
    head, body, _ = _read(informational + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    assert (head.status, body) == (200, b"ok")
    with pytest.raises(httpx.RemoteProtocolError, match="101"):
        _read(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n")


def test_no_body_after_204_and_both_framings_read_as_chunked_never_kept() -> None:
    _, body, reader = _read(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
    assert body == b"" and reader.reusable
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
    _, body, reader = _read(answer + _chunked(BODY, []))
    assert body == BODY and not reader.reusable


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (b"", DISCONNECTED),
        (b"HTTP/1.1 200 OK\r\nContent-", "inside the response head"),
        (b"HTTP/2 200 OK\r\n\r\n", "not HTTP/1.0 or HTTP/1.1"),
        (b"ICY 200 OK\r\n\r\n", "not HTTP/1.0 or HTTP/1.1"),
        (b"HTTP/1.1 20 OK\r\n\r\n", "not HTTP/1.0 or HTTP/1.1"),
        (b"HTTP/1.1 200 O\rK\r\n\r\n", "not HTTP/1.0 or HTTP/1.1"),
        (b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "token"),
        (b"HTTP/1.1 200 OK\r\nNo-Colon\r\n\r\n", "token"),
        (b"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n", "control character"),
        (b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "control character"),
        (b"HTTP/1.1 200 OK\r\n folded: onto nothing\r\n\r\n", "folds onto nothing"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok", "conflicting"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok", "received 2 bytes, expected 5"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "unsupported"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", "size line"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX", "CRLF"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nok", "expected 5"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", "incomplete"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"x" * MAX_HEAD, "larger than 100 KiB"),
    ],
)
def test_a_hostile_or_broken_answer_is_a_protocol_error(answer: bytes, says: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError) as caught:
        _read(*_split(answer, [7, 4096, 65536]))
    assert says in str(caught.value)


def test_an_error_while_reading_is_the_streams_own() -> None:
    with pytest.raises(httpx.ReadTimeout):
        _read(b"HTTP/1.1 200 OK\r\n", httpx.ReadTimeout("timed out"))


def test_bytes_after_the_body_keep_the_connection_from_reuse() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"
    _, body, reader = _read(answer)
    assert body == b"ok" and not reader.reusable


@settings(max_examples=examples(200))
@given(
    body=st.binary(max_size=3000),
    framing=st.sampled_from(["length", "chunked", "close"]),
    sizes=st.lists(st.integers(1, 700), max_size=6),
    cuts=st.lists(st.integers(0, 4000), max_size=12),
    pad=st.sampled_from([b"", b"Date: Fri, 04 Dec 2026 08:00:00 GMT\r\n", b"X: y\r\n" * 40]),
)
def test_any_body_in_any_framing_split_anywhere_reads_back_whole(
    body: bytes, framing: str, sizes: list[int], cuts: list[int], pad: bytes
) -> None:
    if framing == "length":
        answer = b"HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s" % (pad, len(body), body)
    elif framing == "chunked":
        answer = b"HTTP/1.1 200 OK\r\n%sTransfer-Encoding: chunked\r\n\r\n" % pad
        answer += _chunked(body, sizes)
    else:
        answer = b"HTTP/1.1 200 OK\r\n%s\r\n%s" % (pad, body)
    _, got, reader = _read(*_split(answer, cuts))
    assert got == body
    assert reader.reusable is (framing != "close")
