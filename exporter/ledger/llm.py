"""LLM chargeback (pure): LiteLLM usage and budgets as samples, and LLM money into the ledger.

Two kinds of model, so that no token is paid twice:

- `external`: a provider bills it, so its LiteLLM spend is new money, added to the sending
  team as component `llm_external`. Models the config does not declare are treated the same
  way, and reported.
- `self_hosted`: its hardware is already in OpenCost, on the team that owns the serving
  namespace. That cost is moved to the teams that sent the tokens, in proportion to weighted
  tokens `prompt + w * completion` (decode costs more than prefill): `-X` on the serving team,
  `+x_i` on the consumers, summing to zero. LiteLLM's own spend for it is an internal price and
  never enters the ledger; it is only compared with the measured cost (pricing drift).

Models are named as teams call them: LiteLLM's `model_group` (the public `model_name`), which
every series carries. A declaration `llm_models[].model` matches that name, or the provider
model of one deployment behind it (LiteLLM's `model`), which wins: one public name can be
served by a self-hosted deployment and an external one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config, ModelDecl
from exporter.exposition.catalogue import (
    LLM_BUDGET_MAX,
    LLM_BUDGET_RESET_TIMESTAMP_SECONDS,
    LLM_BUDGET_SOFT,
    LLM_BUDGET_SPEND,
    LLM_COST_PER_TOKEN,
    LLM_RECOMMENDED_COST_PER_TOKEN,
    LLM_REQUESTS_MONTH_TO_DATE,
    LLM_SPEND_MONTH_TO_DATE,
    LLM_TOKENS_MONTH_TO_DATE,
    LLM_UNKNOWN_MODELS,
)
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.chargeback import Ledger
from exporter.ledger.costs import Window, serving_costs
from exporter.sources.litellm.source import ModelUsage, TeamBudget

__all__ = [
    "LlmReport",
    "ModelPricing",
    "Routed",
    "TeamModelUsage",
    "apply_llm",
    "apply_llm_to",
    "declaration",
    "llm_budget_state_samples",
    "llm_pricing_samples",
    "llm_report_samples",
    "llm_usage_samples",
    "model_pricing",
    "route",
    "serving_namespaces",
    "team_model_usage",
    "weighted_tokens",
]

EXTERNAL = "llm_external"
SERVING = "llm_serving"


@dataclass(frozen=True)
class LlmReport:
    """What apply_llm did: external money added, serving cost moved, and what it could not price.

    `external_spend` is already multiplied by `llm_scale`; `moved` is the serving cost
    re-attributed per namespace; `unpriced_models` are external models with tokens but no spend
    reported by the proxy (their money is unknown, so none was added).
    """

    unknown_models: tuple[str, ...]
    external_spend: float
    moved: Mapping[str, float]
    unpriced_models: tuple[str, ...]


def weighted_tokens(prompt: float, completion: float, weight: float) -> float:
    """Tokens weighted by cost to serve: prompt + weight x completion."""
    return prompt + weight * completion


def _team(record: ModelUsage | TeamBudget, attributor: Attributor) -> str:
    if record.team_id is None:
        return UNALLOCATED  # LiteLLM's "Unassigned": a key that belongs to no team
    return attributor.team_for_litellm(record.team_id, record.alias)


@dataclass(frozen=True)
class Routed:
    """Usage records in the order they are summed in, each with its team and its declaration.

    It depends on the snapshot, the declarations and the attributor only: a join keeps it per
    LiteLLM snapshot and routes each record once, not once per window and per rebuild.
    """

    rows: tuple[tuple[ModelUsage, str, ModelDecl | None], ...]


def route(
    usage: Iterable[ModelUsage], models: tuple[ModelDecl, ...], attributor: Attributor
) -> Routed:
    """Sort the records and find each one's team and declaration."""
    declared = {m.model: m for m in models}
    ordered = sorted(usage, key=_order)
    return Routed(tuple((r, _team(r, attributor), declaration(r, declared)) for r in ordered))


