"""The metric catalogue: names, help and labels follow the Prometheus conventions."""

from __future__ import annotations

import re

from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.catalogue.family import Kind


def test_catalogue_names_follow_the_conventions() -> None:
    names = [f.name for f in CATALOGUE]
    assert len(names) == len(set(names))
    for fam in CATALOGUE:
        assert re.fullmatch(r"chargeback_[a-z][a-z0-9_]*", fam.name), fam.name
        assert not fam.name.endswith("_total"), "counters gain _total on exposition"
        assert fam.help.endswith("."), fam.name
        if fam.kind is Kind.COUNTER:
            assert fam.exposed_name.endswith("_total")
        assert "cluster" not in fam.labels, "cluster belongs to the scrape config"
        assert not {"pod", "user", "api_key"} & set(fam.labels)
