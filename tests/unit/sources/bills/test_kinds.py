"""The bill sources in the source table: one reader per configured bill, named `bills.<name>`,
a bad admin key a config error at its line, and each snapshot bundled by its name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from exporter.cli import main
from exporter.config.schema import Config
from exporter.sources.bills.lines import BillKind, BillSnapshot
from exporter.sources.readers import open_readers
from exporter.sources.registry import SOURCES
from exporter.sources.table import Snapshots
from tests.conftest import CLOCK

BILLS = """\
currency: EUR
bills:
  currency_rates: {{USD: 0.92}}
  sources:
    openai:
      type: openai
      admin_key_file: {key}
    claude:
      type: anthropic
      admin_key_env: TEST_ANTHROPIC_ADMIN_KEY
    aws:
      type: focus
      path: {folder}
"""


def test_each_configured_bill_is_its_own_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_ADMIN_KEY", "sk-ant-admin-0123456789abcdef")
    key = tmp_path / "key"
    key.write_text("sk-admin-0123456789abcdef\n")
    path = tmp_path / "config.yaml"
    path.write_text(BILLS.format(key=key, folder=tmp_path))
    config = Config.model_validate(_yaml(path))
    readers = open_readers(config, str(path))
    assert [r.name for r in readers] == ["bills.aws", "bills.claude", "bills.openai"]
    for reader in readers:
        reader.close()


def test_an_admin_key_that_cannot_be_read_is_a_config_error_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_ADMIN_KEY", "sk-ant-admin-0123456789abcdef")
    path = tmp_path / "config.yaml"
    path.write_text(BILLS.format(key=tmp_path / "absent", folder=tmp_path))
    assert main(["--config.file", str(path), "--check-config"], CLOCK) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:7: bills.sources.openai.admin_key_file: ")
    assert "cannot read secret file" in err


def test_snapshots_bundle_each_bill_by_its_name() -> None:
    bill = BillSnapshot(source="aws", kind=BillKind.CLUSTER, lines=())
    bundled = Snapshots.of({"bills.aws": bill})
    assert bundled.bills == {"aws": bill} and bundled.opencost is None
    with pytest.raises(TypeError, match=r"bills\.aws: expected BillSnapshot"):
        Snapshots.of({"bills.aws": object()})
    assert "bills" not in SOURCES


def _yaml(path: Path) -> object:
    return yaml.safe_load(path.read_text())
