"""Start a real Prometheus and Alertmanager on loopback, with config writers, for demo and tests.

Both binaries come from the distribution's packages (Debian names them `prometheus` and
`prometheus-alertmanager`; upstream tarballs name the second `alertmanager`). Every function
takes a work directory for configs, data and logs, and returns the process and its base URL.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from chargeback_mixin.config import DEFAULT, MixinConfig
from chargeback_mixin.generate import ALERTS_FILE, RULES_FILE, render_rules

__all__ = [
    "DEFAULT_JOB",
    "free_port",
    "start_alertmanager",
    "start_prometheus",
    "stop",
    "ui_page",
    "wait_ready",
    "write_alertmanager_config",
    "write_prometheus_config",
    "write_rule_files",
]

DEFAULT_JOB = "gpu-chargeback-exporter"
PROMETHEUS_BINARIES = ("prometheus",)
ALERTMANAGER_BINARIES = ("prometheus-alertmanager", "alertmanager")

Process = subprocess.Popen[bytes]


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _binary(names: Sequence[str]) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    msg = f"none of {', '.join(names)} is installed (Debian: apt-get install {names[0]})"
    raise FileNotFoundError(msg)


def write_rule_files(directory: Path, config: MixinConfig = DEFAULT) -> list[Path]:
    """The mixin's recording and alerting rules for `config`, written under `directory`."""
    files = render_rules(config)
    paths = []
    for rel in (RULES_FILE, ALERTS_FILE):
        path = directory / Path(rel).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[rel], encoding="utf-8")
        paths.append(path)
    return paths


def write_prometheus_config(
    path: Path,
    *,
    targets: Sequence[str],
    rule_files: Sequence[Path] = (),
    alertmanager: str | None = None,
    job: str = DEFAULT_JOB,
    scrape_interval: str = "15s",
    evaluation_interval: str = "15s",
    external_labels: Mapping[str, str] | None = None,
    remote_write: Sequence[str] = (),
    jobs: Mapping[str, Sequence[str]] | None = None,
) -> Path:
    """A Prometheus config scraping `targets` (host:port) as `job`, with rules and alerting;
    `jobs` are further scrape jobs by name (a dcgm-exporter to read DCGM through).

    `external_labels` (such as `cluster`) go on every series sent through `remote_write`
    (receiver URLs, e.g. `http://host:port/api/v1/write`).
    """
    global_cfg: dict[str, object] = {
        "scrape_interval": scrape_interval,
        "scrape_timeout": scrape_interval,
        "evaluation_interval": evaluation_interval,
    }
    if external_labels:
        global_cfg["external_labels"] = dict(external_labels)
    scrape = [{"job_name": job, "static_configs": [{"targets": list(targets)}]}] if targets else []
    for name, more in (jobs or {}).items():
        scrape.append({"job_name": name, "static_configs": [{"targets": list(more)}]})
    cfg: dict[str, object] = {
        "global": global_cfg,
        "rule_files": [str(p) for p in rule_files],
        "scrape_configs": scrape,
    }
    if remote_write:
        # A short batch deadline so a test sees samples within a second or two, not 5s.
        queue = {"batch_send_deadline": "1s", "min_backoff": "100ms", "max_backoff": "1s"}
        cfg["remote_write"] = [{"url": url, "queue_config": queue} for url in remote_write]
    if alertmanager:
        cfg["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def write_alertmanager_config(
    path: Path, *, webhook_url: str, group_wait: str = "30s", group_interval: str = "5m"
) -> Path:
    """An Alertmanager config that sends every alert, grouped by name, to one webhook."""
    cfg = {
        "route": {
            "receiver": "webhook",
            "group_by": ["alertname"],
            "group_wait": group_wait,
            "group_interval": group_interval,
            "repeat_interval": "4h",
        },
        "receivers": [
            {"name": "webhook", "webhook_configs": [{"url": webhook_url, "send_resolved": True}]}
        ],
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def _spawn(argv: list[str], log: Path) -> Process:
    with log.open("wb") as out:
        # The child keeps its own copy of the log descriptor; ours can close.
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent)


def start_prometheus(
    workdir: Path,
    *,
    targets: Sequence[str],
    rule_files: Sequence[Path] = (),
    alertmanager: str | None = None,
    job: str = DEFAULT_JOB,
    interval: str = "15s",
    port: int | None = None,
    external_labels: Mapping[str, str] | None = None,
    remote_write: Sequence[str] = (),
    remote_write_receiver: bool = False,
    extra_args: Sequence[str] = (),
    jobs: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Process, str]:
    """Prometheus on 127.0.0.1 scraping `targets`, evaluating `rule_files` every `interval`.

    With `remote_write_receiver` it also accepts samples on `/api/v1/write` (Prometheus >=
    2.33), the protocol Thanos Receive and Mimir speak too.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    config = write_prometheus_config(
        workdir / "prometheus.yml",
        targets=targets,
        rule_files=rule_files,
        alertmanager=alertmanager,
        job=job,
        scrape_interval=interval,
        evaluation_interval=interval,
        external_labels=external_labels,
        remote_write=remote_write,
        jobs=jobs,
    )
    port = port or free_port()
    argv = [
        _binary(PROMETHEUS_BINARIES),
        f"--config.file={config}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    if remote_write_receiver:
        argv.append("--web.enable-remote-write-receiver")
    argv.extend(extra_args)
    return _spawn(argv, workdir / "prometheus.log"), f"http://127.0.0.1:{port}"


def start_alertmanager(
    workdir: Path,
    *,
    webhook_url: str,
    group_wait: str = "30s",
    group_interval: str = "5m",
    port: int | None = None,
) -> tuple[Process, str]:
    """A single, unclustered Alertmanager on 127.0.0.1 sending every alert to `webhook_url`."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = write_alertmanager_config(
        workdir / "alertmanager.yml",
        webhook_url=webhook_url,
        group_wait=group_wait,
        group_interval=group_interval,
    )
    port = port or free_port()
    argv = [
        _binary(ALERTMANAGER_BINARIES),
        f"--config.file={config}",
        f"--storage.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=",
    ]
    return _spawn(argv, workdir / "alertmanager.log"), f"http://127.0.0.1:{port}"


def wait_ready(proc: Process, url: str, timeout: float = 60.0) -> None:
    """Poll `url` until it answers 200; fail early if the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"{proc.args!r} exited with {proc.returncode} before {url} was ready"
            raise RuntimeError(msg)
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    msg = f"{url} not ready after {timeout:.0f}s"
    raise TimeoutError(msg)


def ui_page(url: str, page: str) -> str:
    """The address of one page of Prometheus's web UI (`rules`, `alerts`, `graph`) that answers.

    Upstream builds serve the React UI at `/<page>`; Debian's package (2.42, which the README
    installs) is built without it and serves only the classic UI, at `/classic/<page>`, while
    Prometheus 3 has no classic UI. The first that answers 200 is the link to print.
    """
    for path in (f"/{page}", f"/classic/{page}"):
        try:
            with urllib.request.urlopen(f"{url}{path}", timeout=2) as resp:
                if resp.status == 200:
                    return f"{url}{path}"
        except (urllib.error.URLError, OSError):
            continue
    return f"{url}/graph"


def stop(proc: Process, timeout: float = 10.0) -> None:
    """Terminate the process, then kill it if it does not exit in time."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)
