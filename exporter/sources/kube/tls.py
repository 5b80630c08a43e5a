"""TLS towards the API server: its CA and the client's certificate, from files or inline PEM.

Each file or data value that cannot be used is a config error naming where it was given (the
kubeconfig's file, line and key, or the exporter's own key) and, for a file, the file.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass

from exporter.files import read_regular_file
from exporter.sources.kube.kubeconfig import MAX_PEM_BYTES, Located

__all__ = ["Trust", "context", "load_pair"]


@dataclass(frozen=True)
class Trust:
    """The CA to verify the API server with, and the client certificate to show it."""

    ca: tuple[Located, str | bytes] | None = None
    cert: tuple[Located, str | bytes] | None = None
    key: tuple[Located, str | bytes] | None = None


def context(trust: Trust) -> ssl.SSLContext:
    """A verifying context: the given CA (the system's when none), and the client pair."""
    if trust.ca is None:
        result = ssl.create_default_context()
    else:
        where, value = trust.ca
        result = _with_ca(where, value)
    if trust.cert is not None and trust.key is not None:
        (cert_at, cert), (key_at, key) = trust.cert, trust.key
        cert_pem = cert if isinstance(cert, bytes) else _read(cert_at, cert)
        key_pem = key if isinstance(key, bytes) else _read(key_at, key)
        try:
            load_pair(result, cert_pem, key_pem)
        except ssl.SSLError as exc:
            raise cert_at.error(
                f"the client certificate and key do not load: {exc.reason}"
            ) from None
    return result


def _with_ca(where: Located, value: str | bytes) -> ssl.SSLContext:
    if isinstance(value, bytes):
        try:
            return ssl.create_default_context(cadata=value.decode("ascii"))
        except (UnicodeDecodeError, ssl.SSLError):
            raise where.error("the CA data is not a PEM certificate") from None
    pem = _read(where, value)
    try:
        return ssl.create_default_context(cadata=pem.decode("ascii"))
    except (UnicodeDecodeError, ssl.SSLError):
        raise where.error(f"the CA file {value} is not a PEM certificate") from None


def _read(where: Located, file: str) -> bytes:
    try:
        return read_regular_file(file, MAX_PEM_BYTES)  # never a FIFO, which would never end
    except OSError as exc:
        raise where.error(f"cannot read {file}: {exc.strerror or exc}") from None


def load_pair(target: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """Load a PEM certificate and key into `target`: ssl reads only files, so they are written
    to a private directory for the call and removed at once."""
    with tempfile.TemporaryDirectory(prefix="kube-tls-") as folder:  # mode 0700
        cert_file, key_file = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
        for file, data in ((cert_file, cert), (key_file, key)):
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        target.load_cert_chain(cert_file, key_file)
