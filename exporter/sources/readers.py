"""Every configured upstream ready to read: its row of the source table, its client, its deadline.

The server's scheduler and the finance report read through the same readers, so a closed
month, a day's month to date and the open month all come from one fetch per source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx

from exporter.config.loader import load_yaml_with_lines, read_config_text
from exporter.config.schema import Config, setting_error
from exporter.errors import (
    ConfigError,
    ConfigIssue,
    UpstreamError,
    UpstreamPayloadError,
    UpstreamUnavailable,
)
from exporter.sources.deadline import RetryPolicy, refresh_deadline
from exporter.sources.kind import SourceKind
from exporter.sources.reading import Reading
from exporter.sources.registry import configured_kinds

__all__ = ["SourceReader", "open_readers"]


@dataclass(frozen=True)
class SourceReader:
    """One configured upstream: `read` fetches a reading within its `refresh_deadline`."""

    kind: SourceKind[Any, Any, Any]
    settings: Any  # the source's config section
    shared: Any  # the settings from outside its section it reads (kind.shared)
    client: httpx.Client
    retries: RetryPolicy
    # Builds another client like `client`, with nothing kept from its reads (None: no other).
    reopen: Callable[[], httpx.Client] | None = None

    @property
    def name(self) -> str:
        """The source's name, as metrics and config call it."""
        return self.kind.name

    def read(self, reading: Reading) -> object:
        """Fetch `reading`, retrying transient failures; failing past the deadline."""
        seconds = self.settings.refresh_deadline.total_seconds()
        limit = self.settings.max_response_size
        with refresh_deadline(self.retries.start(seconds, limit)) as deadline:
            try:
                snapshot = self.kind.fetch(self.client, self.settings, self.shared, reading)
            except UpstreamError as exc:
                exc.retry_after = deadline.retry_after  # whichever call of the read was told
                raise
            # Raised by a decoder reading a reply, wherever it sits: the reply, not a bug.
            except RecursionError:
                message = f"{self.name}: a reply is nested too deeply to decode"
                raise UpstreamPayloadError(message) from None
            except UnicodeDecodeError as exc:
                message = f"{self.name}: a reply is not UTF-8 (byte {exc.start}: {exc.reason})"
                raise UpstreamPayloadError(message) from None
        # Time spent between calls (parsing, paging logic) counts too.
        if deadline.remaining() < 0:
            raise UpstreamUnavailable(
                f"{self.name}: refresh took longer than its deadline of {seconds:g}s",
                timeout=True,
            )
        return snapshot

    def close(self) -> None:
        """Close the client (and with it what the source kept between reads)."""
        self.client.close()

    def fresh(self) -> SourceReader | None:
        """The same reader on a new client that keeps nothing from this one's reads (closed
        days, what each part held), or None when it cannot build one."""
        return None if self.reopen is None else replace(self, client=self.reopen())


def open_readers(
    config: Config, config_path: str = "config", retries: RetryPolicy | None = None
) -> list[SourceReader]:
    """One reader per configured upstream, in table order, each with its own client.

    Clients and the shared settings are built here, once, so a missing secret or an unreadable
    kubeconfig is a config error at start (exit 2), not a failing read later.
    """
    policy = retries or RetryPolicy()
    return [
        SourceReader(
            kind,
            settings,
            kind.shared(config),
            _client(kind, settings, config_path),
            policy,
            _reopener(kind, settings, config_path),
        )
        for kind in configured_kinds(config)
        if (settings := kind.section(config)) is not None
    ]


def _reopener(
    kind: SourceKind[Any, Any, Any], settings: Any, path: str
) -> Callable[[], httpx.Client]:
    return lambda: _client(kind, settings, path)


def _client(kind: SourceKind[Any, Any, Any], settings: Any, path: str) -> httpx.Client:
    """Build a client from config that may be wrong (secret, kubeconfig): a config error."""
    try:
        return kind.build_client(settings)
    except ConfigError as exc:
        if any(not issue.key.startswith(("sources.", "bills.")) for issue in exc.issues):
            raise  # inside a kubeconfig: that file's own line and key
        raise _in_config(path, exc) from None
    except ValueError as exc:
        # The message quotes the file or variable; the error names its key and line.
        raise setting_error(path, kind.config_key, settings, str(exc)) from None


def _in_config(path: str, exc: ConfigError) -> ConfigError:
    """The error said at the config's key (its line when the file has it); the message names
    the file that proved unusable (a CA that is not PEM)."""
    try:
        _, lines = load_yaml_with_lines(path, read_config_text(path))
    except ConfigError:  # changed since it was loaded: the key still says where
        lines = {}
    issues = []
    for issue in exc.issues:
        loc = tuple(issue.key.split("."))
        line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), None)
        issues.append(ConfigIssue(line, issue.key, issue.message))
    return ConfigError(path, issues)
