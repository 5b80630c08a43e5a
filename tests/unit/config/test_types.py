"""Config value types: a URL holds no credentials."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from exporter.config.schema import load_config
from exporter.errors import ConfigError
from tests.support.configs import assert_first_issue


@pytest.mark.parametrize(
    "url",
    ["http://user:s3cret-password-value@opencost:9003", "https://token-only-value@opencost"],
)
def test_a_url_holding_credentials_is_refused_without_echoing_them(
    write_config: Callable[[str], str], url: str
) -> None:
    path = write_config(f"teams: []\nsources:\n  opencost:\n    url: {url}\n")
    assert_first_issue(path, 4, "sources.opencost.url", "must not hold credentials")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    credentials = url.split("//")[1].split("@")[0]
    assert credentials not in str(caught.value)
    assert load_config(write_config("teams: []\nsources:\n  opencost:\n    url: http://o:9003\n"))
