"""What the bench runs in a child process, so each figure is one fresh interpreter's own.

python -m bench.child refresh CONFIG           # two refreshes: JSON of CPU-s and peak RSS
python -m bench.child serve CONFIG PORT MODE   # MODE: worker, inprocess or naive
python -m bench.child static FILE PORT         # the same bytes from memory, nothing else
python -m bench.child opencost FILE            # parse, join and render one /allocation body
python -m bench.child rebuilds CONFIG          # a rebuild's CPU-s after each source's refresh
python -m bench.child steps CONFIG             # where the peak RSS is reached, step by step
"""

from __future__ import annotations

import argparse
import gzip
import json
import signal
import threading
from collections.abc import Iterable
from pathlib import Path
from types import FrameType

from prometheus_client import start_http_server
from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

from bench import opencost_path
from bench.synthetic import NOW
from exporter import logs
from exporter.cli import PAGES
from exporter.clock import fixed_clock
from exporter.config.schema import Config, load_config
from exporter.exposition.render import Exposition, families
from exporter.exposition.series.health import health_samples
from exporter.serve.collector import tune_collector
from exporter.serve.lifecycle import Lifecycle
from exporter.serve.refresher import Refresher
from exporter.serve.server import MetricsServer
from exporter.serve.wiring import Joiner, make_refresher
from exporter.sources.checks import DROP_REASONS

CLOCK = fixed_clock(NOW)
# Beside a written exposition, its OpenMetrics rendering: what Prometheus asks for first.
OPENMETRICS = ".openmetrics"


def refresh(config_path: str, out: str | None = None) -> None:
    """Cold: the first refresh of a fresh process; steady: the second, caches warm.

    With `out`, the exposition is written there too (what the static server then sends),
    and its OpenMetrics rendering beside it, at `out` + ".openmetrics".
    """
    tune_collector()  # as the refresh worker does
    refresher = make_refresher(load_config(config_path), config_path, CLOCK)
    start = opencost_path.cpu_seconds()
    ok = refresher.refresh_all()
    cold = opencost_path.cpu_seconds()
    ok = refresher.refresh_all() and ok
    steady = opencost_path.cpu_seconds()
    refresher.stop()
    if out is not None:
        Path(out).write_bytes(refresher.exposition.text)
        Path(f"{out}{OPENMETRICS}").write_bytes(refresher.exposition.openmetrics)
    figures = {
        "ok": ok,
        "cold": cold - start,
        "steady": steady - cold,
        "rss": opencost_path.peak_rss_mib(),
    }
    print(json.dumps(figures))


def rebuilds(config_path: str) -> None:
    """After two refreshes of everything, each source's refresh alone and the rebuild it causes:
    the rebuild's CPU-s (median of 3), what a refresh loop pays beyond its own source's read."""
    tune_collector()
    refresher = make_refresher(load_config(config_path), config_path, CLOCK)
    ok = refresher.refresh_all()
    ok = refresher.refresh_all() and ok
    figures: dict[str, float | bool] = {}
    for name in sorted(refresher.health()):
        spent = []
        for _ in range(3):
            ok = refresher.refresh(name) and ok
            start = opencost_path.cpu_seconds()
            refresher.rebuild()
            spent.append(opencost_path.cpu_seconds() - start)
        figures[name] = sorted(spent)[1]
    refresher.stop()
    print(json.dumps({"ok": ok, **figures}))


def steps(config_path: str) -> None:
    """Two rounds of each source's refresh in turn and the rebuild, as the worker runs them: after
    each step its CPU-s, the peak RSS so far and the RSS now (MiB), one JSON line per step, so
    the step that raises the peak, and what stays resident beside it, can be read off."""
    tune_collector()
    refresher = make_refresher(load_config(config_path), config_path, CLOCK)
    for round_ in ("cold", "steady"):
        for name in [*sorted(refresher.health()), "rebuild"]:
            start, ok = opencost_path.cpu_seconds(), True
            if name == "rebuild":
                refresher.rebuild()
                refresher.hand_over()  # the worker sends each rendering away at once
            else:
                ok = refresher.refresh(name)
            figures = {"cpu": opencost_path.cpu_seconds() - start, "ok": ok}
            rss = {"peak": opencost_path.peak_rss_mib(), "rss": _rss_mib()}
            print(json.dumps({"round": round_, "step": name, **figures, **rss}), flush=True)
    refresher.stop()


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class _Naive(Collector):
    """What exporters usually do: join and build the families on every scrape."""

    def __init__(self, refresher: Refresher, config: Config) -> None:
        self._refresher, self._joiner = refresher, Joiner(config)

    def collect(self) -> Iterable[Metric]:
        samples = self._joiner(self._refresher.fresh_records(), CLOCK())
        return families([*samples, *health_samples(self._refresher.health(), DROP_REASONS)])


