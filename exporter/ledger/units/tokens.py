"""Cost per million tokens and per request, per model and per team and model (pure).

Tokens are prompt plus completion, as the provider and the articles count them; the weight
`w` only decides how a serving namespace's cost is shared, never what a token is.

- A team's cost of a model is what it paid for it this month: for an external (or undeclared)
  model its LiteLLM spend; for a self-hosted one its share of the serving namespace's cost, by
  weighted tokens `prompt + w x completion` (the shares `apply_llm` moves, split per model).
- Per model: declared is LiteLLM's spend over the model's tokens (an internal price, for a
  self-hosted model); measured, for a self-hosted model, is its share of the serving cost over
  its tokens.
- Per million = cost / tokens x 1,000,000; per request = cost / requests.

The identity behind it: a GPU costing C an hour serving T tokens a second costs
C / (T x 3,600) x 1,000,000 per million tokens (5.60 an hour at 2,000 tokens/s: 0.78).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config, ModelDecl
from exporter.ledger.llm import Routed, weighted_tokens

__all__ = [
    "EXTERNAL",
    "SELF_HOSTED",
    "UNDECLARED",
    "ModelTokenCost",
    "TeamTokenCost",
    "WeightOf",
    "cost_per_million_tokens",
    "per_million",
    "token_costs",
    "weight_of",
]

MILLION = 1_000_000.0
EXTERNAL, SELF_HOSTED, UNDECLARED = "external", "self_hosted", "undeclared"
# The completion weight of a model by its public name.
WeightOf = Callable[[str], float]


def weight_of(config: Config, weights: Mapping[str, float] | None = None) -> WeightOf:
    """Each model's completion weight `w`: its own (measured, ledger/llm/weights.py), else the
    config's.

    The same weights the ledger's LLM step moved the serving cost by, so the team costs here foot
    to its `llm_serving`.
    """
    own = dict(weights or {})
    configured = config.llm_completion_weight
    return lambda model: own.get(model, configured)


def cost_per_million_tokens(cost_per_hour: float, tokens_per_second: float) -> float:
    """What a million tokens cost on hardware costing `cost_per_hour` at a given throughput."""
    return cost_per_hour / (tokens_per_second * 3_600.0) * MILLION


def per_million(cost: float | None, tokens: int) -> float | None:
    """Cost per million tokens; None when the cost is unknown or there are no tokens."""
    return None if cost is None or tokens <= 0 else cost / tokens * MILLION


def _per(cost: float | None, count: int) -> float | None:
    return None if cost is None or count <= 0 else cost / count


@dataclass(frozen=True)
class TeamTokenCost:
    """What one team paid for one model this month, and for how many tokens and requests."""

    team: str
    model: str
    kind: str  # external | self_hosted | undeclared
    prompt_tokens: int
    completion_tokens: int
    requests: int
    cost: float | None  # None: the proxy did not report a spend

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def per_million(self) -> float | None:
        """Cost per million tokens."""
        return per_million(self.cost, self.tokens)

    @property
    def per_request(self) -> float | None:
        """Cost per request."""
        return _per(self.cost, self.requests)


@dataclass(frozen=True)
class ModelTokenCost:
    """One model's month: tokens, requests, LiteLLM's spend and (self-hosted) measured cost."""

    model: str
    kind: str
    prompt_tokens: int
    completion_tokens: int
    requests: int
    declared: float | None  # LiteLLM's spend; None when it did not say
    measured: float | None  # the serving cost's share (self-hosted only)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def declared_per_million(self) -> float | None:
        """LiteLLM's spend per million tokens."""
        return per_million(self.declared, self.tokens)

    @property
    def measured_per_million(self) -> float | None:
        """The measured serving cost per million tokens."""
        return per_million(self.measured, self.tokens)

    @property
    def measured_per_request(self) -> float | None:
        """The measured serving cost per request."""
        return _per(self.measured, self.requests)


@dataclass
class _Acc:
    kind: str
    namespace: str = ""
    prompt: int = 0
    completion: int = 0
    requests: int = 0
    spend: float | None = 0.0
    weighted: float = 0.0


def token_costs(
    routed: Routed,
    serving: Mapping[str, Mapping[str, float]] | None,
    weight_of: WeightOf,
) -> tuple[tuple[ModelTokenCost, ...], tuple[TeamTokenCost, ...]]:
    """Per model and per (team, model): tokens, requests and cost, month to date.

    `serving` is the month's cost per serving namespace and the team it was placed on (None
    without OpenCost: a self-hosted model's cost is then unknown).
    """
    accs: dict[tuple[str, str], _Acc] = {}
    for record, team, decl in routed.rows:
        key = (team, record.model)
        acc = accs.get(key)
        if acc is None:
            acc = accs[key] = _Acc(*_kind(decl))
        acc.prompt += record.prompt_tokens
        acc.completion += record.completion_tokens
        acc.requests += record.requests
        acc.spend = None if acc.spend is None or record.spend is None else acc.spend + record.spend
        w = weight_of(record.model)
        acc.weighted += weighted_tokens(record.prompt_tokens, record.completion_tokens, w)
    ns_weight: dict[str, float] = defaultdict(float)
    for key in sorted(accs):
        if accs[key].kind == SELF_HOSTED:
            ns_weight[accs[key].namespace] += accs[key].weighted
    # Each namespace's cost summed once, in a fixed order (floats never depend on input order).
    ns_cost = (
        None
        if serving is None
        else {ns: sum(placed[t] for t in sorted(placed)) for ns, placed in serving.items()}
    )
    teams = []
    for (team, model), acc in sorted(accs.items()):
        cost = acc.spend
        if acc.kind == SELF_HOSTED:
            total = None if ns_cost is None else ns_cost.get(acc.namespace, 0.0)
            cost = None if total is None else _share(total, acc.weighted, ns_weight[acc.namespace])
        teams.append(
            TeamTokenCost(team, model, acc.kind, acc.prompt, acc.completion, acc.requests, cost)
        )
    return _models(accs, teams), tuple(teams)


def _kind(decl: ModelDecl | None) -> tuple[str, str]:
    """A declaration's kind and, self-hosted, its serving namespace."""
    if decl is None:
        return UNDECLARED, ""
    if decl.self_hosted is not None:
        return SELF_HOSTED, decl.self_hosted.namespace
    return EXTERNAL, ""


def _share(cost: float, weighted: float, total: float) -> float | None:
    if total <= 0:
        return None  # nobody sent weighted tokens: nothing was moved
    return cost * weighted / total


def _models(
    accs: Mapping[tuple[str, str], _Acc], teams: Iterable[TeamTokenCost]
) -> tuple[ModelTokenCost, ...]:
    by_model: dict[str, list[TeamTokenCost]] = defaultdict(list)
    spend: dict[str, float | None] = {}
    for t in teams:
        by_model[t.model].append(t)
        acc = accs[(t.team, t.model)]
        before = spend.get(t.model, 0.0)
        spend[t.model] = None if before is None or acc.spend is None else before + acc.spend
    out = []
    for model, rows in sorted(by_model.items()):
        kind = rows[0].kind
        measured: float | None = None
        if kind == SELF_HOSTED and all(r.cost is not None for r in rows):
            measured = sum(r.cost or 0.0 for r in rows)
        out.append(
            ModelTokenCost(
                model,
                kind,
                sum(r.prompt_tokens for r in rows),
                sum(r.completion_tokens for r in rows),
                sum(r.requests for r in rows),
                spend[model],
                measured,
            )
        )
    return tuple(out)
