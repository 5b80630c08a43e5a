"""The FinOps Foundation's FOCUS validator (2.0.1), run on an export, its results read back.

`make` installs it into `.focus-venv` (Python 3.12, from ../shared/tools). It reads
`rules/currency_codes.csv` by a relative path, so it runs from its installed package folder.
It exits 0 whatever it finds: the result is in its lines, one per rule.

Which failures are the export's: every one, but
- the rules that misfire in 2.0.1 (MISFIRING), and a rule that failed only because of them;
- a failed alternative of an OR rule that passed: the validator checks each branch of "X MUST
  be null when ..., MUST NOT be null when ..." on every row (InvoiceId-C-004-C says every
  InvoiceId must be null, InvoiceId-C-005-C that none may be), and the OR of the two is the
  spec's rule.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CLAIMS", "MISFIRING", "Outcome", "validate", "validator_home"]

ROOT = Path(__file__).resolve().parents[2]
# The optional features the export claims: it carries their columns.
CLAIMS = (
    "USAGE_MEASUREMENT_SUPPORTED",  # ConsumedQuantity, ConsumedUnit
    "SUB_ACCOUNT_SUPPORTED",  # SubAccountId, SubAccountName: the team
    "TAGGING_SUPPORTED",  # Tags
    "BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED",  # ResourceId, ResourceName
    "RESOURCE_TYPE_ASSIGNMENT_SUPPORTED",  # ResourceType
    "ACCOUNT_NAMING_SUPPORTED",  # BillingAccountName
)
# Rules 2.0.1 gets wrong on any FOCUS 1.2 export (../shared/tools/README.md).
MISFIRING = {
    # Checks `ResourceType IS NULL` on every row, dropping the spec's condition "when
    # ResourceId is not null": every charge without a resource fails it.
    "ResourceType-C-005-C": "drops the condition 'when ResourceId is not null'",
    # Read CommitmentDiscountStatus, a conditional column (COMMITMENT_DISCOUNT_SUPPORTED):
    # without it, every row counts as a violation.
    "ConsumedQuantity-C-005-C": "reads CommitmentDiscountStatus, which the export need not have",
    "ConsumedQuantity-C-006-C": "reads CommitmentDiscountStatus, which the export need not have",
}
_RULE = r"[A-Za-z]+-[A-Z]-\d{3}-[A-Z]"
_LINE = re.compile(rf"^\S+ (?P<rule>{_RULE}): (?P<status>PASS|FAIL|SKIPPED)\s+\((?P<detail>.*)\)$")
_TOTAL = re.compile(r"^Total: (\d+) \| Pass: (\d+) \| Fail: (\d+) \| Skipped: (\d+)$")
_CAUSES = re.compile(r"(?:failed child rules: \[|Upstream dependency failed: )([^\]]*)")
_RULE_ID = re.compile(_RULE)


@dataclass(frozen=True)
class Outcome:
    """What the validator said of one export."""

    total: tuple[int, int, int, int]  # rules, passed, failed, skipped
    failed: dict[str, str]  # every failed rule and its detail
    passed: frozenset[str]

    def the_exports(self, or_rules: dict[str, tuple[str, ...]]) -> dict[str, str]:
        """The failures that are the export's own (see the module docstring)."""
        excused = set(MISFIRING)
        excused |= {
            c for rule, children in or_rules.items() if rule in self.passed for c in children
        }
        changed = True
        while changed:  # a rule that failed only because excused rules failed
            changed = False
            for rule, detail in self.failed.items():
                causes = {c for group in _CAUSES.findall(detail) for c in _RULE_ID.findall(group)}
                if rule not in excused and causes and causes <= excused:
                    excused.add(rule)
                    changed = True
        return {r: d for r, d in self.failed.items() if r not in excused}


def validator_home() -> Path | None:
    """The validator's installed package folder, if `make` installed it."""
    venv = Path(os.environ.get("FOCUS_VALIDATOR_VENV", ROOT / ".focus-venv"))
    found = sorted(venv.glob("lib/python3.*/site-packages/focus_validator"))
    if not found or not (venv / "bin" / "focus-validator").exists():
        return None
    return found[-1]


def or_rules(home: Path) -> dict[str, tuple[str, ...]]:
    """Every OR rule of the validator's FOCUS 1.2 model and the rules it chooses between."""
    model = json.loads((home / "rules" / "model-1.2.json").read_text(encoding="utf-8"))
    out = {}
    for rule, body in model["ModelRules"].items():
        requirement = body.get("ValidationCriteria", {}).get("Requirement", {})
        if requirement.get("CheckFunction") == "OR":
            items = requirement.get("Items", [])
            out[rule] = tuple(i["ModelRuleId"] for i in items if "ModelRuleId" in i)
    return out


def validate(home: Path, data: Path) -> Outcome:
    """Run the validator on a CSV with the export's claims and read what it said."""
    binary = home.parents[3] / "bin" / "focus-validator"
    done = subprocess.run(
        [
            str(binary),
            "--data-file",
            str(data.resolve()),
            "--validate-version",
            "1.2",
            "--focus-dataset",
            "CostAndUsage",
            "--block-download",
            "--show-violations",
            "--applicability-criteria",
            ",".join(CLAIMS),
        ],
        cwd=home.parent,  # it reads rules/currency_codes.csv relative to here
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = done.stdout.splitlines()
    totals = [m for line in lines if (m := _TOTAL.match(line))]
    if done.returncode != 0 or not totals:
        raise RuntimeError(f"the validator did not run: {done.returncode}\n{done.stderr[-2000:]}")
    results = [m for line in lines if (m := _LINE.match(line))]
    failed = {m["rule"]: m["detail"] for m in results if m["status"] == "FAIL"}
    passed = frozenset(m["rule"] for m in results if m["status"] == "PASS")
    total = tuple(int(g) for g in totals[0].groups())
    return Outcome((total[0], total[1], total[2], total[3]), failed, passed)
