"""The fast DCGM text reader against prometheus_client's parser, on generated and odd bodies."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_dcgm import FakeDcgmOptions, render_metrics
from exporter.errors import UpstreamPayloadError
from exporter.sources.dcgm.parse import Shape, check_complete, parse_metrics, parse_series
from exporter.sources.dcgm.records import GpuRecord
from exporter.sources.dcgm.text import Sample, fast_samples, library_samples, read_samples
from tests.conftest import FIXED_NOW
from tests.support.properties import examples

FIXTURES = Path(__file__).parents[3] / "fixtures" / "dcgm"

# Deterministic, so `make test` never turns red on a new random draw.
PROPERTY = settings(
    max_examples=examples(150),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FAMILIES = [
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_DEV_FB_USED",
    "dcgm_fi_dev_gpu_util",  # lower case: read as DCGM_FI_DEV_GPU_UTIL, as before
    "Dcgm_Fi_Prof_Gr_Engine_Active",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_XID_ERRORS_total",
    "DCGM_EXP_XID_ERRORS_COUNT",  # not DCGM_FI_*: checked, not read
    "go_goroutines",
    "process_cpu_seconds_total",
]
TYPES = ["gauge", "counter", "untyped", "histogram", "summary"]
LABEL_NAMES = [
    "gpu",
    "UUID",
    "uuid",
    "Hostname",
    "modelName",
    "GPU_I_PROFILE",
    "GPU_I_ID",
    "pod",
    "namespace",
    "container",
    "exported_pod",
    "team",
]
VALUES = ["0", "78", "0.453", "-1", "1e3", "-2.5E-2", ".5", "5.", "NaN", "+Inf", "-Inf", "1e20"]
# Everything a label value may hold once unescaped: quotes, backslashes, newlines, braces,
# commas, equals, spaces and non-ASCII.
VALUE_TEXT = st.text(
    alphabet=st.sampled_from([*'ab0"\\\n{},= #\t', "é", "ü", "日", "\u2028"]),
    max_size=8,
)


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@st.composite
def label_blocks(draw: st.DrawFn) -> str:
    names = draw(st.lists(st.sampled_from(LABEL_NAMES), unique=True, max_size=6))
    if draw(st.booleans()):
        names = ["gpu", *[n for n in names if n != "gpu"]]
    extra = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
    names += [n for n in draw(st.lists(extra, unique=True, max_size=2)) if n not in names]
    pairs = [f'{n}="{escape(draw(VALUE_TEXT))}"' for n in names]
    trailing = "," if len(pairs) > 0 and draw(st.booleans()) else ""
    return ",".join(pairs) + trailing


@st.composite
def expositions(draw: st.DrawFn) -> str:
    """A body in the plain shape dcgm-exporter writes, which the fast path must read itself."""
    blocks = draw(st.lists(label_blocks(), min_size=1, max_size=4))
    lines: list[str] = []
    for family in draw(st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=6)):
        if draw(st.booleans()):
            lines.append(f"# HELP {family} {escape(draw(VALUE_TEXT)).strip()}")
        if draw(st.booleans()):
            lines.append(f"# TYPE {family} {draw(st.sampled_from(TYPES))}")
        for block in draw(st.lists(st.sampled_from(blocks), min_size=1, max_size=4)):
            labels = f"{{{block}}}" if block or draw(st.booleans()) else ""
            stamp = f" {draw(st.integers(0, 2**42))}" if draw(st.booleans()) else ""
            lines.append(f"{family}{labels} {draw(st.sampled_from(VALUES))}{stamp}")
        lines += draw(st.sampled_from([[], [""], ["# a plain comment"]]))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


# Single characters whose insertion may take a body off the fast path, or make it invalid.
NOISE = st.sampled_from([*' \t{}",=\\#\r_x', "\\x", "__name__", "gpu=", "é", "\u2028"])


@st.composite
def perturbed(draw: st.DrawFn) -> str:
    """A plain body with a few characters inserted or deleted anywhere."""
    text = draw(expositions())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(NOISE) + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    return text


def triples(samples: list[Sample]) -> list[tuple[str, dict[str, str], object]]:
    # NaN is no number equal to itself; compared as a word.
    return [(n, dict(labels), "nan" if math.isnan(v) else float(v)) for n, labels, v in samples]


def dcgm_only(samples: list[Sample]) -> list[Sample]:
    return [s for s in samples if s[0].upper().startswith("DCGM_FI_")]


def records_or_error(read: object) -> list[GpuRecord] | str:
    try:
        assert callable(read)
        result = read()
    except UpstreamPayloadError as exc:
        return f"refused: {exc}"
    assert isinstance(result, list)
    return result


def by_library(text: str) -> list[GpuRecord] | str:
    try:
        samples = library_samples(text)
    except ValueError:
        return "not Prometheus text"

    def read() -> list[GpuRecord]:
        # The same completeness checks on the same text: only the reading of lines differs.
        shape: Shape = set()
        records = parse_series(samples, where="w", shape=shape)
        check_complete(text, shape, "w")
        return records

    return records_or_error(read)


def by_parse_metrics(text: str) -> list[GpuRecord] | str:
    result = records_or_error(lambda: parse_metrics(text, where="w"))
    if isinstance(result, str) and "not Prometheus text" in result:
        return "not Prometheus text"
    return result


@PROPERTY
@given(text=expositions())
def test_the_fast_path_reads_plain_bodies_as_the_library_does(text: str) -> None:
    fast = fast_samples(text)
    assert fast is not None, "a plain body must not need the library"
    assert triples(fast) == triples(dcgm_only(library_samples(text)))
    assert by_parse_metrics(text) == by_library(text)


@PROPERTY
@given(text=perturbed())
def test_odd_bodies_are_read_or_refused_as_the_library_does(text: str) -> None:
    try:
        expected = triples(dcgm_only(library_samples(text)))
    except ValueError:
        assert fast_samples(text) is None, "the fast path read a body the library refuses"
        with pytest.raises(ValueError):
            read_samples(text)
    else:
        assert triples(read_samples(text)) == expected
    assert by_parse_metrics(text) == by_library(text)


FAKE_VARIANTS = [
    FakeDcgmOptions(),
    FakeDcgmOptions(lowercase_hostname=True, empty_pod_labels=True),
    FakeDcgmOptions(old_namespace=True, pod_labels=True),
]


@pytest.mark.parametrize(
    "text",
    [
        (FIXTURES / "mig_and_idle.txt").read_text(),
        *(render_metrics(CLUSTER, FIXED_NOW, options) for options in FAKE_VARIANTS),
    ],
)
def test_the_real_shapes_take_the_fast_path(text: str) -> None:
    fast = fast_samples(text)
    assert fast is not None
    assert triples(fast) == triples(dcgm_only(library_samples(text)))
    assert parse_metrics(text) == parse_series(library_samples(text))


def labels_of(text: str) -> Mapping[str, str]:
    fast = fast_samples(text)
    assert fast is not None
    ((_, labels, _),) = fast
    return labels


def test_escapes_braces_and_commas_in_values_and_a_trailing_comma() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",a="x\\\\y\\"z\\nw",b="},{=",} 5\n'
    assert labels_of(text) == {"gpu": "0", "a": 'x\\y"z\nw', "b": "},{="}


def test_an_unknown_escape_is_left_to_the_library() -> None:
    # The library keeps `\q` as it is; the fast path does not guess.
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",a="\\q"} 5\n'
    assert fast_samples(text) is None
    ((_, labels, _),) = read_samples(text)
    assert labels["a"] == "\\q"


def test_timestamps_and_special_values() -> None:
    text = "".join(
        f'DCGM_FI_DEV_FB_USED{{gpu="{i}"}} {v} 1700000000000\n'
        for i, v in enumerate(["NaN", "+Inf", "-Inf", "1.5e3"])
    )
    fast = fast_samples(text)
    assert fast is not None
    assert triples(fast) == [
        ("DCGM_FI_DEV_FB_USED", {"gpu": "0"}, "nan"),
        ("DCGM_FI_DEV_FB_USED", {"gpu": "1"}, math.inf),
        ("DCGM_FI_DEV_FB_USED", {"gpu": "2"}, -math.inf),
        ("DCGM_FI_DEV_FB_USED", {"gpu": "3"}, 1500.0),
    ]


def test_a_counter_family_is_named_as_the_library_names_it() -> None:
    # The library reads a counter without `_total` as `<name>_total`: not the utilisation family.
    text = '# TYPE DCGM_FI_DEV_GPU_UTIL counter\nDCGM_FI_DEV_GPU_UTIL{gpu="0"} 50\n'
    fast = fast_samples(text)
    assert fast is not None
    assert [name for name, _, _ in fast] == ["DCGM_FI_DEV_GPU_UTIL_total"]
    (record,) = parse_metrics(text)
    assert record.utilisation is None


def test_a_lower_case_family_is_still_utilisation() -> None:
    (record,) = parse_metrics('dcgm_fi_dev_gpu_util{gpu="0"} 50\n')
    assert record.utilisation == 0.5


GOOD = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="n1"} 5\n'


@pytest.mark.parametrize(
    "bad",
    [
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",gpu="1"} 1',  # a label twice
        'DCGM_FI_DEV_GPU_UTIL{gpu="0} 1',  # an unclosed quote
        "DCGM_FI_DEV_GPU_UTIL{gpu=0} 1",  # an unquoted value
        'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 1_0',  # an underscore in the value
        'DCGM_FI_DEV_GPU_UTIL{gpu="0"} many',
        'DCGM_FI_DEV_GPU_UTIL{gpu="0"}',  # no value
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",,} 1',  # two commas
        'DCGM_FI_DEV_GPU_UTIL{0gpu="0"} 1',  # a label name that starts with a digit
        'DCGM_FI_DEV_GPU_UTIL{__name__="x",gpu="0"} 1',  # the name twice
        "# TYPE DCGM_FI_DEV_GPU_UTIL",  # TYPE without a type
        "# TYPE DCGM_FI_DEV_GPU_UTIL bogus",
        'go_info{version="1",version="2"} 1',  # a broken line of another family counts too
    ],
)
def test_malformed_text_is_still_refused(bad: str) -> None:
    text = GOOD + bad + "\n"
    with pytest.raises(ValueError):
        library_samples(text)  # the library refuses it: so must we
    assert fast_samples(text) is None
    with pytest.raises(UpstreamPayloadError, match="not Prometheus text"):
        parse_metrics(text, where="http://n1:9400/metrics")


def test_odd_but_valid_spacing_is_read_by_the_library() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL { gpu = "0" , Hostname="n1" }  40 \n'
    assert fast_samples(text) is None
    (record,) = parse_metrics(text)
    assert (record.gpu, record.node, record.utilisation) == ("0", "n1", 0.4)
