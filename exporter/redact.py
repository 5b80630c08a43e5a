"""One redaction of every known secret, for what quotes text: log records, errors and metrics.

Upstream bodies are parsed as they came: a secret that also reads as data (a token that is a
word a body holds) must never rewrite another source's figures, so only text on its way out
is redacted. A secret shorter than MIN_SECRET_LENGTH cannot be told apart from data at all,
and is refused.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from collections import deque
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "RedactingFilter",
    "forget",
    "install",
    "redact",
    "register",
]

MASK = "<redacted>"
# API keys and bearer tokens are far longer (a LiteLLM key is ~25 characters, a service-account
# token ~1 KiB); anything shorter than this reads like a word, a name or a number in the data,
# and masking it would mask those wherever they are quoted.
MIN_SECRET_LENGTH = 16
# A rotating token (a projected service-account token) is registered again on every change;
# the previous few stay redacted, since an old token may still be valid and echoed back.
_KEPT_PER_NAME = 4


def _forms(secret: str) -> set[str]:
    """The ways a secret shows up in text: as is, escaped by repr or JSON, URL- or base64-encoded.

    A secret with an inner line break (a pasted key) also leaks line by line, so each line is a
    form of its own.
    """
    raw = secret.encode()
    forms = {
        secret,
        repr(secret)[1:-1],
        repr(raw)[2:-1],  # how h11 quotes a header value it refuses
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
    }
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode()
        forms |= {text, text.rstrip("=")}
    lines = [line.strip() for line in secret.splitlines()]
    if len(lines) > 1:
        # A shorter line would mask common words, and leaks little.
        forms |= {line for line in lines if len(line) >= MIN_SECRET_LENGTH}
    return {form for form in forms if form}


class _Registry:
    """The secrets the clients hold, by name, and one pattern matching any of their forms."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, deque[str]] = {}
        # The pattern and its forms, swapped as one so a reader never mixes two generations.
        self._compiled: tuple[re.Pattern[str] | None, tuple[str, ...]] = (None, ())

    def register(self, name: str, secret: str) -> None:
        """Redact `secret` (and its encodings) from now on; `name` groups a rotating secret.

        ValueError for a secret shorter than MIN_SECRET_LENGTH: credentials.check_secret
        refuses those where they are read, naming the file or variable.
        """
        if not secret:
            return
        if len(secret) < MIN_SECRET_LENGTH:
            message = f"a secret shorter than {MIN_SECRET_LENGTH} characters ({name})"
            raise ValueError(message)
        with self._lock:
            kept = self._values.setdefault(name, deque(maxlen=_KEPT_PER_NAME))
            if secret in kept:
                return
            kept.append(secret)
            self._compile()

    def forget(self, name: str) -> None:
        """Stop redacting the secrets registered under `name` (tests start clean with it)."""
        with self._lock:
            self._values.pop(name, None)
            self._compile()

    def _compile(self) -> None:
        forms = {form for kept in self._values.values() for s in kept for form in _forms(s)}
        # Longest first, so a secret's base64 is not cut by a shorter secret inside it.
        alternatives = sorted(forms, key=lambda form: (-len(form), form))
        pattern = re.compile("|".join(map(re.escape, alternatives))) if forms else None
        self._compiled = (pattern, tuple(alternatives))

    def redact(self, text: str) -> str:
        """`text` with every form of every registered secret replaced by MASK."""
        pattern, forms = self._compiled
        # Substring search is about ten times faster than the alternation over clean text,
        # which is nearly all text.
        if pattern is None or not any(form in text for form in forms):
            return text
        return pattern.sub(MASK, text)


_REGISTRY = _Registry()
register = _REGISTRY.register
forget = _REGISTRY.forget
redact = _REGISTRY.redact


class RedactingFilter(logging.Filter):
    """Rewrites a record's message, traceback and stack with the secrets redacted.

    The record is rendered once here (message with its arguments, exception text), so every
    handler after this filter, and any formatter, only ever sees the redacted text.
    """

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact in place; never drops a record."""
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string must still not leak its args
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Put one RedactingFilter on `logger` (the root by default) and on each of its handlers.

    A logger's own filters only see records logged to it, not those its children propagate;
    a handler's filters see every record it writes, so both are needed.
    """
    target = logger or logging.getLogger()
    for filterer in (target, *target.handlers):
        if not any(isinstance(f, RedactingFilter) for f in filterer.filters):
            filterer.addFilter(RedactingFilter())
