"""`python -m chargeback_demo [exporter flags]`: the exporter on the simulated cluster."""

from __future__ import annotations

import sys

from chargeback_demo.exporter import main

sys.exit(main())
