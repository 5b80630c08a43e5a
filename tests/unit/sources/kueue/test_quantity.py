"""Kubernetes quantities parse into base units, and garbage is refused."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.sources.kueue.quantity import parse_quantity


@pytest.mark.parametrize(
    ("given_value", "expected"),
    [
        (2, 2.0),
        (9, 9.0),
        (1.5, 1.5),
        ("2", 2.0),
        ("1.5", 1.5),
        (".5", 0.5),
        ("500m", 0.5),
        ("30500m", 30.5),
        ("250u", 250e-6),
        ("100n", 100e-9),
        ("1k", 1000.0),
        ("1M", 1e6),
        ("2G", 2e9),
        ("1T", 1e12),
        ("1P", 1e15),
        ("1E", 1e18),
        ("1Ki", 1024.0),
        ("1Mi", 1024.0**2),
        ("120Gi", 120 * 1024.0**3),
        ("1Ti", 1024.0**4),
        ("2e3", 2000.0),
        ("2E3", 2000.0),
        ("1.5e-3", 0.0015),
        ("+3", 3.0),
        ("-1", -1.0),
        (" 4 ", 4.0),
    ],
)
def test_parses_numbers_and_strings(given_value: object, expected: float) -> None:
    assert parse_quantity(given_value) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "abc",
        "1.2.3",
        "1 Gi",
        "1gi",
        "1KiB",
        "Gi",
        "1e",
        "0x10",
        "nan",
        "inf",
        "1e400",
        True,
        None,
        [1],
        {"a": 1},
        math.nan,
        math.inf,
    ],
)
def test_rejects_garbage(bad: object) -> None:
    with pytest.raises(ValueError, match="quantity"):
        parse_quantity(bad)


@given(st.integers(min_value=0, max_value=10**12))
def test_integer_strings_and_numbers_agree(n: int) -> None:
    assert parse_quantity(str(n)) == parse_quantity(n) == float(n)


@given(st.integers(min_value=0, max_value=10**9))
def test_milli_is_a_thousandth(n: int) -> None:
    assert parse_quantity(f"{n}m") == pytest.approx(n / 1000, rel=1e-12)
