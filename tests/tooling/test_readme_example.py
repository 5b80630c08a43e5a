"""docs/chargeback.md's second worked example: every figure comes from the real sources and join.

The cluster (tests/tooling/readme_example_upstreams) is served over httpx.MockTransport and read
by each source's own `fetch` (OpenCost `/allocation` and `/assets`, Kueue ClusterQueues and
ResourceFlavors, LiteLLM's team list and aggregated daily activity with API-key breakdowns),
then joined by `exporter.ledger.join.join`. The page's config block is the config; its table and
prose are parsed and compared with the join's month to date, cent by cent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from exporter.calendar import month_start
from exporter.config.schema import Config
from exporter.exposition.catalogue.llm import LLM_UNKNOWN_MODELS
from exporter.exposition.series import series
from exporter.ledger.attribution import IDLE, Attributor
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.join import join
from exporter.ledger.llm import EXTERNAL, weighted_tokens
from exporter.ledger.prices.joined import gpu_prices
from exporter.ledger.result import Chargeback
from exporter.sources.kube_client import build_client as kube_client
from exporter.sources.kueue import source as kueue
from exporter.sources.kueue.records import KueueSnapshot
from exporter.sources.litellm import source as litellm
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost import source as opencost
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.tooling.readme_example_upstreams import (
    GPT4O,
    GPT4O_DEPLOYMENT,
    GPU,
    LLAMA,
    LLAMA_DEPLOYMENT,
    NOW,
    TEAM_IDS,
    kueue_api,
    litellm_api,
    opencost_api,
)

PAGE = (Path(__file__).parents[2] / "docs" / "chargeback.md").read_text(encoding="utf-8")
BEGIN = "<!-- worked-example-2: a test checks every figure against the real sources and join -->\n"
END = "<!-- end worked-example-2 -->"

KEY_ENV = "README_EXAMPLE_LITELLM_KEY"
TEAMS = ("research", "vision", "platform")
COLUMNS = ("gpu", "borrowed", "lent", "llm_serving", "llm_external")


# --- the page -----------------------------------------------------------------------------


def _section() -> str:
    assert BEGIN in PAGE and END in PAGE, "the second worked example lost its markers"
    return PAGE.split(BEGIN, 1)[1].split(END, 1)[0]


def _config(section: str) -> Config:
    """The page's config block, plus the teams and upstream addresses it leaves out."""
    block = re.search(r"```yaml\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None
    raw = yaml.safe_load(block.group(1))
    teams = [{"name": t, "namespaces": [f"ns-{t}"], "cluster_queues": [f"cq-{t}"]} for t in TEAMS]
    teams[2]["namespaces"] = ["ns-serving"]
    for team in teams[:2]:
        team["litellm_teams"] = [TEAM_IDS[str(team["name"])]]
    litellm_cfg = {"url": "http://litellm.invalid:4000", "api_key_env": KEY_ENV}
    raw["teams"] = teams
    raw["sources"] = {
        "opencost": {"url": "http://opencost.invalid:9003"},
        "kueue": {"url": "https://k8s.invalid:6443"},
        "litellm": {**litellm_cfg, **raw["sources"]["litellm"]},
    }
    return Config.model_validate(raw)


def _amount(cell: str) -> float:
    return float(cell.strip().replace(",", "").replace("\u2212", "-"))


def _table(section: str) -> dict[str, dict[str, float]]:
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header == ["team", *COLUMNS, "total"]
    out: dict[str, dict[str, float]] = {}
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0].strip("`")] = {
            h: _amount(c) for h, c in zip(header[1:], cells[1:], strict=True)
        }
    return out


def _money(amount: float) -> str:
    return f"{amount:,.2f}"


# --- the join ------------------------------------------------------------------------------


def _records(config: Config) -> Snapshots:
    sources = config.sources
    assert sources.opencost and sources.kueue and sources.litellm
    oc = opencost.build_client(sources.opencost, httpx.MockTransport(opencost_api))
    kq = kube_client(sources.kueue, httpx.MockTransport(kueue_api))
    ll = litellm.build_client(sources.litellm, transport=httpx.MockTransport(litellm_api))
    with oc, kq, ll:
        return Snapshots(
            opencost=opencost.KIND.fetch_from_config(oc, config, Reading.open(NOW, config.zone)),
            kueue=kueue.KIND.fetch_from_config(kq, config, Reading.open(NOW, config.zone)),
            litellm=litellm.KIND.fetch_from_config(ll, config, Reading.open(NOW, config.zone)),
        )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-readme-example-viewer")


def _join(config: Config, records: Snapshots) -> Chargeback:
    return join(config, Attributor(config), records, Reading.open(NOW, config.zone))


def _month(result: Chargeback) -> Ledger:
    assert result.month is not None
    return result.month


def _team_costs(ledger: Ledger) -> dict[str, dict[str, float]]:
    return {t: {c: ledger.costs.get((t, c), 0.0) for c in COLUMNS} for t in (*TEAMS, IDLE)}


