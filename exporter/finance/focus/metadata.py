"""FOCUS 1.2 metadata for an export: the data generator, the schema and where the data is.

FOCUS 1.2 Metadata: "FocusVersion MUST be provided in the metadata", with the DataGenerator, a
SchemaId, its CreationDate and a ColumnDefinition per column; a data artifact MUST reference
its schema without the data being read, so the file names the CSV it describes. The SchemaId
is derived from the column definitions: the same columns always give the same id, and a new
column gives a new schema, as the spec asks.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from exporter import __version__
from exporter.finance.focus.columns import COLUMNS
from exporter.finance.focus.rows import utc_stamp
from exporter.finance.focus.writer import FOCUS_VERSION

__all__ = ["DATA_GENERATOR", "column_definitions", "focus_metadata", "schema_id"]

DATA_GENERATOR = "gpu-chargeback-exporter"
_MONEY = ("BilledCost", "ContractedCost", "EffectiveCost", "ListCost")
_QUANTITIES = ("ConsumedQuantity", "PricingQuantity")
_DATETIMES = ("BillingPeriodEnd", "BillingPeriodStart", "ChargePeriodEnd", "ChargePeriodStart")
# A namespace of our own for uuid5: schema ids of this generator never meet another's.
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:gpu-chargeback-exporter:focus-schema")


def column_definitions() -> list[dict[str, Any]]:
    """Each column's FOCUS metadata: its name, type and, for decimals, precision and scale."""
    out: list[dict[str, Any]] = []
    for column in COLUMNS:
        if column in _MONEY:
            out.append({"ColumnName": column, "DataType": "DECIMAL", "NumberScale": 2})
        elif column in _QUANTITIES:
            out.append({"ColumnName": column, "DataType": "DECIMAL", "NumberScale": 6})
        elif column in _DATETIMES:
            out.append({"ColumnName": column, "DataType": "DATETIME"})
        elif column == "Tags":
            # No provider-defined tag: `team` and each dimension's name are the user's keys.
            out.append({"ColumnName": column, "DataType": "JSON", "ProviderTagPrefixes": []})
        else:
            out.append({"ColumnName": column, "DataType": "STRING", "StringEncoding": "UTF-8"})
    return out


def schema_id() -> str:
    """The schema's id, a UUID derived from the FOCUS version and the column definitions."""
    key = json.dumps([FOCUS_VERSION, column_definitions()], sort_keys=True)
    return str(uuid.uuid5(_NAMESPACE, key))


def focus_metadata(data_file: str, rows: int, size: int, created: datetime) -> dict[str, Any]:
    """The metadata of one export written as `data_file` (`rows` rows, `size` bytes)."""
    return {
        "DataGenerator": DATA_GENERATOR,
        "Schema": {
            "SchemaId": schema_id(),
            "FocusVersion": FOCUS_VERSION,
            "CreationDate": utc_stamp(created),
            "DataGeneratorVersion": __version__,
            "ColumnDefinition": column_definitions(),
        },
        "SchemaId": schema_id(),
        "DataLocation": [{"FilePath": data_file, "TotalRows": rows, "TotalBytes": size}],
    }
