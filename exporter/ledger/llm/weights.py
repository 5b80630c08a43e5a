"""Completion weights per self-hosted model: configured, measured from vLLM, and the one applied.

Serving cost follows weighted tokens `prompt + w x completion` (ledger/llm/). Measured, a
prompt token costs `a` = prefill seconds / prompt tokens of the engine's time and a completion
token `b` = decode seconds / completion tokens, so its requests took `prompt x a + completion x
b = a x (prompt + (b / a) x completion)` seconds: `w = b / a` splits the engine's measured time
exactly, whatever the mix of requests (docs/llm.md, "Measured prompt/completion weight").

A model whose declaration says `weight: measured` takes the measured `w` when it is sound and
the configured one otherwise, with the reason exported; any positive weight moves the whole
serving cost, so money is conserved either way. Sound means its inputs are plausible, judged
like a source's: enough requests and enough tokens of each kind (a young or reset counter reads
few), decode per token no cheaper than prefill per token (vLLM before #10853 swapped the two
histograms), and `w` inside `sources.vllm`'s band. A weight from implausible inputs is neither
applied nor published: only the fallback says what was refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from exporter.config.schema import Config, ModelDecl, VllmConfig
from exporter.sources.vllm.records import ModelTiming, VllmSnapshot

__all__ = [
    "FALLBACK_REASONS",
    "CompletionWeight",
    "Measured",
    "applied_weights",
    "completion_weights",
    "judge",
    "measure",
]

SOURCE_DOWN = "source_down"  # sources.vllm has no fresh read
NO_DATA = "no_data"  # the read holds no finished request of the model
TOO_FEW_REQUESTS = "too_few_requests"  # fewer than sources.vllm.min_requests
INVALID = "invalid"  # a zero phase time or token count: no ratio to take
TOO_FEW_TOKENS = "too_few_tokens"  # prompt or completion tokens under sources.vllm.min_tokens
INVERTED_PHASES = "inverted_phases"  # decode per token cheaper than prefill per token
IMPLAUSIBLE = "implausible"  # w outside sources.vllm's min_weight..max_weight
FALLBACK_REASONS = (
    SOURCE_DOWN,
    NO_DATA,
    TOO_FEW_REQUESTS,
    INVALID,
    TOO_FEW_TOKENS,
    INVERTED_PHASES,
    IMPLAUSIBLE,
)


@dataclass(frozen=True)
class Measured:
    """One model's engine time per token: prefill per prompt token, decode per completion token."""

    prefill_per_token: float
    decode_per_token: float
    requests: float

    @property
    def weight(self) -> float:
        """Decode seconds per completion token against prefill seconds per prompt token."""
        return self.decode_per_token / self.prefill_per_token


@dataclass(frozen=True)
class CompletionWeight:
    """A self-hosted model's weights; `fallback` says why a measured weight asked for is not."""

    model: str  # the declaration's model, as LiteLLM names it
    configured: float
    measured: Measured | None
    applied: float
    fallback: str | None
    asked: str = "configured"  # the declaration's `weight`: configured or measured

    @property
    def basis(self) -> str:
        """Which weight is applied: the measured one, or the configured one."""
        taken = self.asked == "measured" and self.fallback is None and self.measured is not None
        return "measured" if taken else "configured"


def measure(timing: ModelTiming | None) -> tuple[Measured | None, str | None]:
    """A model's time per token, or None and why: no data, or a phase with no time or tokens."""
    if timing is None or timing.requests <= 0:
        return None, NO_DATA
    parts = (timing.prefill_seconds, timing.decode_seconds)
    tokens = (timing.prompt_tokens, timing.generation_tokens)
    if min(*parts, *tokens) <= 0:
        return None, INVALID
    found = Measured(parts[0] / tokens[0], parts[1] / tokens[1], timing.requests)
    if not (math.isfinite(found.weight) and found.weight > 0):
        return None, INVALID  # a ratio of tiny or huge totals can still overflow
    return found, None


def judge(
    found: Measured, timing: ModelTiming, source: VllmConfig
) -> tuple[Measured | None, str | None]:
    """A measured weight kept only when its inputs are plausible, else why not.

    Too few requests still shows what was measured (it is real, only noisy); the other checks
    refuse a figure that cannot be the model's, so it is not published either.
    """
    if found.requests < source.min_requests:
        return found, TOO_FEW_REQUESTS
    if min(timing.prompt_tokens, timing.generation_tokens) < source.min_tokens:
        return None, TOO_FEW_TOKENS
    if found.decode_per_token < found.prefill_per_token:
        return None, INVERTED_PHASES
    if not source.min_weight <= found.weight <= source.max_weight:
        return None, IMPLAUSIBLE
    return found, None


def completion_weights(config: Config, vllm: VllmSnapshot | None) -> tuple[CompletionWeight, ...]:
    """Every self-hosted model's configured, measured and applied weight, by declaration."""
    configured = config.llm_completion_weight
    source = config.sources.vllm
    out: list[CompletionWeight] = []
    for decl in sorted(_hosted(config.llm_models), key=lambda d: d.model):
        assert decl.self_hosted is not None
        served = decl.self_hosted.served_model or decl.model
        if source is None:
            found, why = None, None
        elif vllm is None:
            found, why = None, SOURCE_DOWN
        else:
            timing = vllm.timing(served)
            found, why = measure(timing)
            if found is not None and timing is not None:
                found, why = judge(found, timing, source)
        asked = decl.self_hosted.weight
        if asked == "measured" and found is not None and why is None:
            out.append(CompletionWeight(decl.model, configured, found, found.weight, None, asked))
        else:
            fallback = why if asked == "measured" else None
            out.append(CompletionWeight(decl.model, configured, found, configured, fallback, asked))
    return tuple(out)


def applied_weights(weights: Iterable[CompletionWeight]) -> dict[str, float]:
    """The weight applied to each self-hosted declaration, by its model."""
    return {w.model: w.applied for w in weights}


def _hosted(models: Iterable[ModelDecl]) -> list[ModelDecl]:
    return [m for m in models if m.self_hosted is not None]
