"""A what-if's `KEY=VALUE` settings, parsed and checked against the config and the month read.

Every name a key carries (a GPU model, a flavor, a ClusterQueue, a self-hosted model) must be
one the month or the config knows: a typo would otherwise change nothing and print a what-if
equal to the month, which reads as "no difference" rather than as a mistake.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from exporter.config.schema import Config, IdlePolicy
from exporter.gpu_names import canonical_model
from exporter.ledger.attribution import canonical_key
from exporter.ledger.costs.quota import GPU_RESOURCES
from exporter.ledger.what_if.settings import WhatIf, WhatIfError
from exporter.sources.table import Snapshots

__all__ = ["KEYS", "WhatIf", "WhatIfError", "parse_what_if"]

# The keys, as `--what-if` and the errors name them; a dotted key names what it changes.
KEYS = (
    "idle_policy",
    "gpu_price.<gpu model>",
    "gpu_flavor_price.<flavor>",
    "quota.<clusterqueue>[/<flavor>]",
    "tokens_per_second.<self-hosted model>",
)
_KINDS = ("idle_policy", "gpu_price", "gpu_flavor_price", "quota", "tokens_per_second")
_PRODUCT = canonical_key("nvidia.com/gpu.product")


def parse_what_if(settings: Sequence[str], config: Config, latest: Snapshots) -> WhatIf:
    """Each `KEY=VALUE` checked: a known key, a known name, a usable value; WhatIfError if not.

    Two keys naming one thing (`gpu_price.NVIDIA-L40S` and `gpu_price.NVIDIA L40S`) are one
    key given twice: which value won would otherwise depend on the order typed.
    """
    changed: dict[str, dict[Any, Any]] = {kind: {} for kind in _KINDS}
    for setting in settings:
        key, sep, value = setting.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise WhatIfError(f"--what-if {setting!r}: expected KEY=VALUE")
        kind, target, number = _setting(key, value, config, latest)
        if target in changed[kind]:
            raise WhatIfError(f"--what-if {key}: given twice")
        changed[kind][target] = number
    policy = changed["idle_policy"].get("")
    return WhatIf(
        tuple(settings),
        policy,
        changed["gpu_price"],
        changed["gpu_flavor_price"],
        changed["quota"],
        changed["tokens_per_second"],
    )


def _setting(key: str, value: str, config: Config, latest: Snapshots) -> tuple[str, Any, Any]:
    """(kind of key, what it names, its value), each checked."""
    kind, _, name = key.partition(".")
    if key == "idle_policy":
        return kind, "", _policy(value)
    if kind == "gpu_price" and name:
        return kind, _model(key, name, config, latest), _number(key, value, positive=True)
    if kind == "gpu_flavor_price" and name:
        flavor = _known(key, name, _flavors(config, latest), "flavor")
        return kind, flavor, _number(key, value, positive=True)
    if kind == "quota" and name:
        return kind, _queue(key, name, latest), _number(key, value, positive=False)
    if kind == "tokens_per_second" and name:
        served = sorted(m.model for m in config.llm_models if m.self_hosted is not None)
        model = _known(key, name, served, "self-hosted model")
        return kind, model, _number(key, value, positive=True)
    raise WhatIfError(f"--what-if {key}: unknown key (known: {', '.join(KEYS)})")


def _policy(value: str) -> IdlePolicy:
    names = [p.value for p in IdlePolicy]
    if value not in names:
        raise WhatIfError(
            f"--what-if idle_policy: unknown policy {value!r} (known: {', '.join(names)})"
        )
    return IdlePolicy(value)


def _number(key: str, value: str, *, positive: bool) -> float:
    """A finite number, above zero (a price, a throughput) or at least zero (a quota)."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        wanted = "a number above 0" if positive else "a number of 0 or more"
        raise WhatIfError(f"--what-if {key}: {value!r} is not {wanted}")
    return number


def _known(key: str, name: str, known: Iterable[str], what: str) -> str:
    names = sorted(set(known))
    if name not in names:
        listed = ", ".join(names) or "none"
        raise WhatIfError(f"--what-if {key}: no {what} {name!r} in the month (known: {listed})")
    return name


def _model(key: str, name: str, config: Config, latest: Snapshots) -> str:
    """The GPU model a key names, in one spelling however typed: the config's `gpu_prices` key
    where it prices the model (two spellings of one model are two keys the config refuses),
    else its build's, else the month's."""
    configured = [*config.gpu_price_build, *config.gpu_prices]  # the later spelling wins
    by_canonical = {canonical_model(m): m for m in sorted(_models(latest))}
    by_canonical.update({canonical_model(m): m for m in configured})
    found = by_canonical.get(canonical_model(name))
    if found is None:
        listed = ", ".join(sorted(by_canonical.values())) or "none"
        raise WhatIfError(f"--what-if {key}: no GPU model {name!r} in the month (known: {listed})")
    return found


def _models(latest: Snapshots) -> set[str]:
    """Every GPU model the month's records name: OpenCost's, its nodes' labels, DCGM's."""
    models: set[str] = set()
    if latest.opencost is not None:
        for window in (latest.opencost.month, latest.opencost.rate):
            models.update(a.gpu_model for a in window.allocations if a.gpu_model)
        for node in latest.opencost.gpu_nodes or ():
            models.update(v for k, v in node.labels.items() if canonical_key(k) == _PRODUCT)
    if latest.dcgm is not None:
        models.update(g.model for g in latest.dcgm.gpus if g.model)
    return models


def _flavors(config: Config, latest: Snapshots) -> set[str]:
    flavors = {*config.gpu_flavor_prices, *config.gpu_flavor_price_build}
    if latest.kueue is not None:
        flavors.update(f.name for f in latest.kueue.flavors)
        flavors.update(q.flavor for q in latest.kueue.queues if q.resource in GPU_RESOURCES)
    return flavors


def _queue(key: str, name: str, latest: Snapshots) -> tuple[str, str]:
    """The (ClusterQueue, flavor) whose GPU quota a `quota.` key sets: a queue with GPU quota
    in one flavor needs no flavor; one with several must name it after a slash (a name that
    Kubernetes never allows in either)."""
    queues = latest.kueue.queues if latest.kueue is not None else ()
    flavors: dict[str, set[str]] = {}
    for q in queues:
        if q.resource in GPU_RESOURCES:
            flavors.setdefault(q.cluster_queue, set()).add(q.flavor)
    queue, slash, flavor = name.partition("/")
    _known(key, queue, flavors, "ClusterQueue with GPU quota")
    if slash:
        return queue, _known(key, flavor, flavors[queue], f"GPU flavor of {queue}")
    if len(flavors[queue]) > 1:
        listed = ", ".join(sorted(flavors[queue]))
        raise WhatIfError(
            f"--what-if {key}: {queue} holds GPU quota in several flavors ({listed}): "
            f"name one, as quota.{queue}/<flavor>"
        )
    (only,) = flavors[queue]
    return queue, only
