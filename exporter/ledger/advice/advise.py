"""Advice from a window of history (pure): what each team could save a month, and how sure.

Three kinds, each priced at the GPU-hour price the ledger applies (exporter.ledger.prices):

- `mig`: a workload on a whole GPU whose peak framebuffer and peak activity fit a smaller MIG
  profile of that model: saves (1 - the profile's share) x its GPU-hours a month x price;
- `idle`: a GPU or MIG instance below the idle threshold for `idle_share` of the window or
  more: saves its share x its GPU-hours a month x price;
- `quota`: a ClusterQueue whose peak GPU use stayed at or under `quota_share` of its nominal
  quota: giving back what the peak (with headroom) does not need saves N x a month's hours x
  the flavor's price where the idle policy charges quota, and only frees N GPUs where not.

A workload's GPU-hours a month are the window's share it was seen (its coverage) x 730 (a
year's 8,760 hours over 12). A device whose history is thin, has a non-number, is out of
order or spans a GPU reset gets no advice; the reason is kept and counted.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from exporter.config.advice import AdviceConfig
from exporter.ledger.advice.checks import device_problem, queue_problem
from exporter.ledger.advice.mig import mig_model, smallest_fit
from exporter.sources.dcgm.mig import mig_share
from exporter.sources.dcgm_history.records import DeviceHistory, History, QueueHistory, Spread

__all__ = ["HOURS_A_MONTH", "Advice", "AdviceSet", "Prices", "Withheld", "advise"]

HOURS_A_MONTH = 730.0
GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class Prices:
    """The applied GPU-hour price by GPU model and by Kueue flavor (None: nothing prices it)."""

    model: Callable[[str], float | None]
    flavor: Callable[[str], float | None]


@dataclass(frozen=True)
class Advice:
    """One piece of advice: who, what to do, what it saves a month, and on what evidence."""

    kind: str  # mig | idle | quota
    team: str
    workload: str  # namespace/pod, or the ClusterQueue
    action: str  # "fits 1g.10gb", "release the GPU", "give back 2 GPUs", "frees 2 GPUs"
    gpus: float  # GPUs (or shares of one) the advice frees
    saving: float  # a month, at `price`; 0 where the policy charges nothing for them
    price: float  # the applied GPU-hour price
    framebuffer: Spread | None  # MiB (mig, idle)
    activity: Spread | None  # share of the device (mig, idle), GPUs in use (quota)
    idle_share: float | None
    samples: int
    coverage: float  # share of the window observed, 0-1


@dataclass(frozen=True)
class Withheld:
    """A workload or queue that got no advice because its history could not be trusted."""

    team: str
    workload: str
    reason: str  # thin_history | not_finite | inconsistent | gpu_reset | no_price
    detail: str


@dataclass(frozen=True)
class AdviceSet:
    """Every advice of one window, by team and largest saving first, and what was withheld."""

    window_seconds: float
    advice: tuple[Advice, ...] = ()
    withheld: tuple[Withheld, ...] = ()
    top_n: int = 5  # advice.top_n: how many of each team's the metrics show

    def reasons(self) -> Counter[str]:
        """Withheld advice counted by reason."""
        return Counter(w.reason for w in self.withheld)

    def top(self, n: int) -> tuple[Advice, ...]:
        """The `n` largest savings of each team (ties by kind and workload), in team order."""
        kept: Counter[str] = Counter()
        out = []
        for item in self.advice:
            if kept[item.team] < n:
                kept[item.team] += 1
                out.append(item)
        return tuple(out)


def advise(
    history: History,
    cfg: AdviceConfig,
    *,
    team_of: Callable[[DeviceHistory], str],
    queue_team: Callable[[str], str],
    prices: Prices,
    charges_quota: bool,
) -> AdviceSet:
    """Every advice the window supports, and every workload withheld with its reason."""
    advice: list[Advice] = []
    withheld: list[Withheld] = []
    for device in history.devices:
        team = team_of(device)
        problem = device_problem(device, history, cfg)
        price = prices.model(device.model) if problem is None else None
        if problem is None and price is None:
            problem = ("no_price", f"no GPU-hour price applies to {device.model!r}")
        if problem is not None:
            withheld.append(Withheld(team, device.workload, *problem))
        elif price is not None:
            advice.extend(_device_advice(device, team, price, history, cfg))
    for queue in history.queues or ():
        if queue.resource != GPU_RESOURCE or queue.nominal <= 0:
            continue
        item = _queue_advice(queue, queue_team(queue.cluster_queue), history, cfg, prices)
        if isinstance(item, Withheld):
            withheld.append(item)
        elif item is not None:
            advice.append(item if charges_quota else _frees(item))
    merged = _merged(advice)
    merged.sort(key=lambda a: (a.team, -a.saving, a.kind, a.workload, a.action))
    withheld.sort(key=lambda w: (w.team, w.workload, w.reason, w.detail))
    return AdviceSet(history.window_seconds, tuple(merged), tuple(withheld), cfg.top_n)


def _merged(advice: Iterable[Advice]) -> list[Advice]:
    """One advice per team, kind, workload and action: a pod on two GPUs that each fit the
    same profile saves both; the evidence shown is the busier GPU's, the surety the lesser."""
    out: dict[tuple[str, str, str, str], Advice] = {}
    for item in advice:
        key = (item.team, item.kind, item.workload, item.action)
        seen = out.get(key)
        if seen is None:
            out[key] = item
            continue
        busier = item if _peak(item) > _peak(seen) else seen
        out[key] = replace(
            busier,
            gpus=seen.gpus + item.gpus,
            saving=seen.saving + item.saving,
            samples=min(seen.samples, item.samples),
            coverage=min(seen.coverage, item.coverage),
        )
    return list(out.values())


