"""DCGM endpoints judged one by one: a cut body fails its endpoint, a failed one stands in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import httpx
import pytest

from exporter.config.schema import Config, DcgmConfig, SourcesConfig
from exporter.errors import RecordsDropped, UpstreamIncomplete
from exporter.sources.dcgm.parse import parse_metrics
from exporter.sources.dcgm.source import KIND, DcgmSnapshot, build_client
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW, UTC_ZONE

FIELDS = (
    ("DCGM_FI_DEV_GPU_UTIL", "40"),
    ("DCGM_FI_DEV_POWER_USAGE", "300.000000"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.410000"),
)


def exposition(host: str, gpus: int, fields: tuple[tuple[str, str], ...] = FIELDS) -> str:
    """A body as dcgm-exporter writes it: family by family, each GPU once per family."""
    lines = []
    for name, value in fields:
        lines += [f"# HELP {name} x.", f"# TYPE {name} gauge"]
        for gpu in range(gpus):
            labels = f'gpu="{gpu}",UUID="GPU-{host}-{gpu}",modelName="NVIDIA H100 80GB HBM3"'
            held = f',container="c",namespace="ns-{gpu}",pod="p-{gpu}"' if gpu else ""
            lines.append(f'{name}{{{labels},Hostname="{host}"{held}}} {value}')
    return "\n".join(lines) + "\n"


def cut(text: str, keep: int) -> str:
    """The body cut after `keep` lines, at a line boundary: it still parses."""
    return "\n".join(text.split("\n")[:keep]) + "\n"


# --- a cut body, judged within itself --------------------------------------------------------


@pytest.mark.parametrize("keep", [k for k in range(7, 18) if k != 12])
def test_every_cut_after_the_first_family_fails_the_read(keep: int) -> None:
    # 4 GPUs x 3 families of 6 lines: a cut after the first family and not at a family's end
    # leaves some GPUs without a field the others report, or a family announced without
    # samples. (Within the first family, or at a family's end, the body is consistent in
    # itself: the endpoint's last good read tells, below.)
    text = exposition("n1", 4)
    with pytest.raises(UpstreamIncomplete, match="the body was cut"):
        parse_metrics(cut(text, keep), where="http://n1:9400/metrics")


def test_the_whole_body_is_complete() -> None:
    records = parse_metrics(exposition("n1", 4))
    assert [(r.gpu, r.utilisation, r.power_watts) for r in records] == [
        (str(gpu), 0.41, 300.0) for gpu in range(4)
    ]


def test_a_family_counted_with_the_library_is_not_announced_as_a_gauge() -> None:
    # A counter without samples of its own name is not the cut of a gauge family.
    text = exposition("n1", 1) + "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
    assert len(parse_metrics(text)) == 1


# --- a cut body, judged against the endpoint's last good read -------------------------------


def read(
    cfg: DcgmConfig, answer: Callable[[httpx.Request], httpx.Response]
) -> Callable[[int], DcgmSnapshot]:
    """A reader on one client (the endpoint memory is the client's), minutes after FIXED_NOW."""
    client = build_client(cfg, transport=httpx.MockTransport(answer))
    config = Config(sources=SourcesConfig(dcgm=cfg))

    def at(minutes: int) -> DcgmSnapshot:
        reading = Reading.open(FIXED_NOW + timedelta(minutes=minutes), UTC_ZONE)
        return KIND.fetch_from_config(client, config, reading)

    return at


@pytest.mark.parametrize("keep", [4, 5, 6, 12])
def test_a_body_cut_consistent_in_itself_fails_against_the_last_good_read(keep: int) -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))
    bodies = [exposition("n1", 4)]
    at = read(cfg, lambda r: httpx.Response(200, text=bodies[0]))
    at(0)
    bodies[0] = cut(bodies[0], keep)
    with pytest.raises(UpstreamIncomplete, match="endpoint's last good read had"):
        at(1)


def test_a_body_cut_at_a_family_boundary_fails_until_a_second_read_says_the_same() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))
    bodies = [exposition("n1", 4)]
    at = read(cfg, lambda r: httpx.Response(200, text=bodies[0]))
    assert len(at(0).gpus) == 4
    # Cut before the engine family: utilisation would silently become GPU_UTIL's, power stays.
    bodies[0] = cut(bodies[0], 12)
    with pytest.raises(UpstreamIncomplete, match="DCGM_FI_PROF_GR_ENGINE_ACTIVE of GPU '0'"):
        at(1)
    # The same again: the endpoint really stopped reporting it.
    assert [r.utilisation for r in at(2).gpus] == [0.4] * 4
    # Back to whole: a larger read is always believed.
    bodies[0] = exposition("n1", 4)
    assert [r.utilisation for r in at(3).gpus] == [0.41] * 4


