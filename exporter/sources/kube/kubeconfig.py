"""A kubeconfig read as kubectl reads it: the current context's cluster and user, checked, with
every error at its file, line and key.

Supported users: `token`, `tokenFile`, `client-certificate(-data)` + `client-key(-data)`, and
`exec` credential plugins (client.authentication.k8s.io/v1 and v1beta1). `auth-provider` users
are refused with the exec plugin to use instead: kubectl itself removed the gcp and azure ones.
"""

from __future__ import annotations

import base64
import binascii
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from exporter.config.loader import load_yaml_with_lines, read_config_text
from exporter.errors import ConfigError, ConfigIssue
from exporter.files import read_regular_file

__all__ = ["EXEC_API_VERSIONS", "MAX_PEM_BYTES", "ExecSpec", "Kubeconfig", "Located", "load"]

KeyPath = tuple[str | int, ...]
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
MAX_PEM_BYTES = 1 << 20  # a CA bundle is tens of kilobytes
_EXEC_EXTENSION = "client.authentication.k8s.io/exec"
# What each auth-provider became: kubectl dropped gcp and azure (1.26) for these plugins.
_PROVIDER_HINT = {
    "gcp": "gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin)",
    "azure": "kubelogin (az aks install-cli; kubelogin convert-kubeconfig -l azurecli)",
    "oidc": "kubelogin's oidc-login (kubectl oidc-login setup)",
}
# Keys kubectl honours that the exporter does not: refused, never silently ignored.
_UNSUPPORTED_USER = ("username", "password", "as", "as-uid", "as-groups", "as-user-extra")
_UNSUPPORTED_CLUSTER = ("tls-server-name", "proxy-url")


@dataclass(frozen=True)
class Located:
    """Where a kubeconfig value is: to name the file, line and key when it proves unusable."""

    path: str
    line: int | None
    key: str

    def error(self, message: str) -> ConfigError:
        """A config error at this value."""
        return ConfigError(self.path, [ConfigIssue(self.line, self.key, message)])


@dataclass(frozen=True)
class ExecSpec:
    """An exec credential plugin: what to run, and how to name it in errors."""

    user: str
    api_version: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    # Sent in KUBERNETES_EXEC_INFO when the kubeconfig sets provideClusterInfo.
    cluster: Mapping[str, Any] | None


@dataclass(frozen=True)
class Kubeconfig:
    """The current context's cluster and user, with where each file or data value was given."""

    server: str
    insecure: Located | None = None
    ca: tuple[Located, str | bytes] | None = None  # a file path, or the PEM data itself
    cert: tuple[Located, str | bytes] | None = None
    key: tuple[Located, str | bytes] | None = None
    token: tuple[Located, str] | None = None
    token_file: str | None = None
    exec: ExecSpec | None = None


class _Doc:
    """The parsed file and the line of every key, to check values where they are."""

    def __init__(self, path: str, lines: dict[KeyPath, int]) -> None:
        self.path = path
        self.lines = lines

    def at(self, loc: KeyPath) -> Located:
        for end in range(len(loc), -1, -1):  # a missing key: its parent's line
            if loc[:end] in self.lines:
                return Located(self.path, self.lines[loc[:end]], _key_text(loc))
        return Located(self.path, None, _key_text(loc))

    def fail(self, loc: KeyPath, message: str) -> NoReturn:
        raise self.at(loc).error(message)

    def mapping(self, value: Any, loc: KeyPath) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(loc, f"must be a mapping, not {_kind(value)}")
        return value

    def text(self, parent: Mapping[str, Any], loc: KeyPath, *, required: bool = False) -> str:
        value = parent.get(str(loc[-1]))
        if value is None or value == "":
            if required:
                self.fail(loc, "is required")
            return ""
        if not isinstance(value, str):
            self.fail(loc, f"must be a string, not {_kind(value)}")
        return value

    def flag(self, parent: Mapping[str, Any], loc: KeyPath) -> bool:
        value = parent.get(str(loc[-1]), False)
        if not isinstance(value, bool):
            self.fail(loc, f"must be true or false, not {_kind(value)}")
        return value

    def data(self, parent: Mapping[str, Any], loc: KeyPath) -> bytes:
        text = self.text(parent, loc)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            self.fail(loc, "is not base64 data (kubectl writes the PEM base64-encoded)")

    def named(self, root: Mapping[str, Any], section: str, kind: str, name: str) -> KeyPath:
        """The path of the `kind` mapping inside the entry of `section` called `name`."""
        entries = root.get(section)
        if not isinstance(entries, list):
            self.fail((section,), f"must be a list of named {kind}s, not {_kind(entries)}")
        for index, entry in enumerate(entries):
            entry_map = self.mapping(entry, (section, index))
            if entry_map.get("name") == name:
                self.mapping(entry_map.get(kind), (section, index, kind))
                return (section, index, kind)
        self.fail((section,), f"no {kind} named {name!r}")


