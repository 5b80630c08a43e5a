"""The exporter's exceptions.

ExporterError
├── ConfigError              a config file that cannot be used (exit status 2)
└── UpstreamError            one refresh of one source failed; the source is marked down
    ├── UpstreamUnavailable  connection refused, DNS, TLS or timeout
    ├── UpstreamCredentialError  the exporter's own credential (a token file) is unreadable
    ├── UpstreamStatusError  the upstream answered with a non-success HTTP status
    └── UpstreamPayloadError the body is not what the upstream's API promises
        ├── UpstreamIncomplete  well-formed, but not the whole truth: a short or runaway read,
        │                       conflicting duplicates, or an empty reply contradicting data
        └── RecordsDropped      records with a bad field were dropped: the totals they feed
                                would be missing their money, tokens or quantities
        └── UpstreamTooLarge    more than the exporter reads: a body past its size limit, or a
                                list announcing more pages than a refresh reads
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from exporter.redact import redact

__all__ = [
    "ConfigError",
    "ConfigIssue",
    "ExchangeRateError",
    "ExporterError",
    "RecordsDropped",
    "UpstreamCredentialError",
    "UpstreamError",
    "UpstreamIncomplete",
    "UpstreamPayloadError",
    "UpstreamStatusError",
    "UpstreamTooLarge",
    "UpstreamUnavailable",
]


class ExporterError(Exception):
    """Base of every error the exporter raises on purpose."""


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a config file: where it is and what is wrong."""

    line: int | None
    key: str
    message: str


class ConfigError(ExporterError):
    """Raised when a config file cannot be read or validated; every issue names file, line, key."""

    def __init__(self, path: str, issues: list[ConfigIssue]) -> None:
        self.path = path
        self.issues = issues
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One human-readable line per issue: `file:line: key: message`."""
        out = []
        for issue in self.issues:
            where = f"{self.path}:{issue.line}" if issue.line is not None else self.path
            key = _one_line(issue.key) or "(top level)"
            out.append(f"{where}: {key}: {_one_line(issue.message)}")
        return out


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    # Keys and values come from the file: a newline in one must not forge another error line.
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class UpstreamError(ExporterError):
    """A refresh of a source failed. `reason` is the label value counted in the error metric."""

    reason = "error"
    # Snapshots the failed read dropped, by reason: counted even though the read is not used.
    dropped: Mapping[str, int] = {}
    # Seconds the upstream asked the exporter to wait before asking again (Retry-After).
    retry_after = 0.0

    def __init__(self, message: str) -> None:
        # Messages quote upstream bodies and library errors: every one passes the redaction.
        super().__init__(redact(message))


class UpstreamUnavailable(UpstreamError):
    """Raised when the upstream cannot be reached in time (connect, DNS, TLS, timeout)."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.reason = "timeout" if timeout else "unreachable"


class UpstreamCredentialError(UpstreamError):
    """Raised when the credential to send cannot be read (a rotated token file gone wrong)."""

    reason = "auth"


class UpstreamStatusError(UpstreamError):
    """Raised when the upstream answers with an HTTP status other than success."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status
        if status in (401, 403):
            self.reason = "auth"
        else:
            self.reason = f"http_{status // 100}xx"


class UpstreamPayloadError(UpstreamError):
    """Raised when a body does not have the shape the upstream's API promises."""

    reason = "malformed"


class UpstreamIncomplete(UpstreamPayloadError):
    """Raised when a reply parses but cannot be the whole truth, so its totals would be wrong."""

    reason = "incomplete"


class RecordsDropped(UpstreamPayloadError):
    """Raised when a read dropped records with a bad field: every total they feed would be low.

    `dropped` counts them by reason, so the refresher counts the drops of a read it refuses.
    """

    def __init__(self, message: str, dropped: Mapping[str, int]) -> None:
        super().__init__(message)
        self.dropped = dict(dropped)


class UpstreamTooLarge(UpstreamPayloadError):
    """Raised when a reply is more than the exporter will hold: it is not read any further."""

    reason = "too_large"


class ExchangeRateError(UpstreamError):
    """Raised when the rate file that converts a source's currency is missing or unusable."""

    reason = "exchange_rate"
