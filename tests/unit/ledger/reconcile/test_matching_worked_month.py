"""docs/reconciliation.md's worked month: every figure of its tables computed from its inputs."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm.usage import TeamModelUsage
from exporter.ledger.reconcile import BillFigures, Reconciliation, reconcile, recorded_of
from exporter.ledger.reconcile.apply import true_ups, with_true_ups
from exporter.sources.bills.lines import BillKind, BillSnapshot
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot
from tests.unit.ledger.reconcile.builders import bills_config, cluster_line, llm_line, snapshot

PAGE = Path(__file__).parents[4] / "docs" / "reconciliation.md"
FEBRUARY = [date(2026, 2, 1) + timedelta(days=n) for n in range(28)]
D2, D3 = date(2026, 2, 2), date(2026, 2, 3)
START = datetime(2026, 2, 1, tzinfo=UTC)
CONFIG = bills_config(
    {
        "openai": {"type": "openai", "admin_key_env": "OPENAI_ADMIN_KEY", "true_up": True},
        "anthropic": {"type": "anthropic", "admin_key_env": "ANTHROPIC_KEY", "true_up": True},
        "cur": {"type": "focus", "path": "/exports", "true_up": True},
    },
    currency_rates={"USD": 0.8},
)
# The gateway's spend per (day, public name, deployment), and per team and public name.
GATEWAY = {
    (D2, "gpt-4o", "gpt-4o-2024-08-06"): 40.0,
    (D3, "gpt-4o", "gpt-4o-2024-08-06"): 30.0,
    (D2, "gpt-4o-mini", "gpt-4o-mini-2024-07-18"): 5.0,
    (D2, "claude-sonnet-4", "claude-sonnet-4-20250514"): 18.4,
}
TEAM_SPEND = {
    ("research", "gpt-4o"): 50.0,
    ("vision", "gpt-4o"): 20.0,
    ("research", "gpt-4o-mini"): 5.0,
    ("vision", "claude-sonnet-4"): 18.4,
}
HARDWARE = {"research": 1128.96, "vision": 752.64}


def _bills() -> dict[str, BillSnapshot]:
    usd = {"currency": "USD"}
    openai = [
        llm_line("openai", D2, "gpt-4o-2024-08-06, input", 40.0, **usd),
        llm_line("openai", D2, "gpt-4o-2024-08-06, output", 15.0, **usd),
        llm_line("openai", D3, "gpt-4o-2024-08-06, input", 37.5, **usd),
        llm_line("openai", D2, "gpt-4o-mini-2024-07-18, input", 6.25, **usd),
    ]
    words = "Claude Sonnet 4 Usage - Input Tokens"
    anthropic = [
        llm_line("anthropic", D2, words, 23.0, **usd),
        llm_line("anthropic", D3, words, 12.5, **usd),
    ]
    cur = [cluster_line("cur", day, "i-0a1", 72.0) for day in FEBRUARY]
    return {
        "openai": snapshot("openai", BillKind.LLM, openai, FEBRUARY),
        "anthropic": snapshot("anthropic", BillKind.LLM, anthropic, FEBRUARY),
        "cur": snapshot("cur", BillKind.CLUSTER, cur, FEBRUARY),
    }


def _month() -> Reconciliation:
    node = Allocation("i-0a1/ml/train", "ml", "i-0a1", {}, {}, {"gpu": 1881.6}, 672.0)
    month = AllocationSet(START, START + timedelta(days=28), (node,), {})
    opencost = OpenCostSnapshot(rate=month, month=month)
    litellm = LiteLLMSnapshot((), (), daily_spend=GATEWAY)
    recorded = recorded_of(litellm, opencost, {})
    return reconcile(CONFIG, "EUR", _bills(), recorded, FEBRUARY, closed=True)


def _money(value: float) -> str:
    return str(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _bill_row(b: BillFigures) -> str:
    ratio = f"{b.ratio:.4f}" if b.ratio is not None else "-"
    cells = [b.source, b.provider, b.scope, b.currency, f"{b.rate:g}"]
    money = [_money(v) for v in (b.billed, b.recorded, b.difference)]
    return "| " + " | ".join([*cells, *money, ratio]) + " |"


def _rows(found: Reconciliation) -> list[str]:
    rows = [_bill_row(b) for b in found.bills]
    for b in found.bills:
        for u in b.unmatched:
            day = u.day.isoformat() if u.day is not None else "month"
            money = [_money(v) for v in (u.billed, u.recorded, u.amount)]
            rows.append("| " + " | ".join([b.source, u.line, day, *money]) + " |")
    return rows


def test_every_figure_of_the_worked_month_is_on_the_page() -> None:
    page = PAGE.read_text(encoding="utf-8")
    found = _month()
    assert all(b.month_closed and len(b.days_billed) == 28 for b in found.bills)
    ledger = Ledger()
    for team, amount in HARDWARE.items():
        ledger.add(team, Component.GPU, amount)
    for (team, _), spend in TEAM_SPEND.items():
        ledger.add(team, Component.LLM_EXTERNAL, spend)
    usage = {key: TeamModelUsage(spend, 0, 0, 0) for key, spend in TEAM_SPEND.items()}
    ups = true_ups(found, usage, ledger, {})
    rows = _rows(found)
    assert len(rows) == 6
    for up in ups:
        for team, amount in sorted(up.teams.items()):
            rows.append(f"| {up.source} | {team} | {_money(amount)} |")
    trued = with_true_ups(ledger, ups)
    totals = [0.0, 0.0, 0.0, 0.0]
    for team in sorted(HARDWARE):
        parts = [
            trued.costs.get((team, Component.GPU), 0.0),
            trued.costs.get((team, Component.LLM_EXTERNAL), 0.0),
            trued.costs.get((team, Component.TRUE_UP), 0.0),
        ]
        figures = [*parts, sum(parts)]
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
        rows.append(f"| {team} | " + " | ".join(_money(v) for v in figures) + " |")
    rows.append("| total | " + " | ".join(_money(v) for v in totals) + " |")
    missing = [row for row in rows if row not in page]
    assert not missing, missing
    invoices = sum(b.billed for b in found.bills)
    assert _money(invoices) == _money(totals[3]) == "2123.40"