def load(path: str, *, allow_insecure: bool) -> Kubeconfig:
    """Read the kubeconfig at `path`; ConfigError naming file, line and key if it is unusable."""
    data, lines = load_yaml_with_lines(path, read_config_text(path))
    doc = _Doc(path, lines)
    root = doc.mapping(data, ())
    current = doc.text(root, ("current-context",), required=True)
    context_at = doc.named(root, "contexts", "context", current)
    context = root["contexts"][context_at[1]]["context"]
    cluster_name = doc.text(context, (*context_at, "cluster"), required=True)
    cluster_at = doc.named(root, "clusters", "cluster", cluster_name)
    cluster = root["clusters"][cluster_at[1]]["cluster"]
    user_name = doc.text(context, (*context_at, "user"))
    user: dict[str, Any] = {}
    user_at: KeyPath = ("users",)
    if user_name:
        user_at = doc.named(root, "users", "user", user_name)
        user = root["users"][user_at[1]]["user"]
    base = Path(path).parent
    config = _cluster(doc, cluster, cluster_at, base, allow_insecure)
    return _with_user(doc, config, user, user_at, user_name, base, cluster)


def _cluster(
    doc: _Doc, cluster: dict[str, Any], at: KeyPath, base: Path, allow_insecure: bool
) -> Kubeconfig:
    server = doc.text(cluster, (*at, "server"), required=True).rstrip("/")
    if not server.startswith(("https://", "http://")):
        doc.fail((*at, "server"), "must be an https:// (or http://) URL")
    for key in _UNSUPPORTED_CLUSTER:
        if cluster.get(key):
            doc.fail((*at, key), "not supported by the exporter; remove it")
    insecure = None
    if doc.flag(cluster, (*at, "insecure-skip-tls-verify")):
        insecure = doc.at((*at, "insecure-skip-tls-verify"))
        if not allow_insecure:
            doc.fail(
                (*at, "insecure-skip-tls-verify"),
                "TLS verification off is refused; give the cluster's CA "
                "(certificate-authority-data), or allow it explicitly with the exporter's "
                "insecure_skip_tls_verify: true",
            )
    ca = _file_or_data(doc, cluster, at, "certificate-authority", base)
    return Kubeconfig(server, insecure=insecure, ca=ca)


def _with_user(
    doc: _Doc,
    config: Kubeconfig,
    user: dict[str, Any],
    at: KeyPath,
    name: str,
    base: Path,
    cluster: dict[str, Any],
) -> Kubeconfig:
    if "auth-provider" in user:
        provider = doc.mapping(user["auth-provider"], (*at, "auth-provider"))
        kind = str(provider.get("name", ""))
        hint = _PROVIDER_HINT.get(kind, "the exec credential plugin your provider documents")
        doc.fail(
            (*at, "auth-provider"),
            f"auth-provider {kind!r} is not supported (kubectl removed gcp and azure in 1.26); "
            f"use an exec plugin instead: {hint}",
        )
    for unsupported in _UNSUPPORTED_USER:
        if unsupported in user:
            doc.fail(
                (*at, unsupported), "not supported by the exporter; use a token or an exec plugin"
            )
    ways = [key for key in ("token", "tokenFile", "exec") if user.get(key)]
    if len(ways) > 1:
        doc.fail((*at, ways[1]), f"set only one of {', '.join(ways)}")
    cert = _file_or_data(doc, user, at, "client-certificate", base)
    key = _file_or_data(doc, user, at, "client-key", base)
    if (cert is None) != (key is None):
        missing = "client-key" if key is None else "client-certificate"
        doc.fail(at, f"{missing} (or {missing}-data) is required with the other half of the pair")
    token = None
    if user.get("token"):
        token = (doc.at((*at, "token")), doc.text(user, (*at, "token")))
    token_file = doc.text(user, (*at, "tokenFile"))
    spec = _exec(doc, user, at, name, base, cluster, config) if user.get("exec") else None
    return Kubeconfig(
        config.server,
        insecure=config.insecure,
        ca=config.ca,
        cert=cert,
        key=key,
        token=token,
        token_file=str(base / token_file) if token_file else None,
        exec=spec,
    )