# --- (a) usage and budget samples ------------------------------------------------------------


@dataclass(frozen=True)
class TeamModelUsage:
    """A team's month-to-date use of one model; `spend` is None when the proxy did not say."""

    spend: float | None
    prompt_tokens: int
    completion_tokens: int
    requests: int


def team_model_usage(
    usage: Iterable[ModelUsage] | Routed, attributor: Attributor
) -> dict[tuple[str, str], TeamModelUsage]:
    """Month-to-date use per (team, model), summed over the LiteLLM teams that map to the team.

    Several LiteLLM teams can land on one team (e.g. unmapped ones on `__unallocated__`). A spend
    the proxy did not report makes the group's spend unknown rather than too low.
    """
    spend: dict[tuple[str, str], float | None] = {}
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    rows = usage.rows if isinstance(usage, Routed) else route(usage, (), attributor).rows
    for record, team, _ in rows:
        key = (team, record.model)
        before = spend.get(key, 0.0)
        spend[key] = None if before is None or record.spend is None else before + record.spend
        acc = counts[key]
        acc[0] += record.prompt_tokens
        acc[1] += record.completion_tokens
        acc[2] += record.requests
    return {key: TeamModelUsage(spend[key], *counts[key]) for key in sorted(counts)}


def llm_usage_samples(totals: Mapping[tuple[str, str], TeamModelUsage]) -> list[Sample]:
    """Month-to-date spend, tokens and requests per team and model; unknown spend is left out."""
    out: list[Sample] = []
    for (team, model), use in sorted(totals.items()):
        if use.spend is not None:
            out.append(Sample.of(LLM_SPEND_MONTH_TO_DATE, use.spend, team=team, model=model))
        for direction, tokens in (
            ("prompt", use.prompt_tokens),
            ("completion", use.completion_tokens),
        ):
            out.append(
                Sample.of(
                    LLM_TOKENS_MONTH_TO_DATE, tokens, team=team, model=model, direction=direction
                )
            )
        out.append(Sample.of(LLM_REQUESTS_MONTH_TO_DATE, use.requests, team=team, model=model))
    return out


def llm_budget_state_samples(teams: Iterable[TeamBudget], attributor: Attributor) -> list[Sample]:
    """LiteLLM budget window per team: spend, max, soft, and the next reset as unix seconds.

    When several LiteLLM teams map to one team, spends add up; a cap is exported only when every
    one of them has it (a team without a cap makes the sum uncapped), and the reset is the
    earliest.
    """
    groups: dict[str, list[TeamBudget]] = defaultdict(list)
    for record in teams:
        groups[_team(record, attributor)].append(record)
    out: list[Sample] = []
    for team in sorted(groups):
        members = groups[team]
        spends = [m.spend for m in members if m.spend is not None]
        if spends:
            out.append(Sample.of(LLM_BUDGET_SPEND, sum(spends), team=team))
        for family, values in (
            (LLM_BUDGET_MAX, [m.max_budget for m in members]),
            (LLM_BUDGET_SOFT, [m.soft_budget for m in members]),
        ):
            known = [v for v in values if v is not None]
            if known and len(known) == len(values):
                out.append(Sample.of(family, sum(known), team=team))
        resets = [m.budget_reset_at for m in members if m.budget_reset_at is not None]
        if resets:
            stamp = min(resets).timestamp()
            out.append(Sample.of(LLM_BUDGET_RESET_TIMESTAMP_SECONDS, stamp, team=team))
    return out


def llm_report_samples(report: LlmReport) -> list[Sample]:
    """How many models LiteLLM saw that the config does not declare."""
    return [Sample.of(LLM_UNKNOWN_MODELS, float(len(report.unknown_models)))]


# --- (b) money into the ledger ---------------------------------------------------------------


