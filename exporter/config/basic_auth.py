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

__all__ = ["BasicAuth", "bcrypt_cost", "parse_basic_authorization"]


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


def bcrypt_cost(hashed: str) -> int:
    """The cost (log2 rounds) of a `$2y$NN$...` hash."""
    return int(hashed.split("$")[2])


def _decoy(cost: int) -> bytes:
    """A well-formed hash at `cost` whose password was random and discarded.

    Hashed at bcrypt's minimum cost and relabelled: checking against it still runs `cost`
    rounds, and building it costs nothing even when the users are hashed at cost 14.
    """
    cheap = bcrypt.hashpw(secrets.token_bytes(16), bcrypt.gensalt(4))
    return cheap[:4] + b"%02d" % cost + cheap[6:]


class BasicAuth:
    """Checks credentials against `user -> bcrypt hash`; safe to call from many threads.

    `quick` answers without bcrypt when it can (a credential accepted before, or a header that
    carries none), so a server can keep the slow checks in a lane of their own.
    """

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = {user: hashed.encode("ascii") for user, hashed in users.items()}
        # Checked when the user is unknown, at the users' own cost, so that the answer takes
        # as long as a wrong password and timing does not tell which user names exist. With
        # users at different costs, the highest: hash them alike (docs/security.md).
        self._decoy = _decoy(max((bcrypt_cost(h) for h in users.values()), default=10))
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

    def quick(self, authorization: str | None) -> bool | None:
        """True for a credential accepted before, False for a header without a credential,
        None when only a bcrypt round can tell (`allows` then decides)."""
        credentials = parse_basic_authorization(authorization)
        if credentials is None:
            return False
        user, password = credentials
        hashed = self._users.get(user)
        if hashed is None:
            return None
        digest = hmac.new(self._key, password, hashlib.sha256).digest()
        with self._cache_lock:
            cached = self._accepted.get((user, hashed))
        if cached is not None and hmac.compare_digest(cached, digest):
            return True
        return None

    def allows(self, authorization: str | None) -> bool:
        """Whether an `Authorization` header value names a configured user and its password."""
        known = self.quick(authorization)
        credentials = parse_basic_authorization(authorization)
        if known is not None or credentials is None:
            return bool(known)
        user, password = credentials
        hashed = self._users.get(user)
        if hashed is None:
            self._bcrypt(password, self._decoy)
            return False
        if not self._bcrypt(password, hashed):
            return False
        # At most one entry per configured user and hash: the cache cannot grow without bound.
        digest = hmac.new(self._key, password, hashlib.sha256).digest()
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
