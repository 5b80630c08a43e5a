"""Web config: loading, cached basic auth checks, and bad files exiting 2 with file, line, key."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import bcrypt
import pytest

from exporter.cli import main
from exporter.config.basic_auth import BasicAuth, parse_basic_authorization
from exporter.config.loader import load_yaml_with_lines
from exporter.config.web import ClientAuthType, WebConfig, WebServing, load_web_config
from exporter.errors import ConfigError

PASSWORD = "correct horse battery staple"
# Cost 4 is bcrypt's minimum: the tests check behaviour, not hashing strength. A fixed salt, so
# the parameters (and test ids) that quote the hash are the same in every pytest-xdist worker.
HASH = bcrypt.hashpw(PASSWORD.encode(), b"$2b$04$chargebackwebtestsalt.").decode()
# htpasswd writes $2y$; the same hash under that prefix must work too.
HASH_2Y = "$2y$" + HASH.removeprefix("$2b$")


def _web_config(folder: Path, text: str) -> str:
    path = folder / "web.yml"
    path.write_text(text, encoding="utf-8")
    return str(path)


TLS_ONLY = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_empty_web_config_means_plain_http_without_auth(tmp_path: Path) -> None:
    assert load_web_config(_web_config(tmp_path, "")) == WebServing(tls=None, auth=None)
    assert load_web_config(_web_config(tmp_path, "basic_auth_users: {}\n")).auth is None


def test_successful_checks_are_cached_without_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    rounds: list[bytes] = []
    checkpw = bcrypt.checkpw

    def counting(password: bytes, hashed: bytes) -> bool:
        rounds.append(hashed)
        return checkpw(password, hashed)

    monkeypatch.setattr(bcrypt, "checkpw", counting)
    auth = BasicAuth({"prometheus": HASH})
    right = _basic("prometheus", PASSWORD)["Authorization"]
    wrong = _basic("prometheus", "guess")["Authorization"]
    assert auth.allows(right) and auth.allows(right) and auth.allows(right)
    assert len(rounds) == 1
    # Failures are never cached, and a cached success does not let another password in.
    assert not auth.allows(wrong) and not auth.allows(wrong)
    assert len(rounds) == 3
    assert auth.allows(right) and len(rounds) == 3
    # An unknown user costs a round too, so timing does not reveal which users exist.
    assert not auth.allows(_basic("nobody", PASSWORD)["Authorization"])
    assert len(rounds) == 4 and rounds[-1] != HASH.encode()
    state = repr(vars(auth)).encode()
    assert PASSWORD.encode() not in state and PASSWORD not in repr(auth) and HASH not in repr(auth)


def test_parse_basic_authorization() -> None:
    assert parse_basic_authorization("Basic " + base64.b64encode(b"u:p:q").decode()) == (
        "u",
        b"p:q",
    )
    assert parse_basic_authorization("basic " + base64.b64encode(b"u:").decode()) == ("u", b"")
    for bad in (
        None,
        "",
        "Bearer abc",
        "Basic",
        "Basic !!!",
        "Basic " + base64.b64encode(b"u").decode(),
    ):
        assert parse_basic_authorization(bad) is None
    long_password = "x" * 100
    assert not BasicAuth({"u": HASH}).allows(_basic("u", long_password)["Authorization"])


VALID_MAIN = "currency: EUR\nteams: []\n"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            TLS_ONLY + "  min_versoin: TLS12\n",
            "web.yml:4: tls_server_config.min_versoin: unknown key",
        ),
        ("basic_auth_user:\n  p: x\n", "web.yml:1: basic_auth_user: unknown key"),
        (
            "tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n",
            "web.yml:2: tls_server_config.cert_file: cannot read ",
        ),
        (
            TLS_ONLY.replace("server.key", "nope.key"),
            "web.yml:3: tls_server_config.key_file: cannot",
        ),
        (
            "tls_server_config:\n  cert_file: server.crt\n  key_file: client.pem\n",
            "web.yml:2: tls_server_config.cert_file: cert_file and key_file are not a usable pair",
        ),
        ("tls_server_config:\n  cert_file: server.crt\n", "web.yml:1: tls_server_config.key_file"),
        (
            TLS_ONLY + "  client_auth_type: RequireAndVerify\n",
            "web.yml:4: tls_server_config.client_auth_type: Input should be 'NoClientCert'",
        ),
        (
            TLS_ONLY + "  client_auth_type: RequireAnyClientCert\n",
            "web.yml:4: tls_server_config.client_auth_type: RequireAnyClientCert is not supported",
        ),
        (
            TLS_ONLY + "  client_ca_file: client-ca.crt\n",
            "web.yml:1: tls_server_config.client_auth_type: client_ca_file is set",
        ),
        (
            TLS_ONLY + "  client_auth_type: RequireAndVerifyClientCert\n",
            "web.yml:1: tls_server_config.client_ca_file: RequireAndVerifyClientCert needs",
        ),
        (
            TLS_ONLY
            + "  client_ca_file: server.key\n  client_auth_type: VerifyClientCertIfGiven\n",
            "web.yml:4: tls_server_config.client_ca_file: no usable CA certificate",
        ),
        (
            "basic_auth_users:\n  alice: hunter2\n",
            "web.yml:2: basic_auth_users.alice: not a bcrypt",
        ),
        (
            f"basic_auth_users:\n  alice: '{HASH[:-1]}'\n",
            "web.yml:2: basic_auth_users.alice: not a bcrypt hash",
        ),
        ("- tls_server_config\n", "web.yml:1: (top level): Input should be a valid dictionary"),
        ("tls_server_config: [\n", "web.yml:2: (top level): invalid YAML"),
    ],
)
def test_bad_web_config_exits_2_with_file_line_key(
    certs: Path,
    write_config: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    text: str,
    where: str,
) -> None:
    web = _web_config(certs, text)
    assert (
        main(
            ["--config.file", write_config(VALID_MAIN), "--web.config.file", web, "--check-config"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"error: {certs}/{where}" in err, err
    assert "hunter2" not in err and HASH[:-1] not in err


def test_check_config_accepts_a_good_web_config_and_serving_refuses_a_bad_one(
    certs: Path, write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(VALID_MAIN)
    good = _web_config(certs, TLS_ONLY + f"basic_auth_users:\n  p: {HASH}\n")
    assert main(["--config.file", config, "--web.config.file", good, "--check-config"]) == 0
    assert f"{good}: ok" in capsys.readouterr().err
    missing = str(certs / "absent.yml")
    # Serving loads the web config before any source or listener starts.
    assert main(["--config.file", config, "--web.config.file", missing]) == 2
    assert f"{missing}: (top level): cannot read" in capsys.readouterr().err


def test_config_error_lines_name_the_file() -> None:
    with pytest.raises(ConfigError) as caught:
        load_web_config("/nonexistent/web.yml")
    assert caught.value.lines() == [
        "/nonexistent/web.yml: (top level): cannot read: No such file or directory"
    ]


def test_the_example_web_config_is_valid() -> None:
    path = Path(__file__).parents[3] / "deploy" / "web-config.example.yml"
    data, _ = load_yaml_with_lines(str(path), path.read_text(encoding="utf-8"))
    config = WebConfig.model_validate(data)
    assert config.tls_server_config is not None
    assert (
        config.tls_server_config.client_auth_type is ClientAuthType.REQUIRE_AND_VERIFY_CLIENT_CERT
    )
    hashed = config.basic_auth_users["prometheus"].get_secret_value()
    assert bcrypt.checkpw(b"change-me", hashed.encode())
