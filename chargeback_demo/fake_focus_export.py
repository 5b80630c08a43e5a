"""The demo cloud's FOCUS 1.0 cost export: one gzip CSV a month in a folder, as AWS Data Exports
writes it, billing the GPU node a little above what OpenCost charges for it.

One row per resource and UTC day, every whole day from the gateway's history start to
yesterday: the cluster's node (tagged with the cluster, its ResourceId the node's providerID),
a volume and a VM of another cluster, which the exporter's cluster tag leaves out.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from chargeback_demo.cluster import Cluster
from chargeback_demo.fake_bills import NODE_MARKUP
from chargeback_demo.litellm_rows import history_start

__all__ = ["CLUSTER_TAG", "COLUMNS", "write_export"]

DAY = timedelta(days=1)
CLUSTER_TAG = ("kubernetes.io/cluster/demo-madrid", "owned")
COLUMNS = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "ProviderName",
    "PublisherName",
    "RegionId",
    "ResourceId",
    "ResourceName",
    "ServiceCategory",
    "ServiceName",
    "SubAccountId",
    "Tags",
)
_OTHERS: tuple[tuple[str, str, str, float, dict[str, str]], ...] = (
    ("vol-0demo42", "Storage", "Amazon Elastic Block Store", 1.2, {}),
    ("i-0otherteam", "Compute", "Amazon Elastic Compute Cloud", 19.0, {"team": "web"}),
)


def write_export(folder: Path, cluster: Cluster, currency: str, now: datetime) -> list[Path]:
    """Write a file per month of whole days up to yesterday (UTC); the paths written."""
    first = history_start(now).date()
    last = now.astimezone(UTC).date() - DAY
    written = []
    month = first
    while month <= last:
        following = (month.replace(day=28) + 4 * DAY).replace(day=1)
        path = folder / f"focus-{month:%Y-%m}.csv.gz"
        path.write_bytes(gzip.compress(_month(cluster, currency, month, following, last)))
        written.append(path)
        month = following
    return written


def _month(cluster: Cluster, currency: str, month: date, following: date, last: date) -> bytes:
    text = io.StringIO()
    out = csv.writer(text, lineterminator="\n")
    out.writerow(COLUMNS)
    day = month
    while day < following and day <= last:
        start = datetime.combine(day, time(), UTC)
        node = sum(cluster.capacity_cost(start, start + DAY).values()) * NODE_MARKUP
        tags = {CLUSTER_TAG[0]: CLUSTER_TAG[1], "kubernetes.io/node": cluster.node}
        rows = [(cluster.node, "Compute", "Amazon Elastic Compute Cloud", node, tags), *_OTHERS]
        for resource, category, service, cost, tag in rows:
            out.writerow(
                _row(day, month, following, currency, resource, category, service, cost, tag)
            )
        day += DAY
    return text.getvalue().encode()


def _row(
    day: date,
    month: date,
    following: date,
    currency: str,
    resource: str,
    category: str,
    service: str,
    cost: float,
    tags: dict[str, str],
) -> list[str]:
    amount = f"{cost:.6f}"
    return [
        amount,
        "123456789012",
        "demo-payer",
        currency,
        f"{following}T00:00:00Z",
        f"{month}T00:00:00Z",
        "Usage",
        "",
        f"{service} usage of {resource}",
        "Usage-Based",
        f"{day + DAY}T00:00:00Z",
        f"{day}T00:00:00Z",
        amount,
        "Amazon Web Services",
        amount,
        "AWS",
        "Amazon Web Services",
        "eu-south-2",
        resource,
        resource,
        category,
        service,
        "123456789012",
        json.dumps(tags, sort_keys=True),
    ]
