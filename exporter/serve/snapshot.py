"""What a source's snapshot may tell the refresher: the records it dropped, whether it can follow
the last good one, and the closed days it repaired."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

__all__ = ["Audited", "Reconciled"]


@runtime_checkable
class Audited(Protocol):
    """A snapshot that reports the records it dropped and can refuse to follow the last one.

    Fetches are stateless, so a reply that contradicts the previous good read (an empty
    month-to-date where the same month had data) can only be caught here, where that read is.
    """

    @property
    def dropped(self) -> Mapping[str, int]:
        """Snapshots dropped by validation in this refresh, by reason."""
        ...

    def check_after(self, previous: object | None) -> None:
        """Raise an UpstreamError when this snapshot cannot follow `previous`."""
        ...


@runtime_checkable
class Reconciled(Protocol):
    """A snapshot from a source that keeps closed days and now and then re-reads them."""

    @property
    def repairs(self) -> int:
        """Kept records this refresh's re-read found changed and corrected."""
        ...