def test_a_gpu_fewer_than_the_last_good_read_waits_for_a_second_read() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))
    bodies = [exposition("n1", 4)]
    at = read(cfg, lambda r: httpx.Response(200, text=bodies[0]))
    at(0)
    bodies[0] = exposition("n1", 3)
    with pytest.raises(UpstreamIncomplete, match="and 2 more"):
        at(1)
    assert len(at(2).gpus) == 3


# --- per-endpoint judgement ------------------------------------------------------------------


def test_one_single_gpu_endpoint_all_corrupt_keeps_the_others_up() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))
    corrupt = (("DCGM_FI_DEV_GPU_UTIL", "4294967295"), ("DCGM_FI_DEV_POWER_USAGE", "NaN"))
    bodies = {"n1": exposition("n1", 2), "n2": exposition("n2", 1, corrupt)}
    snapshot = read(cfg, lambda r: httpx.Response(200, text=bodies[r.url.host]))(0)
    assert [(r.node, r.utilisation, r.corrupt, r.power_corrupt) for r in snapshot.gpus] == [
        ("n1", 0.41, "", ""),
        ("n1", 0.41, "", ""),
        ("n2", None, "out_of_range", "non_finite"),
    ]
    assert snapshot.dropped == {"out_of_range": 1, "non_finite": 1}
    assert snapshot.endpoints == {"scraped": 2, "failed": 0}


def test_every_endpoint_all_corrupt_fails_the_refresh() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))
    corrupt = (("DCGM_FI_DEV_GPU_UTIL", "NaN"),)
    at = read(cfg, lambda r: httpx.Response(200, text=exposition(r.url.host, 1, corrupt)))
    with pytest.raises(RecordsDropped, match="every utilisation sample was corrupt") as caught:
        at(0)
    assert caught.value.dropped == {"non_finite": 2}


@pytest.mark.parametrize("fault", ["cut", "500"])
def test_a_failed_endpoint_stands_in_from_its_last_good_read_its_samples_unknown(
    fault: str,
) -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))
    faulted: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host in faulted and fault == "500":
            return httpx.Response(500, text="oops")
        text = exposition(host, 2)
        return httpx.Response(200, text=cut(text, 10) if host in faulted else text)

    at = read(cfg, answer)
    at(0)
    faulted.append("n2")
    snapshot = at(1)
    # n2's GPUs are there, held by their pods, every sample unknown and counted; the last good
    # utilisation stands in as for any corrupt sample; power has none: unknown.
    assert [(r.node, r.pod, r.utilisation, r.corrupt, r.power_watts) for r in snapshot.gpus] == [
        ("n1", "", 0.41, "", 300.0),
        ("n1", "p-1", 0.41, "", 300.0),
        ("n2", "", 0.41, "missing_field", None),
        ("n2", "p-1", 0.41, "missing_field", None),
    ]
    assert [r.power_corrupt for r in snapshot.gpus if r.node == "n2"] == ["missing_field"] * 2
    assert snapshot.dropped == {"missing_field": 4}
    assert snapshot.endpoints == {"scraped": 1, "failed": 1}
    # Past max_staleness, the last good read is too old to stand in: the refresh fails.
    with pytest.raises(UpstreamIncomplete if fault == "cut" else Exception, match="n2"):
        at(20)


def test_a_failed_endpoint_never_read_fails_the_listed_urls_refresh() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))

    def answer(request: httpx.Request) -> httpx.Response:
        text = exposition(request.url.host, 2)
        return httpx.Response(200, text=cut(text, 10) if request.url.host == "n2" else text)

    with pytest.raises(UpstreamIncomplete, match=r"http://n2:9400/metrics: .* the body was cut"):
        read(cfg, answer)(0)


def test_an_endpoint_not_read_well_for_max_staleness_is_forgotten() -> None:
    # Discovered pods come and go: a read older than max_staleness neither stands in nor is
    # the measure of the next read, so an address gone for good is not kept for ever.
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))
    assert cfg.max_staleness == timedelta(minutes=15)
    bodies = [exposition("n1", 4)]
    at = read(cfg, lambda r: httpx.Response(200, text=bodies[0]))
    at(0)
    bodies[0] = exposition("n1", 3)
    # Within max_staleness the smaller read waits for a second; past it, it is a first read.
    assert len(at(16).gpus) == 3
    bodies[0] = exposition("n1", 2)
    with pytest.raises(UpstreamIncomplete):
        at(17)
