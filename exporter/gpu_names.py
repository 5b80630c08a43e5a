"""How GPU models and Kueue flavor names are spelled and compared, for config and prices alike."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["canonical_model", "price_key_issues"]

# A Kubernetes object name (DNS-1123 subdomain), which every ResourceFlavor name is.
_FLAVOR = re.compile(
    r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_SEPARATORS = re.compile(r"[\s_-]+")

Issue = tuple[tuple[str | int, ...], str, tuple[str | int, ...] | None]


def canonical_model(model: str) -> str:
    """A GPU model name in a form DCGM's `modelName` and the node product label share.

    DCGM says "NVIDIA H100 80GB HBM3" where GPU feature discovery labels the node
    `nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3`: case and runs of spaces, dashes and
    underscores do not tell models apart.
    """
    return _SEPARATORS.sub("-", model.strip()).casefold()


def price_key_issues(models: Iterable[str], flavors: Iterable[str]) -> list[Issue]:
    """Problems with the keys of `gpu_prices` and `gpu_flavor_prices`, as config issues."""
    entries: list[Issue] = []
    first: dict[str, str] = {}
    for model in models:
        key = canonical_model(model)
        if not key:
            entries.append((("gpu_prices", model), "a GPU model name cannot be empty", None))
            continue
        seen = first.setdefault(key, model)
        if seen != model:
            # Models match loosely, so two spellings of one model would shadow each other.
            message = f"{model!r} is the same GPU model as {seen!r}"
            entries.append((("gpu_prices", model), message, ("gpu_prices", seen)))
    for flavor in flavors:
        if not _FLAVOR.match(flavor):
            message = (
                f"{flavor[:60]!r} is not a ResourceFlavor name (lower-case letters, digits, "
                "'-' and '.', starting and ending with a letter or digit)"
            )
            entries.append((("gpu_flavor_prices", flavor), message, None))
    return entries
