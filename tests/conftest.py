"""Shared fixtures: a fixed clock and the demo's fake upstreams on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import trustme
from hypothesis import settings

from chargeback_demo.exporter import HISTORY_SWITCH
from chargeback_demo.stack import DemoStack
from exporter.clock import Clock, fixed_clock
from exporter.config.schema import Config
from exporter.serve.wiring import build_sources
from exporter.sources.table import Snapshots
from tests.support.properties import FULL, QUICK, QUICK_DEFAULT, profile

# Property tests judge results, never speed: a loaded machine must not fail them on hypothesis'
# per-example deadline. `make unit` draws a sample of each, `make integration` the full count
# (tests/support/properties.py).
settings.register_profile(FULL, deadline=None)
settings.register_profile(QUICK, deadline=None, max_examples=QUICK_DEFAULT)
settings.load_profile(profile())

# Mid-month, mid-day: every demo workload has run, and vision's daytime job is running now.
# The config's default time zone, for a reading of a config that sets none.
UTC_ZONE = ZoneInfo("UTC")
FIXED_NOW = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
# The tests' frozen time: every source, fake, join and report reads it, never the machine's.
CLOCK: Clock = fixed_clock(FIXED_NOW)


@pytest.fixture(scope="session", autouse=True)
def _demo_without_history() -> Iterator[None]:
    """The demo backfills a closed month's history (13 s a run) only for the tests that ask:
    the others read its closed months as a cluster without that history would. Session-wide,
    so module fixtures that run the demo see it too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HISTORY_SWITCH, "off")
        yield


@pytest.fixture
def stack() -> Iterator[DemoStack]:
    """Every fake upstream of the demo, frozen at FIXED_NOW."""
    demo = DemoStack(clock=CLOCK).start()
    yield demo
    demo.stop()


@pytest.fixture
def write_config(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write YAML text to a config file and return its path."""

    def write(text: str) -> str:
        path = tmp_path / "config.yaml"
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def read_all(config: Config, now: datetime = FIXED_NOW) -> Snapshots:
    """Fetch every configured source once at `now`, as one refresh of each would."""
    snapshots: dict[str, object] = {}
    for source in build_sources(config):
        snapshots[source.name] = source.fetch(now)
        source.close()
    return Snapshots.of(snapshots)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    """A certificate authority for the TLS tests' server certificates."""
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


UNIT_TESTS = Path(__file__).resolve().parent / "unit"


# First: the -m selection reads the marks set here.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every hypothesis test `property`, so `make integration` can run them all in full, and
    every test of tests/unit `unit`, so a run of every folder can keep only their property tests."""
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)
        if item.path.resolve().is_relative_to(UNIT_TESTS):
            item.add_marker(pytest.mark.unit)
