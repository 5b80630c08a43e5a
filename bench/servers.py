"""Loopback upstreams that send cached bytes: each answer is computed once, then kept on disk.

The first request of a kind runs the fake (slow at size L) and stores status, headers and body
under the cache directory; every later one, in this run or the next, sends those bytes as they
are, so the exporter's measured refreshes never wait on the generator.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from bench.prometheus_fake import FakePrometheus
from bench.synthetic import API_KEY, TOKEN, Size, Synthetic, config_dict
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, Handler

__all__ = ["CachedUpstream", "Upstreams"]


class CachedUpstream:
    """A handler that answers from `directory`, computing a miss once with `handler`."""

    def __init__(self, handler: Handler, directory: Path) -> None:
        self._handler = handler
        self._directory = directory
        self._memory: dict[str, FakeResponse] = {}
        # A miss is computed once even when asked twice at once; other answers do not wait.
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        directory.mkdir(parents=True, exist_ok=True)

    def __call__(self, request: FakeRequest) -> FakeResponse:
        key = _key(request)
        hit = self._memory.get(key)
        if hit is not None:
            return hit
        with self._locks_lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._memory:
                self._memory[key] = self._load(key) or self._store(key, self._handler(request))
        return self._memory[key]

    def _load(self, key: str) -> FakeResponse | None:
        meta, body = self._directory / f"{key}.json", self._directory / f"{key}.body"
        if not (meta.exists() and body.exists()):
            return None
        head = json.loads(meta.read_text(encoding="utf-8"))
        return FakeResponse(head["status"], body.read_bytes(), head["headers"])

    def _store(self, key: str, response: FakeResponse) -> FakeResponse:
        (self._directory / f"{key}.body").write_bytes(response.body)
        head = {"status": response.status, "headers": dict(response.headers)}
        # The body first, then its head: a run stopped halfway leaves no half entry.
        (self._directory / f"{key}.json").write_text(json.dumps(head), encoding="utf-8")
        return response


def _key(request: FakeRequest) -> str:
    query = sorted((k, v) for k, values in request.query.items() for v in values)
    text = json.dumps([request.method, request.path, query])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Upstreams:
    """The four upstreams of one size on loopback, and a config file pointing at them."""

    def __init__(self, size: Size, cache: Path) -> None:
        self.cache = cache / size.name
        synthetic = Synthetic(size)
        keep_alive = os.environ.get("BENCH_KEEP_ALIVE", "1") != "0"
        handlers: dict[str, Handler] = {
            "opencost": synthetic.opencost,
            "dcgm": synthetic.dcgm,
            "kueue": synthetic.kueue,
            "litellm": synthetic.litellm,
            "prometheus": FakePrometheus(lambda: list(synthetic.dcgm_endpoints.values())),
        }
        self.servers = {
            # Persistent connections, as the real upstreams keep them (BENCH_KEEP_ALIVE=0:
            # a connection per request, as when every DCGM endpoint is another host).
            name: FakeServer(CachedUpstream(handler, self.cache / name), keep_alive=keep_alive)
            for name, handler in handlers.items()
        }
        self.size = size

    def start(self) -> Upstreams:
        """Serve every upstream on a free port."""
        for server in self.servers.values():
            server.start()
        secrets = self.cache / "secrets"
        secrets.mkdir(parents=True, exist_ok=True)
        (secrets / "litellm-key").write_text(API_KEY + "\n", encoding="utf-8")
        (secrets / "kube-token").write_text(TOKEN + "\n", encoding="utf-8")
        return self

    def write_config(self, path: Path, only: str | None = None, warm: bool = False) -> Path:
        """A config for every source, or for `only` one of them (`dcgm-prometheus`: DCGM
        read through the Prometheus that scrapes it, rather than from each endpoint).

        `warm`: the calls wait as long as the config allows (the generator may be that slow).
        """
        urls = {name: server.url for name, server in self.servers.items()}
        data = config_dict(self.size, urls, str(self.cache / "secrets"))
        if only == "dcgm-prometheus":
            dcgm = {k: v for k, v in data["sources"]["dcgm"].items() if k != "urls"}
            # The fake dcgm-exporters name the pod in the plain labels.
            prometheus = {"url": urls["prometheus"], "workload_labels": "plain"}
            data["sources"] = {"dcgm": {**dcgm, "prometheus": prometheus}}
        elif only is not None:
            data["sources"] = {only: data["sources"][only]}
        for source in data["sources"].values():
            if warm:
                source.update(timeout="5m", refresh_timeout="2h", max_staleness="3h")
        path.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
        return path

    def stop(self) -> None:
        """Stop serving."""
        for server in self.servers.values():
            server.stop()