def serve(config_path: str, port: int, mode: str) -> None:
    """Serve the exporter one way until SIGTERM."""
    config = load_config(config_path)
    stop: list[object] = []
    if mode == "worker":
        service = Lifecycle(config, config_path, CLOCK, PAGES)
        server = MetricsServer(
            ("127.0.0.1", port), "/metrics", service.exposition, pages=PAGES, rendered=service.page
        )
        service.start()
        stop += [service.stop, server.stop]
        server.start()
    elif mode == "inprocess":  # the refresh threads beside the server, as before the worker
        refresher = make_refresher(config, config_path, CLOCK)
        server = MetricsServer(("127.0.0.1", port), "/metrics", lambda: refresher.exposition)
        refresher.start()
        stop += [refresher.stop, server.stop]
        server.start()
    else:
        refresher = make_refresher(config, config_path, CLOCK)
        registry = CollectorRegistry()
        registry.register(_Naive(refresher, config))
        refresher.start()
        start_http_server(port, "127.0.0.1", registry)
        stop.append(refresher.stop)

    _until_term()
    for step in stop:
        step()  # type: ignore[operator]


def _until_term() -> None:
    """Block until SIGTERM (the handler only flags: stopping a server there would deadlock)."""
    done = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        done.set()

    signal.signal(signal.SIGTERM, on_term)
    while not done.wait(0.2):
        pass


def static(path: str, port: int) -> None:
    """Serve fixed bytes (plain and gzipped) from memory: the floor any exporter can reach.

    A scrape asking for OpenMetrics gets the rendering written beside the file, if there is one.
    """
    text = Path(path).read_bytes()
    beside = Path(f"{path}{OPENMETRICS}")
    om = beside.read_bytes() if beside.exists() else text
    exposition = Exposition(text, gzip.compress(text, 1), om, gzip.compress(om, 1))
    server = MetricsServer(("127.0.0.1", port), "/metrics", lambda: exposition)
    server.start()
    _until_term()
    server.stop()


def opencost(path: str) -> None:
    """Our OpenCost path over one body: decode and validate, join, render."""
    print(json.dumps(opencost_path.opencost(path)))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.child",
        description=__doc__,
        epilog="`python -m bench.run` starts these; each prints its figures or serves until "
        "SIGTERM.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("refresh", help="two refreshes: JSON of CPU-s and peak RSS")
    one.add_argument("config", metavar="CONFIG")
    one.add_argument("out", metavar="OUT", nargs="?", help="also write the exposition here")
    one = sub.add_parser("serve", help="serve the exporter one way until SIGTERM")
    one.add_argument("config", metavar="CONFIG")
    one.add_argument("port", metavar="PORT", type=int)
    one.add_argument("mode", choices=("worker", "inprocess", "naive"))
    one = sub.add_parser("static", help="the same bytes from memory, nothing else")
    one.add_argument("file", metavar="FILE")
    one.add_argument("port", metavar="PORT", type=int)
    one = sub.add_parser("opencost", help="parse, join and render one /allocation body")
    one.add_argument("file", metavar="FILE")
    one = sub.add_parser("rebuilds", help="a rebuild's CPU-s after each source's refresh")
    one.add_argument("config", metavar="CONFIG")
    one = sub.add_parser("steps", help="where the peak RSS is reached, step by step")
    one.add_argument("config", metavar="CONFIG")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Dispatch on the first argument."""
    args = _parser().parse_args(argv)
    logs.configure("WARNING")
    if args.command == "refresh":
        refresh(args.config, args.out)
    elif args.command == "serve":
        serve(args.config, args.port, args.mode)
    elif args.command == "static":
        static(args.file, args.port)
    elif args.command == "rebuilds":
        rebuilds(args.config)
    elif args.command == "steps":
        steps(args.config)
    else:
        opencost(args.file)


if __name__ == "__main__":
    main()
