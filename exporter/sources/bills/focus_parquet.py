"""A FOCUS export in Parquet, read a batch of rows at a time as the CSV reader reads its rows.

Parquet needs pyarrow, the optional extra `parquet` (`pip install
'gpu-chargeback-exporter[parquet]'`): it is about 170 MB installed, too much to weigh every
install with for one file format, and CSV (gzip) is what every provider's export offers. The
values come back typed (decimals, timestamps, a map of tags), and are written as the CSV
export writes them, so one row parser serves both.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from exporter.errors import UpstreamPayloadError

__all__ = ["BATCH", "MAGIC", "parquet_rows"]

MAGIC = b"PAR1"
BATCH = 4096  # rows decoded at once: memory stays at a batch, not the file


def parquet_rows(path: Path, where: str) -> Iterator[list[str]]:
    """The header, then every row as text, a batch at a time."""
    try:
        parquet: Any = importlib.import_module("pyarrow.parquet")
    except ImportError:
        message = (
            f"{where}: a Parquet file needs pyarrow: install the `parquet` extra "
            "(pip install 'gpu-chargeback-exporter[parquet]'), or export CSV"
        )
        raise UpstreamPayloadError(message) from None
    try:
        file = parquet.ParquetFile(path)
        yield list(file.schema_arrow.names)
        for batch in file.iter_batches(batch_size=BATCH):
            columns = [column.to_pylist() for column in batch.columns]
            for values in zip(*columns, strict=True):
                yield [_text(value) for value in values]
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UpstreamPayloadError(f"{where}: not a readable Parquet file ({exc})") from None


def _text(value: Any) -> str:
    """A typed value as the CSV export writes it."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, date | int | float):
        return str(value)
    if isinstance(value, list):  # a map column: its (key, value) pairs
        return json.dumps(dict(value))
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)
