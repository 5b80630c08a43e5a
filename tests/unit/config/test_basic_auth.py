"""Basic auth's two speeds: answers without bcrypt where it can, and an unknown user's price."""

from __future__ import annotations

import base64

import bcrypt
import pytest

from exporter.config.basic_auth import BasicAuth, bcrypt_cost


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


@pytest.mark.parametrize("cost", [5, 7])
def test_an_unknown_user_costs_the_users_bcrypt_rounds(
    monkeypatch: pytest.MonkeyPatch, cost: int
) -> None:
    costs: list[int] = []
    checkpw = bcrypt.checkpw

    def counting(password: bytes, hashed: bytes) -> bool:
        costs.append(bcrypt_cost(hashed.decode()))
        return checkpw(password, hashed)

    monkeypatch.setattr(bcrypt, "checkpw", counting)
    auth = BasicAuth({"prometheus": _hash("right", cost)})
    assert not auth.allows(_header("prometheus", "wrong"))
    assert not auth.allows(_header("nobody", "wrong"))
    assert costs == [cost, cost]
