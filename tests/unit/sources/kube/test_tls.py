"""The API server's CA and the client pair: inline or from files, and errors that name them."""

from __future__ import annotations

import os
import ssl
import tempfile
from pathlib import Path

import pytest
import trustme

from exporter.cli import main
from exporter.errors import ConfigError
from exporter.sources.kube.kubeconfig import Located
from exporter.sources.kube.tls import Trust, context, load_pair
from tests.conftest import CLOCK

CA = trustme.CA()
AT = Located("/home/u/.kube/config", 4, "clusters[0].cluster.certificate-authority-data")


def test_inline_ca_and_client_pair_load() -> None:
    client = CA.issue_cert("reader")
    cert = client.cert_chain_pems[0].bytes()
    key = client.private_key_pem.bytes()
    cert_at = Located("/home/u/.kube/config", 13, "users[0].user.client-certificate-data")
    key_at = Located("/home/u/.kube/config", 14, "users[0].user.client-key-data")
    made = context(Trust(ca=(AT, CA.cert_pem.bytes()), cert=(cert_at, cert), key=(key_at, key)))
    assert made.verify_mode == ssl.CERT_REQUIRED and made.check_hostname
    assert [c["subject"] for c in made.get_ca_certs()] == [
        c["subject"]
        for c in ssl.create_default_context(cadata=CA.cert_pem.bytes().decode()).get_ca_certs()
    ]


def test_inline_ca_that_is_not_pem_names_the_kubeconfig_line() -> None:
    with pytest.raises(ConfigError) as caught:
        context(Trust(ca=(AT, b"not a certificate")))
    assert caught.value.lines() == [
        "/home/u/.kube/config:4: clusters[0].cluster.certificate-authority-data: "
        "the CA data is not a PEM certificate"
    ]


def test_a_ca_file_that_is_not_pem_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "ca.der").write_bytes(CA.cert_pem.bytes()[30:])  # a cut certificate
    at = Located("/home/u/.kube/config", 4, "clusters[0].cluster.certificate-authority")
    with pytest.raises(ConfigError) as caught:
        context(Trust(ca=(at, str(tmp_path / "ca.der"))))
    (line,) = caught.value.lines()
    assert line.startswith("/home/u/.kube/config:4: clusters[0].cluster.certificate-authority: ")
    assert f"the CA file {tmp_path / 'ca.der'} is not a PEM certificate" in line


def test_a_missing_or_odd_ca_file_is_named(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")  # would block ssl forever
    at = Located("/etc/chargeback/config.yaml", None, "sources.kueue.ca_file")
    for name in ("missing", "fifo"):
        with pytest.raises(ConfigError, match=f"cannot read {tmp_path / name}"):
            context(Trust(ca=(at, str(tmp_path / name))))


def test_a_pair_that_does_not_match_is_a_config_error() -> None:
    one, other = CA.issue_cert("a"), CA.issue_cert("b")
    cert_at = Located("/k", 13, "users[0].user.client-certificate-data")
    pair = Trust(
        cert=(cert_at, one.cert_chain_pems[0].bytes()),
        key=(Located("/k", 14, "users[0].user.client-key-data"), other.private_key_pem.bytes()),
    )
    with pytest.raises(ConfigError, match=r"/k:13: users\[0\]\.user\.client-certificate-data: the"):
        context(pair)


def test_load_pair_leaves_no_file_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    client = CA.issue_cert("reader")
    load_pair(
        ssl.create_default_context(),
        client.cert_chain_pems[0].bytes(),
        client.private_key_pem.bytes(),
    )
    assert list(tmp_path.iterdir()) == []


def test_check_config_names_the_config_line_and_the_ca_file_that_is_not_pem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        "sources:\n"
        "  opencost: {url: 'http://opencost:9003'}\n"
        "  kueue:\n"
        "    url: https://k8s.example:6443\n"
        f"    ca_file: {ca_file}\n",
        encoding="utf-8",
    )
    assert main(["--config.file", str(config), "--check-config"], CLOCK) == 2
    err = capsys.readouterr().err
    message = f"the CA file {ca_file} is not a PEM certificate"
    assert err == f"error: {config}:5: sources.kueue.ca_file: {message}\n"