def apply_llm(
    ledger: Ledger,
    usage: Iterable[ModelUsage] | Routed,
    models: tuple[ModelDecl, ...],
    attributor: Attributor,
    serving_cost: Mapping[str, Mapping[str, float]],
    weight: float,
    llm_scale: float,
    weights: Mapping[str, float] | None = None,
) -> tuple[Ledger, LlmReport]:
    """A new ledger with external LLM spend added and self-hosted serving cost re-attributed.

    Args:
        ledger: the cost ledger of one window (month to date, or the hourly rate); not changed.
        usage: month-to-date LiteLLM usage per LiteLLM team and model (or it routed).
        models: the config's model declarations.
        attributor: maps LiteLLM teams to teams.
        serving_cost: serving namespace -> {team: cost placed on that team from that namespace},
            in the same window as `ledger`.
        weight: the completion weight w in `prompt + w * completion`.
        llm_scale: turns month-to-date spend into the ledger's window (1.0 for the month,
            1 / hours elapsed for the hourly rate).
        weights: a declaration's own w, by its model (measured, ledger/weights.py), used
            instead of `weight` for its tokens.

    Conservation: the new total equals the old total plus `report.external_spend`; the
    `llm_serving` components sum to zero.
    """
    rows = usage.rows if isinstance(usage, Routed) else route(usage, models, attributor).rows
    out = Ledger(dict(ledger.costs), dict(ledger.fallback))
    unknown: set[str] = set()
    unpriced: set[str] = set()
    external = 0.0
    tokens: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record, team, decl in rows:
        if decl is None:
            unknown.add(record.model)
        if decl is not None and decl.self_hosted is not None:
            own = (weights or {}).get(decl.model, weight)
            w = weighted_tokens(record.prompt_tokens, record.completion_tokens, own)
            tokens[decl.self_hosted.namespace][team] += w
        elif record.spend is None:
            if record.prompt_tokens or record.completion_tokens:
                unpriced.add(record.model)
        else:
            amount = record.spend * llm_scale
            out.add(team, EXTERNAL, amount)
            external += amount
    moved = {ns: _reattribute(out, serving_cost.get(ns, {}), tokens[ns]) for ns in sorted(tokens)}
    report = LlmReport(tuple(sorted(unknown)), external, moved, tuple(sorted(unpriced)))
    return out, report


def _order(record: ModelUsage) -> tuple[str, str, str, str]:
    # Sorted so that float sums never depend on the order the proxy listed things in.
    return (record.model, record.deployment, record.team_id or "", record.alias or "")


def declaration(record: ModelUsage, declared: Mapping[str, ModelDecl]) -> ModelDecl | None:
    """The declaration of a record's model: by its deployment's provider model, else its name."""
    if record.deployment and record.deployment in declared:
        return declared[record.deployment]
    return declared.get(record.model)


def _reattribute(
    ledger: Ledger, costs: Mapping[str, float], consumers: Mapping[str, float]
) -> float:
    """Move each serving team's cost onto consumers by weighted tokens; returns the cost moved."""
    total_weight = sum(consumers[t] for t in sorted(consumers))
    if total_weight <= 0:
        return 0.0  # nobody sent tokens: the hardware cost stays where OpenCost put it
    ordered = sorted(t for t in consumers if consumers[t] > 0)
    moved = 0.0
    for server in sorted(costs):
        cost = costs[server]
        if not cost:
            continue
        ledger.add(server, SERVING, -cost)
        given = 0.0
        for team in ordered[:-1]:
            share = cost * consumers[team] / total_weight
            ledger.add(team, SERVING, share)
            given += share
        # The last consumer takes the remainder, so the shares add up to exactly the cost.
        ledger.add(ordered[-1], SERVING, cost - given)
        moved += cost
    return moved


# --- (c) pricing drift -----------------------------------------------------------------------


@dataclass(frozen=True)
class ModelPricing:
    """Cost per weighted token of a self-hosted model: declared, measured, and the fix."""

    model: str
    declared: float | None  # None when the proxy did not report the model's spend
    measured: float
    recommended_input: float
    recommended_output: float
    weight: float  # the completion weight its tokens were weighted by


