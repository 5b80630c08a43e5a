"""The joiner's log: a fold into `__other__` is said when its set of names changes, not on
every refresh."""

from __future__ import annotations

import logging

import pytest

from exporter.serve.wiring import _log_fold


def test_a_fold_is_said_once_per_change(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        _log_fold("models", "max_models", 2, ("m3", "m4"), ())
        _log_fold("models", "max_models", 2, ("m3", "m4"), ("m3", "m4"))
        _log_fold("models", "max_models", 2, (), ("m3", "m4"))
        _log_fold("models", "max_models", 2, ("m4",), ())
    assert [r.getMessage() for r in caplog.records] == [
        "2 models over attribution.max_models=2 folded into __other__: m3, m4",
        "1 models over attribution.max_models=2 folded into __other__: m4",
    ]