# --- the tests -----------------------------------------------------------------------------


def test_every_cell_and_total_of_the_table_is_the_joins_month_to_date() -> None:
    section = _section()
    config = _config(section)
    ledger = _month(_join(config, _records(config)))
    table = _table(section)
    assert set(table) == {*TEAMS, IDLE, "total"}
    for team, costs in _team_costs(ledger).items():
        printed = table[team]
        assert {c: printed[c] for c in COLUMNS} == {c: round(v, 2) for c, v in costs.items()}, team
        assert printed["total"] == round(sum(costs.values()), 2), team
    for column in COLUMNS:
        column_sum = sum(v for (_, c), v in ledger.costs.items() if c == column)
        assert table["total"][column] == round(column_sum, 2), column
    assert table["total"]["total"] == round(ledger.total(), 2)
    # Nothing the join charged is missing from the table: no other team, no other component.
    shown = {(t, c) for t in (*TEAMS, IDLE) for c in COLUMNS}
    assert {k: v for k, v in ledger.costs.items() if k not in shown and round(v, 2)} == {}


def test_the_month_conserves_gpu_money_plus_converted_external_spend() -> None:
    config = _config(_section())
    records = _records(config)
    ledger = _month(_join(config, records))
    assert records.opencost is not None and records.litellm is not None
    cluster = records.opencost.month.total()
    llm = records.litellm
    external = sum(u.spend or 0.0 for u in llm.usage if u.model == GPT4O) * llm.exchange_rate
    assert ledger.total() == pytest.approx(cluster + external)
    table = _table(_section())["total"]
    assert table["total"] == pytest.approx(round(cluster, 2) + round(external, 2))
    assert table["gpu"] + table["borrowed"] + table["lent"] == pytest.approx(round(cluster, 2))
    assert table["llm_external"] == round(external, 2)


def test_the_hourly_rate_is_the_month_over_its_hours() -> None:
    config = _config(_section())
    result = _join(config, _records(config))
    assert result.hourly is not None
    hours = (NOW - month_start(NOW, config.zone)).total_seconds() / 3600
    month = _team_costs(_month(result))
    for team, costs in _team_costs(result.hourly).items():
        assert costs == pytest.approx({c: v / hours for c, v in month[team].items()}), team


def _prose(section: str) -> str:
    text = re.sub(r"```.*?```", "", section, flags=re.DOTALL)
    return " ".join(line for line in text.splitlines() if not line.startswith("|"))


def _blended(config: Config, records: Snapshots) -> dict[str, dict[str, float]]:
    """The same month with one price for every GPU: no flavor prices, no ResourceFlavors."""
    assert records.kueue is not None
    plain = config.model_copy(update={"gpu_flavor_prices": {}})
    bare = Snapshots(opencost=records.opencost, kueue=KueueSnapshot(records.kueue.queues))
    return _team_costs(_month(_join(plain, bare)))


def _millions(tokens: float) -> str:
    assert tokens % 1_000_000 == 0
    return f"{tokens / 1_000_000:.0f}M"


def _usage(llm: LiteLLMSnapshot, team: str, model: str) -> tuple[int, int, float]:
    rows = [u for u in llm.usage if u.team_id == TEAM_IDS[team] and u.model == model]
    assert rows and all(u.deployment != u.model for u in rows)
    spend = sum(u.spend or 0.0 for u in rows)
    return sum(u.prompt_tokens for u in rows), sum(u.completion_tokens for u in rows), spend


def _quota(records: Snapshots, queue: str, flavor: str) -> tuple[float, float, float]:
    assert records.kueue is not None
    (row,) = [
        q
        for q in records.kueue.queues
        if (q.cluster_queue, q.flavor, q.resource) == (queue, flavor, GPU)
    ]
    return row.nominal, row.usage, row.borrowed


def _setup_phrases(records: Snapshots) -> Iterator[str]:
    """The set-up's claims: nodes, prices and quota as the sources read them."""
    assert records.opencost is not None and records.opencost.gpu_nodes is not None
    yield f"the month to date is {records.opencost.month.hours:.0f} hours"
    nodes = {n.name: n for n in records.opencost.gpu_nodes}
    big, small = nodes["node-h"], nodes["node-l"]
    yield f"node-h has {big.gpu_count:.0f} NVIDIA H100 80GB HBM3 that OpenCost charges"
    yield f"charges {big.price:.2f} per GPU-hour"
    yield f"node-l {small.gpu_count:.0f} NVIDIA L40S at {small.price:.2f}"
    yield f"{_money(records.opencost.rate.total())} an hour"
    yield f"{_money(records.opencost.month.total())} so far"
    nominal, used, _ = _quota(records, "cq-research", "h100")
    yield f"research holds {nominal:.0f} H100 and runs {used:.0f}"
    l_nominal, l_used, _ = _quota(records, "cq-vision", "l40s")
    h_nominal, _, borrowed = _quota(records, "cq-vision", "h100")
    yield (
        f"vision holds {l_nominal:.0f} L40S and {h_nominal:.0f} H100 and runs {l_used:.0f} L40S"
        f" and {borrowed:.0f} borrowed H100"
    )
    yield f"platform holds {_quota(records, 'cq-platform', 'l40s')[0]:.0f} L40S"