def model_pricing(
    usage: Iterable[ModelUsage] | Routed,
    models: tuple[ModelDecl, ...],
    serving_cost: Mapping[str, Mapping[str, float]],
    weight: float,
    weights: Mapping[str, float] | None = None,
) -> list[ModelPricing]:
    """Declared vs measured cost per weighted token of each self-hosted model, and the fix.

    With W = prompt + w x completion over the month: declared = LiteLLM spend / W; measured =
    serving cost of the namespace / W of every model it serves. LiteLLM bills
    `prompt x input + completion x output`; choosing `output = w x input` makes that
    `input x (prompt + w x completion) = input x W`, so the price that recovers the measured cost
    is `input = serving cost / W` and `output = w x input`. Pass the month-to-date serving cost.
    A model with its own weight in `weights` (by declaration) is weighted and priced by it.
    """
    if isinstance(usage, Routed):
        routed = [(record, decl) for record, _, decl in usage.rows]
    else:
        decls = {m.model: m for m in models}
        routed = [(r, declaration(r, decls)) for r in sorted(usage, key=_order)]
    hosted: dict[str, str] = {}  # public name -> serving namespace
    own: dict[str, float] = {}  # public name -> its completion weight
    per_model: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    unknown_spend: set[str] = set()
    for record, decl in routed:
        if decl is None or decl.self_hosted is None:
            continue
        hosted.setdefault(record.model, decl.self_hosted.namespace)
        w = (weights or {}).get(decl.model, weight)
        own.setdefault(record.model, w)
        acc = per_model[record.model]
        acc[0] += weighted_tokens(record.prompt_tokens, record.completion_tokens, w)
        if record.spend is None:
            unknown_spend.add(record.model)
        else:
            acc[1] += record.spend
    ns_weight: dict[str, float] = defaultdict(float)
    for model in sorted(per_model):
        ns_weight[hosted[model]] += per_model[model][0]
    out: list[ModelPricing] = []
    for model in sorted(per_model):
        w_tokens, spend = per_model[model]
        if w_tokens <= 0:
            continue
        declared = None if model in unknown_spend else spend / w_tokens
        measured = sum(serving_cost.get(hosted[model], {}).values()) / ns_weight[hosted[model]]
        w = own[model]
        out.append(ModelPricing(model, declared, measured, measured, w * measured, w))
    return out


def llm_pricing_samples(pricing: Iterable[ModelPricing]) -> list[Sample]:
    """`llm_cost_per_token` (declared, measured) and the recommended LiteLLM prices."""
    out: list[Sample] = []
    for p in pricing:
        if p.declared is not None:
            out.append(Sample.of(LLM_COST_PER_TOKEN, p.declared, model=p.model, basis="declared"))
        out.append(Sample.of(LLM_COST_PER_TOKEN, p.measured, model=p.model, basis="measured"))
        for direction, price in (
            ("input", p.recommended_input),
            ("output", p.recommended_output),
        ):
            out.append(
                Sample.of(LLM_RECOMMENDED_COST_PER_TOKEN, price, model=p.model, direction=direction)
            )
    return out


# --- (d) one window of the join --------------------------------------------------------------


def serving_namespaces(config: Config) -> list[str]:
    """The namespaces that serve the config's self-hosted models."""
    return [m.self_hosted.namespace for m in config.llm_models if m.self_hosted is not None]


def apply_llm_to(
    window: Window,
    usage: Iterable[ModelUsage] | Routed,
    config: Config,
    attributor: Attributor,
    weights: Mapping[str, float] | None = None,
) -> tuple[Window, LlmReport]:
    """`apply_llm` on one window: its serving cost and LLM scale come from the window itself."""
    serving = {
        ns: {team: cost * window.scale for team, cost in teams.items()}
        for ns, teams in serving_costs(window.lines, serving_namespaces(config)).items()
    }
    ledger, report = apply_llm(
        window.ledger,
        usage,
        config.llm_models,
        attributor,
        serving,
        config.llm_completion_weight,
        window.llm_scale,
        weights,
    )
    return window.with_ledger(ledger), report
