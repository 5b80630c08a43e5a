"""The statement's advice section: what each team could save a month, and what was withheld.

Every cell that came from an upstream (teams, workloads, details) is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from decimal import Decimal

from exporter.finance.report import labels
from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.page import note
from exporter.ledger.advice import AdviceSet

__all__ = ["advice_html", "advice_rows"]

ALTERNATIVES = (
    "Advice only: nothing is changed. A saving is a month at the GPU-hour price applied to the "
    "team; mig (a smaller MIG profile fits) and idle (release the GPU) on one workload are "
    "alternatives, not a sum. Window seen is the share of the window the evidence covers."
)


def advice_rows(advice: AdviceSet, numbers: Numbers) -> list[list[str]]:
    """The header, then a row per advice: team, workload, advice, saving, evidence, surety."""
    head = ["Team", "Workload", "Advice", "Saves a month", "Peak memory", "Peak activity"]
    rows = [[*head, "Window seen"]]
    for a in advice.advice:
        memory = "" if a.framebuffer is None else f"{numbers.count(round(a.framebuffer.max))} MiB"
        if a.activity is None:
            activity = ""
        elif a.kind == "quota":
            activity = f"{numbers.amount(a.activity.max)} GPUs"
        else:
            activity = numbers.percent(100 * a.activity.max)
        rows.append(
            [
                labels.team(a.team), a.workload, a.action,
                numbers.amount(Decimal(format(a.saving, ".2f"))), memory, activity,
                numbers.percent(100 * a.coverage),
            ]
        )  # fmt: skip
    return rows


def _table(lines: Sequence[Sequence[str]], caption: str) -> str:
    head, *body = lines
    out = [
        f'<div class="table" role="region" tabindex="0" aria-label="{html.escape(caption)}">'
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
    ]
    out += [f'<th scope="col">{html.escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for row in body:
        cells = [f'<th scope="row">{html.escape(row[0])}</th>']
        cells += [f"<td>{html.escape(c)}</td>" for c in row[1:]]
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def advice_html(statement: Statement, numbers: Numbers) -> list[str]:
    """The advice table and its note, then the withheld; nothing without advice."""
    advice = statement.report.advice
    if advice is None:
        return []
    days = f"{advice.window_seconds / 86_400:g}"
    currency = statement.report.currency
    out = []
    if advice.advice:
        caption = f"Right-sizing advice over the last {days} days ({currency} a month)"
        out += [_table(advice_rows(advice, numbers), caption), note(ALTERNATIVES)]
    if advice.withheld:
        lines = [["Team", "Workload", "Reason", "Why"]]
        lines += [[labels.team(w.team), w.workload, w.reason, w.detail] for w in advice.withheld]
        out.append(_table(lines, "No advice: history too thin or bad"))
    return out
