"""dcgm-exporter's power draw: read where parsed, a corrupt sample dropped and counted."""

from __future__ import annotations

import pytest

from exporter.sources.checks import Tally
from exporter.sources.dcgm.parse import parse_metrics
from exporter.sources.dcgm.records import snapshot
from tests.unit.sources.dcgm.test_source import series


def test_power_usage_is_read_in_watts() -> None:
    text = series("DCGM_FI_DEV_GPU_UTIL", "40") + series("DCGM_FI_DEV_POWER_USAGE", "312.25")
    (record,) = parse_metrics(text)
    assert (record.power_watts, record.power_corrupt, record.utilisation) == (312.25, "", 0.4)


def test_no_power_series_is_none() -> None:
    (record,) = parse_metrics(series("DCGM_FI_DEV_GPU_UTIL", "40"))
    assert record.power_watts is None and record.power_corrupt == ""


@pytest.mark.parametrize(
    ("value", "reason"), [("-5", "out_of_range"), ("90000", "out_of_range"), ("NaN", "non_finite")]
)
def test_a_corrupt_power_sample_is_dropped_and_counted_and_the_gpu_kept(
    value: str, reason: str
) -> None:
    text = series("DCGM_FI_DEV_GPU_UTIL", "40") + series("DCGM_FI_DEV_POWER_USAGE", value)
    records = parse_metrics(text)
    (record,) = records
    assert (record.power_watts, record.power_corrupt, record.utilisation) == (None, reason, 0.4)
    assert snapshot(records, Tally()).dropped == {reason: 1}


def test_a_gpu_with_only_corrupt_power_still_has_its_utilisation_unknown_not_failed() -> None:
    # Power is no utilisation sample: a read whose power alone is corrupt does not fail.
    (record,) = parse_metrics(series("DCGM_FI_DEV_POWER_USAGE", "NaN"))
    assert record.utilisation is None and record.power_corrupt == "non_finite"


@pytest.mark.parametrize("blank", ["140737488355328", "140737488355328.000000", "1e300"])
def test_a_printed_blank_power_is_a_dropped_sample_not_no_power(blank: str) -> None:
    # Old builds printed DCGM's blank: the GPU draws power, how much is unknown. Read as absent,
    # it would leave its team's draw as its other GPUs' draw, with nothing counted.
    text = series("DCGM_FI_DEV_GPU_UTIL", "40") + series("DCGM_FI_DEV_POWER_USAGE", blank)
    records = parse_metrics(text)
    (record,) = records
    assert (record.power_watts, record.power_corrupt, record.utilisation) == (
        None,
        "missing_field",
        0.4,
    )
    assert snapshot(records, Tally()).dropped == {"missing_field": 1}
