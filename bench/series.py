"""How many series the exporter serves for a synthetic cluster, with two dimensions configured.

Both dimensions hit their cap on purpose: `product` reads the workloads' `app` label (97 values)
and `environment` the namespace name label (one value per team), each capped at the default
`max_values` of 50, so the count is the bound a real cluster stays under. Upstream bodies are
cached under BENCH_CACHE, as `bench.run` caches them.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import Counter
from datetime import timedelta
from pathlib import Path

from bench.servers import Upstreams
from bench.synthetic import NOW, SIZES
from exporter.config.schema import Config, load_config
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.serve.wiring import build_sources
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

DIMENSIONS = [
    {"name": "product", "label_keys": ["app"]},
    {"name": "environment", "namespace_label_keys": ["kubernetes.io/metadata.name"]},
]

# The families with a series per team and model (each capped by attribution.max_models).
TEAM_MODEL = (
    "chargeback_llm_spend_month_to_date",
    "chargeback_llm_tokens_month_to_date",
    "chargeback_llm_requests_month_to_date",
    "chargeback_team_llm_cost_per_million_tokens",
    "chargeback_team_llm_cost_per_request",
    "chargeback_team_llm_alternative_cost_month_to_date",
)


def count(size_name: str, cache: Path) -> Counter[str]:
    """Series per family of one join of the synthetic cluster, dimensions configured."""
    return counts(size_name, cache)[0]


def counts(size_name: str, cache: Path) -> tuple[Counter[str], Counter[str]]:
    """Series per family of one join with the default caps, and of one with every model shown
    (`attribution.max_models` at its largest), from the same read."""
    upstreams = Upstreams(SIZES[size_name], cache).start()
    try:
        with tempfile.TemporaryDirectory(prefix="chargeback-series-") as tmp:
            path = upstreams.write_config(Path(tmp) / "config.json", warm=True)
            data = json.loads(path.read_text(encoding="utf-8"))
            data["dimensions"] = DIMENSIONS
            path.write_text(json.dumps(data), encoding="utf-8")
            config = _patient(load_config(str(path)))
            snapshots = {}
            for source in build_sources(config, str(path)):
                snapshots[source.name] = source.fetch(NOW)
                source.close()
    finally:
        upstreams.stop()
    everything = config.model_copy(
        update={"attribution": config.attribution.model_copy(update={"max_models": 10_000})}
    )
    out = []
    for each in (config, everything):
        reading = Reading.open(NOW, each.zone)
        result = join(each, Attributor(each), Snapshots.of(snapshots), reading)
        out.append(Counter(s.family.exposed_name for s in series(result)))
    return out[0], out[1]


def _patient(config: Config) -> Config:
    """The config with calls that wait hours: the first generation at L is that slow, beyond
    the five minutes a config may ask for (set unvalidated, for this count only)."""
    hours = timedelta(hours=3)
    sources = {
        name: section.model_copy(update={"timeout": hours, "refresh_timeout": hours})
        for name in ("opencost", "dcgm", "kueue", "litellm")
        if (section := getattr(config.sources, name)) is not None
    }
    return config.model_copy(update={"sources": config.sources.model_copy(update=sources)})


def main(argv: list[str] | None = None) -> None:
    """Print the series count, in total and for the dimension families."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.series",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("size", nargs="?", default="S", choices=sorted(SIZES), help="default S")
    size = parser.parse_args(argv).size
    cache = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "chargeback-bench"))
    found, everything = counts(size, cache)
    dimension = {k: v for k, v in found.items() if "dimension" in k}
    print(f"size {size}: {sum(found.values()):,} series from the join")
    for name, n in sorted(dimension.items()):
        print(f"  {name}: {n:,}")
    print(f"  every other family: {sum(found.values()) - sum(dimension.values()):,}")
    team_model = sum(found[k] for k in TEAM_MODEL)
    print(f"  team x model families: {team_model:,}")
    print(f"every model shown (attribution.max_models 10,000): {sum(everything.values()):,}")


if __name__ == "__main__":
    main()
