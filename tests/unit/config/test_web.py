"""Web config: TLS with client certificates and basic auth on the real server; bad files exit 2."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path

import bcrypt
import httpx
import pytest
import trustme

from exporter.cli import main
from exporter.config.basic_auth import BasicAuth, parse_basic_authorization
from exporter.config.loader import load_yaml_with_lines
from exporter.config.web import ClientAuthType, WebConfig, WebServing, load_web_config
from exporter.errors import ConfigError
from exporter.exposition.catalogue import SOURCE_UP
from exporter.exposition.render import render
from exporter.exposition.samples import Sample
from exporter.serve.server import MetricsServer

EXPOSITION = render([Sample.of(SOURCE_UP, 1.0, source="dcgm")])
PASSWORD = "correct horse battery staple"
# Cost 4 is bcrypt's minimum: the tests check behaviour, not hashing strength.
HASH = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()
# htpasswd writes $2y$; the same hash under that prefix must work too.
HASH_2Y = "$2y$" + HASH.removeprefix("$2b$")


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def certs(tmp_path: Path, ca: trustme.CA) -> Path:
    """The server's key pair and a CA for client certificates, written beside the web config."""
    server = ca.issue_cert("127.0.0.1", "localhost")
    (tmp_path / "server.crt").write_bytes(b"".join(p.bytes() for p in server.cert_chain_pems))
    server.private_key_pem.write_to_path(tmp_path / "server.key")
    ca.cert_pem.write_to_path(tmp_path / "server-ca.crt")
    client_ca = trustme.CA()
    client_ca.cert_pem.write_to_path(tmp_path / "client-ca.crt")
    client = client_ca.issue_cert("prometheus@monitoring.example")
    client.private_key_and_cert_chain_pem.write_to_path(tmp_path / "client.pem")
    stranger = trustme.CA().issue_cert("prometheus@monitoring.example")
    stranger.private_key_and_cert_chain_pem.write_to_path(tmp_path / "stranger.pem")
    return tmp_path


def _web_config(folder: Path, text: str) -> str:
    path = folder / "web.yml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def serve() -> Iterator[Callable[[WebServing], str]]:
    servers: list[MetricsServer] = []

    def start(web: WebServing) -> str:
        authorize = web.auth.allows if web.auth else None
        server = MetricsServer(
            ("127.0.0.1", 0), "/metrics", lambda: EXPOSITION, tls=web.tls, authorize=authorize
        )
        server.start()
        servers.append(server)
        return f"{'https' if web.tls else 'http'}://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        server.stop()


def _client_context(certs: Path, client_pem: str | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(certs / "server-ca.crt"))
    if client_pem:
        context.load_cert_chain(str(certs / client_pem))
    return context


def _get(url: str, context: ssl.SSLContext, **kwargs: object) -> httpx.Response:
    with httpx.Client(verify=context, timeout=20) as client:
        return client.get(url, **kwargs)  # type: ignore[arg-type]


TLS_ONLY = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"


def test_tls_serves_metrics_to_a_verifying_client(
    certs: Path, serve: Callable[[WebServing], str]
) -> None:
    # Relative file names resolve against the web config's folder, as in the toolkit.
    url = serve(load_web_config(_web_config(certs, TLS_ONLY)))
    assert url.startswith("https://")
    response = _get(f"{url}/metrics", _client_context(certs))
    assert response.status_code == 200
    assert 'chargeback_source_up{source="dcgm"} 1.0' in response.text
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/metrics", timeout=20)  # the system CAs do not know our test CA


def test_require_and_verify_client_cert(certs: Path, serve: Callable[[WebServing], str]) -> None:
    text = TLS_ONLY + (
        "  client_ca_file: client-ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"
    )
    url = serve(load_web_config(_web_config(certs, text)))
    with pytest.raises(httpx.TransportError):
        _get(f"{url}/metrics", _client_context(certs))
    with pytest.raises(httpx.TransportError):
        _get(f"{url}/metrics", _client_context(certs, "stranger.pem"))
    assert _get(f"{url}/metrics", _client_context(certs, "client.pem")).status_code == 200


def test_verify_client_cert_if_given(certs: Path, serve: Callable[[WebServing], str]) -> None:
    text = (
        TLS_ONLY + "  client_ca_file: client-ca.crt\n  client_auth_type: VerifyClientCertIfGiven\n"
    )
    url = serve(load_web_config(_web_config(certs, text)))
    assert _get(f"{url}/healthz", _client_context(certs)).status_code == 200
    assert _get(f"{url}/healthz", _client_context(certs, "client.pem")).status_code == 200
    with pytest.raises(httpx.TransportError):
        _get(f"{url}/healthz", _client_context(certs, "stranger.pem"))


@pytest.mark.parametrize("policy", ["NoClientCert", "RequestClientCert"])
def test_policies_that_admit_any_client(
    certs: Path, serve: Callable[[WebServing], str], policy: str
) -> None:
    ca_line = "  client_ca_file: client-ca.crt\n" if policy == "RequestClientCert" else ""
    text = TLS_ONLY + ca_line + f"  client_auth_type: {policy}\n"
    url = serve(load_web_config(_web_config(certs, text)))
    for client_pem in (None, "client.pem", "stranger.pem"):
        assert _get(f"{url}/healthz", _client_context(certs, client_pem)).status_code == 200


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_basic_auth_over_tls(certs: Path, serve: Callable[[WebServing], str]) -> None:
    text = TLS_ONLY + f"basic_auth_users:\n  prometheus: '{HASH}'\n  grafana: '{HASH_2Y}'\n"
    url = serve(load_web_config(_web_config(certs, text)))
    context = _client_context(certs)
    for path in ("/metrics", "/healthz", "/", "/nowhere"):
        for headers in ({}, _basic("prometheus", "wrong"), _basic("nobody", PASSWORD)):
            response = _get(f"{url}{path}", context, headers=headers)
            assert response.status_code == 401, (path, headers)
            assert response.headers["www-authenticate"] == "Basic"
            assert "chargeback" not in response.text
    metrics = _get(f"{url}/metrics", context, auth=("prometheus", PASSWORD))
    assert metrics.status_code == 200
    assert 'chargeback_source_up{source="dcgm"} 1.0' in metrics.text
    assert _get(f"{url}/", context, auth=("grafana", PASSWORD)).status_code == 200
    assert _get(f"{url}/nowhere", context, auth=("grafana", PASSWORD)).status_code == 404


def test_basic_auth_without_tls(tmp_path: Path, serve: Callable[[WebServing], str]) -> None:
    url = serve(load_web_config(_web_config(tmp_path, f"basic_auth_users:\n  p: {HASH}\n")))
    assert url.startswith("http://")
    assert httpx.get(f"{url}/metrics").status_code == 401
    assert httpx.get(f"{url}/metrics", auth=("p", PASSWORD)).status_code == 200


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