def _file_or_data(
    doc: _Doc, section: dict[str, Any], at: KeyPath, key: str, base: Path
) -> tuple[Located, str | bytes] | None:
    file = doc.text(section, (*at, key))
    has_data = bool(section.get(f"{key}-data"))
    if file and has_data:
        doc.fail((*at, f"{key}-data"), f"set only one of {key} and {key}-data")
    if has_data:
        return doc.at((*at, f"{key}-data")), doc.data(section, (*at, f"{key}-data"))
    if file:
        return doc.at((*at, key)), str(base / file)  # relative to the kubeconfig, as kubectl
    return None


def _exec(
    doc: _Doc,
    user: dict[str, Any],
    at: KeyPath,
    name: str,
    base: Path,
    cluster: dict[str, Any],
    config: Kubeconfig,
) -> ExecSpec:
    at = (*at, "exec")
    spec = doc.mapping(user["exec"], at)
    version = doc.text(spec, (*at, "apiVersion"), required=True)
    if version not in EXEC_API_VERSIONS:
        doc.fail((*at, "apiVersion"), f"must be one of {', '.join(EXEC_API_VERSIONS)}")
    mode = doc.text(spec, (*at, "interactiveMode"))
    if not mode and version.endswith("/v1"):
        doc.fail((*at, "interactiveMode"), "is required with client.authentication.k8s.io/v1")
    if mode not in ("", "Never", "IfAvailable", "Always"):
        doc.fail((*at, "interactiveMode"), "must be Never, IfAvailable or Always")
    if mode == "Always":
        doc.fail((*at, "interactiveMode"), "Always needs a terminal; the exporter has none")
    command = _command(doc, spec, at, base)
    args = _strings(doc, spec.get("args") or [], (*at, "args"))
    env = _env(doc, spec.get("env") or [], (*at, "env"))
    info = None
    if doc.flag(spec, (*at, "provideClusterInfo")):
        info = _cluster_info(cluster, config)
    return ExecSpec(name, version, command, args, env, info)


def _command(doc: _Doc, spec: dict[str, Any], at: KeyPath, base: Path) -> str:
    command = doc.text(spec, (*at, "command"), required=True)
    if os.sep in command and not os.path.isabs(command):
        command = str(base / command)  # kubectl resolves a relative path from the kubeconfig
    found = shutil.which(command)
    if found is None:
        hint = doc.text(spec, (*at, "installHint"))
        doc.fail((*at, "command"), f"{command!r} is not an executable on PATH. {hint}".strip())
    return found


def _strings(doc: _Doc, value: Any, at: KeyPath) -> tuple[str, ...]:
    if not isinstance(value, list):
        doc.fail(at, f"must be a list of strings, not {_kind(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            doc.fail((*at, index), f"must be a string, not {_kind(item)}")
    return tuple(value)


def _env(doc: _Doc, value: Any, at: KeyPath) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        doc.fail(at, f"must be a list of name/value pairs, not {_kind(value)}")
    out = []
    for index, item in enumerate(value):
        entry = doc.mapping(item, (*at, index))
        name = doc.text(entry, (*at, index, "name"), required=True)
        out.append((name, doc.text(entry, (*at, index, "value"))))
    return tuple(out)


def _cluster_info(cluster: dict[str, Any], config: Kubeconfig) -> dict[str, Any]:
    # The fields of ExecCredential's spec.cluster, as client-go fills them.
    info: dict[str, Any] = {"server": config.server}
    if config.ca is not None:
        where, pem = config.ca
        if isinstance(pem, str):
            try:
                pem = read_regular_file(pem, MAX_PEM_BYTES)
            except OSError as exc:
                raise where.error(f"cannot read {config.ca[1]!s}: {exc.strerror}") from None
        info["certificate-authority-data"] = base64.b64encode(pem).decode()
    if config.insecure is not None:
        info["insecure-skip-tls-verify"] = True
    for extension in cluster.get("extensions") or []:
        if isinstance(extension, dict) and extension.get("name") == _EXEC_EXTENSION:
            info["config"] = extension.get("extension")
    return info


def _key_text(loc: KeyPath) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), "a list" if isinstance(value, list) else "a mapping"
    )
