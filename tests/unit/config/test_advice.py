"""Config of the advice: defaults, and bad settings that name file, line and key."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from exporter.config.schema import load_config
from exporter.errors import ConfigError

DCGM = """\
sources:
  dcgm:
    prometheus:
      url: http://prometheus:9090
"""


def test_advice_defaults(write_config: Callable[[str], str]) -> None:
    advice = load_config(write_config(DCGM + "advice: {}\n")).advice
    assert advice is not None
    assert (advice.window, advice.interval, advice.min_coverage) == (
        timedelta(days=7),
        timedelta(hours=1),
        timedelta(days=1),
    )
    assert (advice.top_n, advice.headroom, advice.idle_share, advice.quota_share) == (
        5,
        0.8,
        0.8,
        0.5,
    )


def test_advice_is_off_unless_configured(write_config: Callable[[str], str]) -> None:
    assert load_config(write_config(DCGM)).advice is None


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("advice:\n  window: 2d\n  min_coverage: 3d\n", 7, "advice.min_coverage"),
        ("advice:\n  top_n: 0\n", 6, "advice.top_n"),
        ("advice:\n  headroom: 1.5\n", 6, "advice.headroom"),
        ("advice:\n  window: 1h\n  min_coverage: 30m\n  step: 1h\n", 8, "advice.step"),
        ("advice:\n  windows: 7d\n", 6, "advice.windows"),
    ],
)
def test_bad_advice_settings_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str
) -> None:
    path = write_config(DCGM + text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    (issue,) = caught.value.issues
    assert (issue.line, issue.key) == (line, key)


def test_advice_needs_dcgm_through_prometheus(write_config: Callable[[str], str]) -> None:
    path = write_config("advice: {}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    (issue,) = caught.value.issues
    assert issue.key == "advice"
    assert "sources.dcgm.prometheus" in issue.message
