"""The redaction of known secrets: their encodings, rotation, and the logging filter."""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from exporter import redact
from exporter.errors import UpstreamPayloadError, UpstreamStatusError
from exporter.redact import MASK, RedactingFilter

SECRET = "sk-Zq7/x+9=tok-4812"


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    redact.register("test secret", SECRET)
    yield
    redact.forget("test secret")
    redact.forget("rotating")


@pytest.mark.parametrize(
    "form",
    [
        SECRET,
        quote(SECRET, safe=""),
        SECRET.replace("/", "%2F").replace("+", "%2B").replace("=", "%3D"),
        base64.b64encode(SECRET.encode()).decode(),
        base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
    ],
)
def test_every_form_of_a_secret_is_masked(form: str) -> None:
    assert redact.redact(f"before {form} after") == f"before {MASK} after"


def test_a_secret_with_an_inner_newline_is_masked_whole_escaped_and_by_line() -> None:
    pasted = "sk-first-half-0001\nsecond-half-99-0002"
    redact.register("rotating", pasted)
    assert redact.redact(f"value {pasted}!") == f"value {MASK}!"
    # How h11 quotes the header value it refuses, and how repr() and JSON show it.
    assert MASK in redact.redact(repr(f"Bearer {pasted}".encode()))
    assert "second-half-99-0002" not in redact.redact(repr(pasted))
    assert redact.redact("only sk-first-half-0001 leaked") == f"only {MASK} leaked"


def test_text_without_secrets_is_unchanged() -> None:
    text = "kueue: HTTP 500 from /apis: etcdserver: request timed out"
    assert redact.redact(text) == text


def test_a_rotated_token_stays_masked_for_a_while() -> None:
    tokens = [f"rotating-token-{n:02d}" for n in range(6)]
    for token in tokens:
        redact.register("rotating", token)
    assert MASK in redact.redact(tokens[-1]) and MASK in redact.redact(tokens[-4])
    assert redact.redact(tokens[0]) == tokens[0]  # only the last few are kept


def test_upstream_errors_are_redacted_when_built() -> None:
    assert SECRET not in str(UpstreamStatusError(f"HTTP 500: token {SECRET} rejected", 500))
    assert str(UpstreamPayloadError(f"got {SECRET!r}")) == f"got '{MASK}'"


def _logger() -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("tests.redact")
    logger.handlers, logger.propagate = [handler], False
    logger.setLevel(logging.DEBUG)
    redact.install(logger)
    return logger, out


def test_the_filter_masks_arguments_tracebacks_and_stacks() -> None:
    logger, out = _logger()
    logger.debug("header %s=%r", "Authorization", f"Bearer {SECRET}")
    try:
        raise ValueError(f"bad value {SECRET}")
    except ValueError:
        logger.exception("failed with %s", SECRET)
    text = out.getvalue()
    assert SECRET not in text
    assert text.count(MASK) == 3  # the header, the message, the exception text
    assert "ValueError: bad value <redacted>" in text
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "m", None, None, sinfo=SECRET)
    assert RedactingFilter().filter(record) and record.stack_info == MASK


def test_a_bad_format_string_still_does_not_leak() -> None:
    logger, out = _logger()
    logger.warning("no placeholder", SECRET)
    assert SECRET not in out.getvalue()


def test_install_is_idempotent_and_covers_handlers() -> None:
    logger, _ = _logger()
    redact.install(logger)
    for filterer in (logger, *logger.handlers):
        assert sum(isinstance(f, RedactingFilter) for f in filterer.filters) == 1


def test_a_secret_too_short_to_tell_from_data_is_never_registered() -> None:
    with pytest.raises(ValueError, match="shorter than 16"):
        redact.register("rotating", "gpu")
    assert redact.redact("gpu cost 125.47") == "gpu cost 125.47"


def test_only_lines_long_enough_to_tell_from_data_are_forms_of_a_pasted_secret() -> None:
    redact.register("rotating", "sk-live-0123456789\nabc")
    assert redact.redact("abc def") == "abc def"
    assert redact.redact("x sk-live-0123456789 y") == f"x {MASK} y"
