"""FOCUS rows by a dimension (`report --format focus --by NAME`): each row split by value.

Every row of a team and component is split over the dimension's values in the proportions the
month's join gave that team's component (`DimensionCosts.by_team`), its cents by largest
remainder so the parts add up to the row, its quantity likewise to the sixth decimal. Each part
carries the value in `Tags` under the dimension's name beside `team`, so a FOCUS reader can
group by either. Days are split in the month's proportions: a day's own mix is not kept.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import msgspec

from exporter.finance.focus.columns import FocusRow
from exporter.finance.footing import largest_remainder
from exporter.ledger.attribution import OTHER, UNALLOCATED
from exporter.ledger.dimensions import DimensionCosts

__all__ = ["DimensionShares", "dimension_shares", "split_rows"]

_QUANTITY = Decimal("0.000001")


@dataclass(frozen=True)
class DimensionShares:
    """A dimension's name and, per (team, component), the money each value took."""

    name: str
    shares: Mapping[tuple[str, str], Mapping[str, float]]


def dimension_shares(costs: DimensionCosts, folded_teams: Iterable[str]) -> DimensionShares:
    """The month's shares, with teams folded into `__other__` as the report folds them."""
    gone = set(folded_teams)
    shares: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (team, value, component), amount in sorted(costs.by_team.items()):
        shares[(OTHER if team in gone else team, component)][value] += amount
    return DimensionShares(costs.name, {k: dict(v) for k, v in shares.items()})


def split_rows(rows: Sequence[FocusRow], by: DimensionShares) -> list[FocusRow]:
    """Every row split by value; a part with neither cents nor quantity is left out."""
    out: list[FocusRow] = []
    for row in rows:
        weights = by.shares.get((row.SubAccountId, row.x_Component)) or {UNALLOCATED: 1.0}
        values = sorted(weights)
        cents = int((Decimal(row.BilledCost) * 100).to_integral_value())
        parts = _split_cents(cents, [Decimal(repr(weights[v])) for v in values])
        quantities = _split_quantity(row.ConsumedQuantity, [abs(weights[v]) for v in values])
        for value, part, quantity in zip(values, parts, quantities, strict=True):
            if part or (quantity is not None and Decimal(quantity) > 0):
                out.append(_part(row, by.name, value, part, quantity))
    return out


def _split_cents(cents: int, weights: list[Decimal]) -> list[int]:
    total = sum(weights, Decimal(0))
    sign = 1 if cents >= 0 else -1
    if total == 0 or any(w * sign < 0 for w in weights) or any(w * total < 0 for w in weights):
        # Mixed signs cannot be apportioned by weight: the first value keeps the row whole.
        return [cents, *([0] * (len(weights) - 1))]
    exact = [Decimal(cents) * w / total for w in weights]
    exact[-1] = Decimal(cents) - sum(exact[:-1], Decimal(0))
    return largest_remainder(exact, cents)


def _split_quantity(quantity: str | None, weights: list[float]) -> list[str | None]:
    if quantity is None:
        return [None] * len(weights)
    whole, total = Decimal(quantity), sum(weights)
    if total <= 0:
        return [quantity, *(["0.0"] * (len(weights) - 1))]
    parts = [(whole * Decimal(repr(w / total))).quantize(_QUANTITY) for w in weights]
    parts[-1] = whole - sum(parts[:-1], Decimal(0))  # the parts add up to the row's quantity
    return [_number(p) for p in parts]


def _number(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    if text in ("-0", "0"):
        text = "0"
    return text if "." in text else f"{text}.0"


def _part(row: FocusRow, name: str, value: str, cents: int, quantity: str | None) -> FocusRow:
    money = format((Decimal(cents) / 100).quantize(Decimal("0.01")), "f")
    tags = {**json.loads(row.Tags), name: value}
    return msgspec.structs.replace(
        row,
        BilledCost=money,
        ContractedCost=money,
        EffectiveCost=money,
        ListCost=money,
        ConsumedQuantity=quantity,
        PricingQuantity=quantity,
        ChargeDescription=f"{row.ChargeDescription}, {name} {value}",
        Tags=json.dumps(tags, sort_keys=True),
    )
