"""What one vLLM read gives the join: each served model's engine time over a span."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["ModelTiming", "VllmSnapshot"]


@dataclass(frozen=True)
class ModelTiming:
    """What one served model's requests finished in the span cost in engine time, and held."""

    model: str  # as vLLM names it (model_name)
    prefill_seconds: float
    decode_seconds: float
    prompt_tokens: float
    generation_tokens: float
    requests: float


@dataclass(frozen=True)
class VllmSnapshot:
    """Every served model's timing over one span."""

    models: tuple[ModelTiming, ...]
    span_seconds: float
    dropped: Mapping[str, int] = field(default_factory=dict)

    def check_after(self, previous: object | None) -> None:
        """Each read totals its own span from Prometheus: nothing to compare with the last."""
        del previous

    def timing(self, model: str) -> ModelTiming | None:
        """The timing of the model vLLM serves as `model`, if it was read."""
        return next((t for t in self.models if t.model == model), None)