def _llm_phrases(config: Config, llm: LiteLLMSnapshot) -> Iterator[str]:
    """The LiteLLM claims: tokens, spend in USD, weights and the conversion."""
    rate, weight = config.sources.litellm.rate, config.llm_completion_weight  # type: ignore[union-attr]
    assert rate is not None
    weighted = {}
    for team in ("research", "vision"):
        prompt, completion, _ = _usage(llm, team, LLAMA)
        yield f"{_millions(prompt)} prompt and {_millions(completion)} completion tokens"
        weighted[team] = weighted_tokens(prompt, completion, weight)
        spend = _usage(llm, team, GPT4O)[2]
        yield f"spent USD {_money(spend)} on `gpt-4o`"
        yield f"USD {_money(spend)} becomes {_money(spend * rate)}"
    for model, deployment in sorted({(u.model, u.deployment) for u in llm.usage}):
        yield f"`{model}` for `{deployment}`"
    yield f"`prompt + {weight:g} x completion`"
    yield f"{_millions(weighted['research'])} from research and {_millions(weighted['vision'])}"
    llama_spend = sum(_usage(llm, t, LLAMA)[2] for t in ("research", "vision"))
    yield f"LiteLLM's own USD {_money(llama_spend)} for `llama-3-70b`"
    yield f"converted at {rate}"


def _phrases(config: Config, records: Snapshots) -> Iterator[str]:
    """The prose's claims, each with the figures the sources and the join give."""
    assert records.opencost is not None and records.litellm is not None
    yield from _setup_phrases(records)
    yield from _llm_phrases(config, records.litellm)
    prices = gpu_prices(config.model_copy(update={"gpu_flavor_prices": {}}), records)
    assert prices is not None and prices.blended is not None
    # The config's flavor prices are what OpenCost charges, as its comment says.
    assert config.gpu_flavor_prices == {f: prices.flavor(f) for f in ("h100", "l40s")}
    gpus = sum(n.gpu_count for n in records.opencost.gpu_nodes or ())
    rate = _money(records.opencost.rate.total())
    yield f"one blended price ({rate} / {gpus:.0f} = {prices.blended:.2f})"
    costs = _blended(config, records)
    month = _month(_join(config, records))
    research, platform = costs["research"], costs["platform"]
    yield f"research would have paid {_money(research['gpu'])} less {_money(-research['lent'])}"
    yield f"platform {_money(platform['gpu'])} for its L40S"
    yield f"{_money(platform['gpu'] - month.costs[('platform', 'gpu')])} of research's H100"
    external = sum(v for (_, c), v in month.costs.items() if c == EXTERNAL)
    yield f"OpenCost's {_money(records.opencost.month.total())} plus {_money(external)} billed"
    yield f"divided by {records.opencost.month.hours:.0f}"


def test_every_figure_in_the_prose_comes_from_the_sources_and_the_join() -> None:
    section = _section()
    config = _config(section)
    prose = _prose(section)
    phrases = list(_phrases(config, _records(config)))
    missing = [p for p in phrases if p not in prose]
    assert missing == [], "the page's prose no longer says what the join gives"
    # And no money figure in the prose escapes the checks above.
    checked = {m for p in phrases for m in re.findall(r"\d[\d,]*\.\d\d", p)}
    assert set(re.findall(r"\d[\d,]*\.\d\d", prose)) <= checked


def test_the_config_prices_are_optional_here() -> None:
    config = _config(_section())
    records = _records(config)
    plain = config.model_copy(update={"gpu_flavor_prices": {}})
    # Without them each flavor's price comes from its nodes in OpenCost: the same month.
    without = {k: v for k, v in _month(_join(plain, records)).costs.items() if round(v, 9)}
    with_prices = {k: v for k, v in _month(_join(config, records)).costs.items() if round(v, 9)}
    assert without == pytest.approx(with_prices)


def test_the_public_names_differ_from_the_deployments_and_are_declared() -> None:
    config = _config(_section())
    records = _records(config)
    assert records.litellm is not None
    names = {(u.model, u.deployment) for u in records.litellm.usage}
    assert names == {(LLAMA, LLAMA_DEPLOYMENT), (GPT4O, GPT4O_DEPLOYMENT)}
    # Declared by public name: nothing is unknown, so nothing self-hosted was billed as spend.
    declared = {m.model for m in config.llm_models}
    assert declared == {LLAMA, GPT4O}
    result = _join(config, records)
    unknown = [s.value for s in series(result) if s.family is LLM_UNKNOWN_MODELS]
    assert unknown == [0.0]
