"""The monthly budgets the config declares, per team and kind (gpu, llm)."""

from __future__ import annotations

from exporter.config.schema import Config

__all__ = ["config_budgets"]


def config_budgets(config: Config) -> dict[tuple[str, str], float]:
    """Monthly budgets declared in config, keyed by (team, kind)."""
    out: dict[tuple[str, str], float] = {}
    for team in config.teams:
        if team.budget.gpu is not None:
            out[(team.name, "gpu")] = team.budget.gpu
        if team.budget.llm is not None:
            out[(team.name, "llm")] = team.budget.llm
    return out
