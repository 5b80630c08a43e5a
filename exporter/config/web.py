"""The `--web.config.file` format of the Prometheus exporter-toolkit: TLS and basic auth users."""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, SecretStr, ValidationError

from exporter.config.basic_auth import BasicAuth
from exporter.config.loader import (
    KeyPath,
    issues_from_validation,
    load_yaml_with_lines,
    read_config_text,
)
from exporter.errors import ConfigError, ConfigIssue
from exporter.files import check_regular_file

__all__ = ["ClientAuthType", "TlsServerConfig", "WebConfig", "WebServing", "load_web_config"]

# The modular crypt format bcrypt tools write: $2a$, $2b$ or $2y$ (htpasswd), a two-digit cost
# from 4 to 31, then 22 characters of salt and 31 of hash in bcrypt's own base64 alphabet.
_BCRYPT = re.compile(r"^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$")


class ClientAuthType(StrEnum):
    """The toolkit's client certificate policies (Go's crypto/tls ClientAuthType names)."""

    NO_CLIENT_CERT = "NoClientCert"
    REQUEST_CLIENT_CERT = "RequestClientCert"
    REQUIRE_ANY_CLIENT_CERT = "RequireAnyClientCert"
    VERIFY_CLIENT_CERT_IF_GIVEN = "VerifyClientCertIfGiven"
    REQUIRE_AND_VERIFY_CLIENT_CERT = "RequireAndVerifyClientCert"


def _bcrypt_hash(value: SecretStr) -> SecretStr:
    if not _BCRYPT.match(value.get_secret_value()):
        # Never echo the value: a plaintext password pasted here by mistake is still a secret.
        raise ValueError("not a bcrypt hash (expected $2y$<cost>$..., e.g. from htpasswd -nBC 10)")
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TlsServerConfig(_Model):
    """`tls_server_config`: the server's key pair and the client certificate policy."""

    cert_file: str
    key_file: str
    client_ca_file: str | None = None
    client_auth_type: ClientAuthType = ClientAuthType.NO_CLIENT_CERT


class WebConfig(_Model):
    """The whole web config file; an empty file means plain HTTP without auth."""

    tls_server_config: TlsServerConfig | None = None
    basic_auth_users: dict[str, Annotated[SecretStr, AfterValidator(_bcrypt_hash)]] = {}


@dataclass(frozen=True)
class WebServing:
    """What the server needs from a web config: a TLS context and a basic auth checker."""

    tls: ssl.SSLContext | None
    auth: BasicAuth | None


def load_web_config(path: str) -> WebServing:
    """Read and validate a web config file and its certificates, or raise ConfigError."""
    text = read_config_text(path)
    data, lines = load_yaml_with_lines(path, text)
    try:
        config = WebConfig.model_validate({} if data is None else data)
    except ValidationError as exc:
        raise ConfigError(path, issues_from_validation(exc, lines)) from None
    tls = None
    if config.tls_server_config is not None:
        tls = _tls_context(path, config.tls_server_config, lines)
    users = {user: secret.get_secret_value() for user, secret in config.basic_auth_users.items()}
    return WebServing(tls=tls, auth=BasicAuth(users) if users else None)


def _tls_context(path: str, tls: TlsServerConfig, lines: dict[KeyPath, int]) -> ssl.SSLContext:
    def issue(key: str, message: str) -> ConfigError:
        line = lines.get(("tls_server_config", key), lines.get(("tls_server_config",)))
        return ConfigError(path, [ConfigIssue(line, f"tls_server_config.{key}", message)])

    policy = tls.client_auth_type
    if policy is ClientAuthType.REQUIRE_ANY_CLIENT_CERT:
        # Python's ssl module has no verify callback, so it cannot accept a certificate it has
        # not verified; refusing beats silently enforcing a stricter or looser policy.
        raise issue(
            "client_auth_type",
            "RequireAnyClientCert is not supported (an unverified certificate cannot be "
            "accepted): use RequireAndVerifyClientCert with client_ca_file",
        )
    verifies = policy in (
        ClientAuthType.VERIFY_CLIENT_CERT_IF_GIVEN,
        ClientAuthType.REQUIRE_AND_VERIFY_CLIENT_CERT,
    )
    if tls.client_ca_file is not None and policy is ClientAuthType.NO_CLIENT_CERT:
        raise issue("client_auth_type", "client_ca_file is set: choose a client_auth_type")
    if verifies and tls.client_ca_file is None:
        raise issue("client_ca_file", f"{policy.value} needs client_ca_file to verify against")

    base = Path(path).parent
    files = {"cert_file": tls.cert_file, "key_file": tls.key_file}
    if tls.client_ca_file is not None:
        files["client_ca_file"] = tls.client_ca_file
    # Relative paths are relative to the web config file, as in the toolkit.
    resolved = {key: str(base / name) for key, name in files.items()}
    for key, name in resolved.items():
        try:
            check_regular_file(name)
        except OSError as exc:
            raise issue(key, f"cannot read {name}: {exc.strerror}") from None

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # The toolkit's default min_version.
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(resolved["cert_file"], resolved["key_file"])
    except ssl.SSLError as exc:
        message = f"cert_file and key_file are not a usable pair: {_why(exc)}"
        raise issue("cert_file", message) from None
    if "client_ca_file" in resolved:
        try:
            context.load_verify_locations(cafile=resolved["client_ca_file"])
        except ssl.SSLError as exc:
            raise issue("client_ca_file", f"no usable CA certificate: {_why(exc)}") from None
    # RequestClientCert asks for a certificate but never checks it, so it admits exactly the
    # clients NoClientCert admits: not asking gives the same access decision.
    context.verify_mode = {
        ClientAuthType.VERIFY_CLIENT_CERT_IF_GIVEN: ssl.CERT_OPTIONAL,
        ClientAuthType.REQUIRE_AND_VERIFY_CLIENT_CERT: ssl.CERT_REQUIRED,
    }.get(policy, ssl.CERT_NONE)
    return context


def _why(exc: ssl.SSLError) -> str:
    return str(exc.reason or exc.strerror or "invalid PEM")
