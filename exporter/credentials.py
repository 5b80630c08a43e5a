"""Secrets from environment variables and files, checked so they can only end up in a header."""

from __future__ import annotations

import os
import re

from pydantic import SecretStr

from exporter.files import read_regular_file
from exporter.redact import MIN_SECRET_LENGTH

__all__ = ["MAX_SECRET_BYTES", "check_secret", "read_secret", "read_secret_file"]

MAX_SECRET_BYTES = 64 * 1024  # a service-account token is about 1 KiB
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def read_secret(env: str | None, file: str | None) -> SecretStr:
    """Read a secret from an environment variable or a file; the value is never logged."""
    if env is not None:
        value = os.environ.get(env)
        if not value:
            raise ValueError(f"environment variable {env} is not set")
        return SecretStr(check_secret(value, f"environment variable {env}"))
    if file is not None:
        return SecretStr(read_secret_file(file))
    raise ValueError("no secret configured")


def read_secret_file(file: str) -> str:
    """Read and check the secret in a file (an API key, a bearer token), refusing odd content."""
    try:
        raw = read_regular_file(file, MAX_SECRET_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read secret file {file}: {exc.strerror}") from None
    if len(raw) > MAX_SECRET_BYTES:
        raise ValueError(f"secret file {file} is larger than {MAX_SECRET_BYTES // 1024} KiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        # The decoder's message quotes the offending byte: a piece of the secret.
        raise ValueError(f"secret file {file} is not UTF-8 text") from None
    return check_secret(text, f"secret file {file}")


def check_secret(value: str, where: str) -> str:
    """The secret without surrounding whitespace, if it can travel in an HTTP header and be
    told apart from data.

    An inner newline or NUL would otherwise fail inside httpx with the whole header (the
    secret) in the error message; a short secret (`gpu`, `total`) would be masked wherever a
    log line, an error or a metric quotes that word. The errors raised here never quote the
    value.
    """
    value = value.strip()
    if not value:
        raise ValueError(f"{where} is empty")
    if _CONTROL.search(value):
        raise ValueError(
            f"{where} contains a control character (a newline, NUL or similar) inside the "
            "secret; refusing to send it"
        )
    if not value.isascii():
        raise ValueError(f"{where} contains a non-ASCII character; HTTP headers carry ASCII")
    if len(value) < MIN_SECRET_LENGTH:
        raise ValueError(
            f"{where} is too short ({len(value)} characters, at least {MIN_SECRET_LENGTH}): "
            "a secret that short cannot be told apart from the data it would be masked in"
        )
    return value
