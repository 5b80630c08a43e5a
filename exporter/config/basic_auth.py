"""HTTP basic auth against bcrypt hashes, caching successful checks without keeping passwords."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import threading
from collections.abc import Mapping

import bcrypt

__all__ = ["BasicAuth", "parse_basic_authorization"]

# Checked when the user is unknown, so that the answer takes a bcrypt round either way and
# timing does not tell which user names exist. The password behind it was random and discarded.
_DECOY_HASH = b"$2b$10$xup1L.yysAgXq5smz/jMSer3Ut/IyuOvFsHKvloDyj0g9zR7uVcpy"


def parse_basic_authorization(header: str | None) -> tuple[str, bytes] | None:
    """Split an `Authorization: Basic ...` header into user and password, or None."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True)
        user, sep, password = decoded.partition(b":")
        if not sep:
            return None
        return user.decode("utf-8"), password
    except (binascii.Error, UnicodeDecodeError):
        return None


class BasicAuth:
    """Checks credentials against `user -> bcrypt hash`; safe to call from many threads."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = {user: hashed.encode("ascii") for user, hashed in users.items()}
        # The cache holds a keyed digest of each accepted password, never the password: with a
        # per-process random key a dump of the cache cannot be brute-forced faster than bcrypt.
        self._key = secrets.token_bytes(32)
        self._accepted: dict[tuple[str, bytes], bytes] = {}
        self._cache_lock = threading.Lock()
        # bcrypt is deliberately CPU-heavy: one round at a time keeps a burst of bad passwords
        # from taking every core.
        self._bcrypt_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"BasicAuth(users={sorted(self._users)})"

    def allows(self, authorization: str | None) -> bool:
        """Whether an `Authorization` header value names a configured user and its password."""
        credentials = parse_basic_authorization(authorization)
        if credentials is None:
            return False
        user, password = credentials
        hashed = self._users.get(user)
        if hashed is None:
            self._bcrypt(password, _DECOY_HASH)
            return False
        digest = hmac.new(self._key, password, hashlib.sha256).digest()
        with self._cache_lock:
            cached = self._accepted.get((user, hashed))
        if cached is not None and hmac.compare_digest(cached, digest):
            return True
        if not self._bcrypt(password, hashed):
            return False
        # At most one entry per configured user and hash: the cache cannot grow without bound.
        with self._cache_lock:
            self._accepted[(user, hashed)] = digest
        return True

    def _bcrypt(self, password: bytes, hashed: bytes) -> bool:
        with self._bcrypt_lock:
            try:
                return bcrypt.checkpw(password, hashed)
            except ValueError:
                # bcrypt refuses passwords over 72 bytes rather than truncating them.
                return False