def _peak(item: Advice) -> tuple[float, float]:
    act = item.activity.max if item.activity is not None else 0.0
    fb = item.framebuffer.max if item.framebuffer is not None else 0.0
    return (act, fb)


def coverage(samples: int, history: History) -> float:
    """The share of the window `samples` cover, at most 1."""
    return min(1.0, samples * history.step_seconds / history.window_seconds)


def _device_advice(
    device: DeviceHistory, team: str, price: float, history: History, cfg: AdviceConfig
) -> Iterable[Advice]:
    act = device.activity
    assert act is not None  # device_problem refuses a missing activity
    fb = device.framebuffer or Spread(0.0, 0.0, 0.0, act.samples)  # a MIG instance's may lack
    seen = coverage(min(fb.samples, act.samples), history)
    share = mig_share(device.mig_profile, device.model) if device.mig_profile else 1.0
    hours = seen * HOURS_A_MONTH

    def made(kind: str, action: str, gpus: float) -> Advice:
        saving = gpus * hours * price
        samples = min(fb.samples, act.samples)
        return Advice(
            kind, team, device.workload, action, gpus, saving, price, device.framebuffer, act,
            device.idle_share, samples, seen,
        )  # fmt: skip

    if device.idle_share is not None and device.idle_share >= cfg.idle_share:
        what = "the MIG instance" if device.mig_profile else "the GPU"
        yield made("idle", f"release {what}", share)
    table = None if device.mig_profile else mig_model(device.model)
    if table is not None:
        fit = smallest_fit(table, fb.max, act.max, cfg.headroom)
        if fit is not None:
            yield made("mig", f"fits {fit.name}", 1.0 - table.share(fit))


def _queue_advice(
    queue: QueueHistory, team: str, history: History, cfg: AdviceConfig, prices: Prices
) -> Advice | Withheld | None:
    problem = queue_problem(queue, history, cfg)
    if problem is not None:
        return Withheld(team, queue.cluster_queue, *problem)
    use = queue.usage
    if use.max > cfg.quota_share * queue.nominal:
        return None
    keep = math.ceil(use.max / cfg.headroom - 1e-9)
    give = math.floor(queue.nominal + 1e-9) - keep
    if give < 1:
        return None
    price = prices.flavor(queue.flavor)
    if price is None:
        detail = f"no GPU-hour price applies to flavor {queue.flavor!r}"
        return Withheld(team, queue.cluster_queue, "no_price", detail)
    seen = coverage(use.samples, history)
    action = f"give back {give} GPU{'s' if give > 1 else ''}"
    saving = give * HOURS_A_MONTH * price
    return Advice(
        "quota", team, queue.cluster_queue, action, float(give), saving, price, None, use,
        None, use.samples, seen,
    )  # fmt: skip


def _frees(item: Advice) -> Advice:
    """Quota advice under a policy that does not charge quota: it frees GPUs, saves nothing."""
    n = round(item.gpus)
    action = f"frees {n} GPU{'s' if n > 1 else ''}"
    return Advice(
        item.kind, item.team, item.workload, action, item.gpus, 0.0, item.price,
        item.framebuffer, item.activity, item.idle_share, item.samples, item.coverage,
    )  # fmt: skip
