"""Whether a window's history can carry advice (pure): thin, non-number, disordered or reset."""

from __future__ import annotations

from exporter.config.advice import AdviceConfig
from exporter.ledger.advice.mig import MIB_PER_GB, mig_model
from exporter.sources.dcgm_history.records import DeviceHistory, History, QueueHistory, Spread

__all__ = ["device_problem", "queue_problem"]

Problem = tuple[str, str]  # reason, detail


def device_problem(device: DeviceHistory, history: History, cfg: AdviceConfig) -> Problem | None:
    """Why the device's history cannot carry advice, or None when it can."""
    fb, act = device.framebuffer, device.activity
    if fb is None and device.mig_profile and act is not None:
        # dcgm-exporter leaves DCGM_FI_DEV_FB_* out for MIG instances on some drivers
        # (NVIDIA/dcgm-exporter#512); an instance is only ever advised on its activity.
        fb = Spread(0.0, 0.0, 0.0, act.samples)
    if fb is None or act is None:
        missing = "framebuffer" if fb is None else "activity"
        return "thin_history", f"no {missing} samples in the window"
    if not fb.finite or not act.finite or _nan(device.idle_share):
        return "not_finite", "a percentile or the idle share is not a number"
    if device.gpu_resets > 0:
        # Before and after a reset the GPU may have held other work: one peak over both
        # lives describes neither.
        return "gpu_reset", f"the GPU was reset {device.gpu_resets} time(s) in the window"
    problem = _spread_problem(fb, history, "framebuffer") or _spread_problem(
        act, history, "activity"
    )
    if problem is not None:
        return problem
    if act.max > 1 + 1e-9 or not 0 <= (device.idle_share or 0.0) <= 1 + 1e-9:
        return "inconsistent", f"activity peaks at {act.max:g} of the device"
    table = mig_model(device.model)
    if table is not None and fb.max > table.memory_gb * MIB_PER_GB * 1.05:
        return "inconsistent", f"{fb.max:g} MiB used on a {table.memory_gb} GB GPU"
    return _thin(min(fb.samples, act.samples), history, cfg)


def queue_problem(queue: QueueHistory, history: History, cfg: AdviceConfig) -> Problem | None:
    """Why the queue's history cannot carry advice, or None when it can."""
    use = queue.usage
    if not use.finite or _nan(queue.nominal):
        return "not_finite", "the quota or a percentile of its use is not a number"
    problem = _spread_problem(use, history, "quota use")
    if problem is not None:
        return problem
    return _thin(use.samples, history, cfg)


def _spread_problem(spread: Spread, history: History, what: str) -> Problem | None:
    if not spread.ordered:
        return "inconsistent", f"{what} percentiles out of order: {spread}"
    if not 0 < spread.samples <= history.steps:
        # More samples than the window has steps: two series folded into one (a restart
        # under other labels), so its percentiles mix them.
        return "inconsistent", f"{spread.samples} {what} samples, the window has {history.steps}"
    return None


def _thin(samples: int, history: History, cfg: AdviceConfig) -> Problem | None:
    seen = samples * history.step_seconds
    needed = cfg.min_coverage.total_seconds()
    if seen < needed:
        return "thin_history", f"{seen / 3600:.1f} h observed, advice needs {needed / 3600:g} h"
    return None


def _nan(value: float | None) -> bool:
    return value is not None and value != value
