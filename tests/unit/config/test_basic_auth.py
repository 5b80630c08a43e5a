"""Basic auth's two speeds: answers without bcrypt where it can, and an unknown user's price."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import pytest

from exporter.config.basic_auth import BasicAuth, bcrypt_cost
from exporter.config.web import load_web_config


def _header(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _hash(password: str, cost: int) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(cost)).decode()


def test_quick_answers_what_needs_no_bcrypt() -> None:
    auth = BasicAuth({"prometheus": _hash("right", 4)})
    assert auth.quick(None) is False
    assert auth.quick("Bearer x") is False
    assert auth.quick(_header("prometheus", "right")) is None  # not accepted yet
    assert auth.quick(_header("nobody", "right")) is None  # as slow as a wrong password
    assert auth.allows(_header("prometheus", "right"))
    assert auth.quick(_header("prometheus", "right")) is True
    assert auth.quick(_header("prometheus", "wrong")) is None


# The modular crypt format: variant, two-digit cost, 22 characters of salt and 31 of hash.
BCRYPT_SHAPE = re.compile(r"^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$")


@dataclass(frozen=True)
class Check:
    """One bcrypt.checkpw call: the hash it was given, and whether bcrypt ran its rounds."""

    hashed: bytes
    ran: bool

    @property
    def cost(self) -> int:
        return bcrypt_cost(self.hashed.decode())


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[Check]:
    """Record every bcrypt check; one bcrypt refuses as malformed has run no rounds at all."""
    checks: list[Check] = []
    checkpw = bcrypt.checkpw

    def spy(password: bytes, hashed: bytes) -> bool:
        try:
            result = checkpw(password, hashed)
        except ValueError:
            checks.append(Check(hashed, ran=False))
            raise
        checks.append(Check(hashed, ran=True))
        return result

    monkeypatch.setattr(bcrypt, "checkpw", spy)
    return checks


@pytest.mark.parametrize("cost", [4, 6])
@pytest.mark.parametrize("variant", ["2b", "2y"])
def test_an_unknown_user_is_checked_like_a_wrong_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cost: int, variant: str
) -> None:
    """Timing must not tell which user names exist: an unknown user costs a full bcrypt check
    against a decoy hash of the users' own cost, as a wrong password costs one against the
    user's hash. Read through the web config, as the server gets its checker (whose `quick`
    leaves both cases to `allows`, on the bcrypt lane)."""
    real = f"${variant}$" + _hash("right", cost).removeprefix("$2b$")
    web = tmp_path / "web.yml"
    web.write_text(f"basic_auth_users:\n  prometheus: '{real}'\n", encoding="utf-8")
    auth = load_web_config(str(web)).auth
    assert auth is not None
    checks = _spy(monkeypatch)

    assert auth.quick(_header("prometheus", "wrong")) is None
    assert auth.quick(_header("mallory", "wrong")) is None
    assert not auth.allows(_header("prometheus", "wrong"))
    assert not auth.allows(_header("mallory", "wrong"))
    assert not auth.allows(_header("eve", "right"))

    wrong_password, *unknown_users = checks
    assert wrong_password == Check(real.encode(), ran=True)
    assert len(unknown_users) == 2
    for decoy in unknown_users:
        assert decoy.ran, "bcrypt refused the decoy without running its rounds"
        assert BCRYPT_SHAPE.match(decoy.hashed.decode()), decoy.hashed
        assert decoy.cost == wrong_password.cost == cost
        assert len(decoy.hashed) == len(wrong_password.hashed)
        assert decoy.hashed != wrong_password.hashed


def test_with_users_at_different_costs_the_decoy_has_the_highest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An unknown user must not answer faster than the slowest user: hashing them alike is
    # what docs/security.md asks, and this is the fallback when they are not.
    auth = BasicAuth({"prometheus": _hash("a", 4), "grafana": _hash("b", 6), "ci": _hash("c", 5)})
    checks = _spy(monkeypatch)
    assert not auth.allows(_header("nobody", "a"))
    assert [(c.cost, c.ran) for c in checks] == [(6, True)]
