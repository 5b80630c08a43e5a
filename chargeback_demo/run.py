"""`make demo`: the exporter on the simulated cluster, plus Prometheus with the shipped rules."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
from pathlib import Path

from chargeback_demo.advice_history import backfill_week
from chargeback_demo.cluster import CLUSTER
from chargeback_demo.exporter import HISTORY_SWITCH
from chargeback_demo.exporter import main as demo_exporter
from chargeback_demo.history import (
    RETENTION,
    STEP,
    backfill_running,
    can_backfill,
    last_closed_month,
)
from chargeback_demo.prometheus import (
    Process,
    free_port,
    start_prometheus,
    stop,
    ui_page,
    wait_ready,
)
from chargeback_demo.stack import demo_config_dict
from exporter.calendar import Month
from exporter.clock import system_clock
from exporter.config.schema import Config

REPO = Path(__file__).resolve().parents[1]
DESCRIPTION = """\
The exporter on a simulated cluster (fake OpenCost, dcgm-exporter, Kubernetes, LiteLLM and
vLLM-in-Prometheus servers on loopback), plus Prometheus with the committed rules when it is
installed. Runs until Ctrl-C."""
EPILOG = """environment:
  DEMO_LISTEN_ADDRESS   where the exporter serves (default 127.0.0.1:10290)
  DEMO_PROMETHEUS_PORT  Prometheus's port on loopback (default 9090)
  DEMO_HISTORY          off: do not backfill the last closed month into Prometheus

The exporter's own flags (--once, report, ...) on the same simulated cluster, without
Prometheus: python -m chargeback_demo --help"""


def _parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="python -m chargeback_demo.run",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _prometheus(workdir: Path, listen: str, port: int, dcgm: str) -> tuple[Process | None, str]:
    """Prometheus scraping the demo (and its fake dcgm-exporter at `dcgm`, host:port) with the
    committed rules, when it is installed."""
    rule_files = sorted((REPO / "rules").glob("*.yml"))
    if not rule_files:
        return None, "Prometheus: not started (no rules/ directory beside the package)"
    if not (shutil.which("prometheus")):
        return None, "Prometheus: not installed (apt-get install prometheus), skipped"
    proc, url = start_prometheus(
        workdir,
        targets=[listen],
        rule_files=rule_files,
        interval="15s",
        port=port,
        jobs={"dcgm-exporter": [dcgm]},
        # The backfilled closed month stays, however far into this month the demo runs.
        extra_args=[RETENTION],
    )
    try:
        wait_ready(proc, f"{url}/-/ready", timeout=30)
    except (RuntimeError, TimeoutError) as exc:
        stop(proc)
        return None, f"Prometheus: failed to start ({exc}); see {workdir / 'prometheus.log'}"
    return proc, (
        f"Prometheus: {url} (rules: {ui_page(url, 'rules')}, alerts: {ui_page(url, 'alerts')})\n"
        f"            recorded series appear after the first evaluation, within a minute"
    )


def _history(workdir: Path, prometheus: Process | None, dcgm: str) -> tuple[Month | None, str]:
    """Backfill the last closed month, and the week of DCGM series the advice reads, into the
    running Prometheus, in a child process so the exporter serves at once (a thread would
    hold the GIL through the month's 9,000 instants); the month, and a line saying where its
    report comes from."""
    # The series only depend on the cluster and the config's teams and prices, not on where
    # the fakes listen.
    placeholders = {name: "http://127.0.0.1:1" for name in ("opencost", "dcgm", "kueue")}
    config = Config.model_validate(demo_config_dict(placeholders, str(workdir)))
    month = last_closed_month(system_clock(), config)
    if prometheus is None or not can_backfill() or os.environ.get(HISTORY_SWITCH) == "off":
        return None, (
            f"closed months: {month.label} has no history (needs promtool and prometheus, and "
            f"{HISTORY_SWITCH} not off), so its report says its GPU operation is not known"
        )

    # The week ends a step before now: the live scrape of the fake dcgm-exporter takes over.
    week_end = system_clock() - STEP

    def work() -> None:
        print(backfill_running(workdir, workdir / "data", CLUSTER, config, month), flush=True)
        print(backfill_week(workdir, workdir / "data", CLUSTER, week_end, dcgm), flush=True)

    # Forked before the exporter starts any thread; a daemon, so Ctrl-C ends it too.
    multiprocessing.get_context("fork").Process(target=work, name="backfill", daemon=True).start()
    return month, f"closed month: {month.label}, backfilled into Prometheus in the background"


def main(argv: list[str] | None = None) -> int:
    """Start Prometheus if it is installed, print where to look, run the exporter until Ctrl-C."""
    _parser().parse_args(argv)
    listen = os.environ.get("DEMO_LISTEN_ADDRESS", "127.0.0.1:10290")
    prometheus_port = int(os.environ.get("DEMO_PROMETHEUS_PORT", "9090"))
    workdir = Path(tempfile.mkdtemp(prefix="chargeback-demo-prometheus-"))
    dcgm = f"127.0.0.1:{free_port()}"
    prometheus, prometheus_line = _prometheus(workdir, listen, prometheus_port, dcgm)
    if prometheus is not None:
        # DCGM is read through Prometheus, as a cluster whose Prometheus already scrapes
        # dcgm-exporter would: that also serves the month-to-date idle GPU-hours.
        os.environ["DEMO_DCGM_PORT"] = dcgm.rpartition(":")[2]
        os.environ["DEMO_DCGM_PROMETHEUS"] = f"http://127.0.0.1:{prometheus_port}"
        # The same Prometheus holds the exporter's own series: the report reads past months
        # (the backfilled one, and this one as it is scraped) from it.
        os.environ["DEMO_HISTORY_PROMETHEUS"] = f"http://127.0.0.1:{prometheus_port}"
    history_url = f"http://127.0.0.1:{prometheus_port}"
    month, history_line = _history(workdir, prometheus, dcgm)
    closed = "" if month is None else f"DEMO_HISTORY_PROMETHEUS={history_url} "
    closed += ".venv/bin/python -m chargeback_demo report"
    closed += "" if month is None else f" --month {month.label}"
    host, _, port = listen.rpartition(":")
    print(
        "gpu-chargeback-exporter demo: a simulated cluster (4 x H100, three teams) behind fake\n"
        "OpenCost, dcgm-exporter, Kubernetes (Kueue) and LiteLLM servers on loopback. Some team\n"
        "borrows GPU quota at every hour: research at night (18-08 UTC) for its sweep, vision\n"
        "by day to retrain its detector; search's vLLM idles on its GPU. With Prometheus, DCGM\n"
        "is read through it, so month-to-date idle GPU-hours build up as it scrapes. Llama's\n"
        "completion weight is measured from vLLM's prefill and decode time (a fake Prometheus\n"
        "holds vLLM's series): 50, where the config guesses 3.\n\n"
        f"  metrics:    http://{host}:{port}/metrics\n"
        f"  {prometheus_line}\n"
        f"  report:     .venv/bin/python -m chargeback_demo report\n"
        f"  {history_line}:\n"
        f"              {closed}\n"
        f"  dashboards: import {REPO / 'dashboards'}/*.json in Grafana (Dashboards > New >\n"
        f"              Import, then pick the Prometheus data source), or provision them with\n"
        f"              {REPO / 'deploy/grafana/provisioning/dashboards.yaml'}\n"
        f"  stop:       Ctrl-C\n",
        flush=True,
    )
    try:
        return demo_exporter(["--web.listen-address", listen])
    finally:
        if prometheus is not None:
            stop(prometheus)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
