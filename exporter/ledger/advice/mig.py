"""MIG profile tables per GPU model, and the smallest profile a workload fits (pure data).

Source: NVIDIA's MIG user guide, "Supported MIG Profiles" (docs.nvidia.com/datacenter/tesla/
mig-user-guide/supported-mig-profiles.html), and the profile names NVIDIA's mig-parted ships
per device (docs/advice.md, "MIG profiles"). A profile `<n>g.<m>gb` holds n of the GPU's
compute slices (7, or 4 on an A30) and about m GB of its memory; `instances` is how many of it
one GPU holds. Media-extension variants (`+me`) have the size of their base profile and are
left out: a workload moved to MIG is moved to a plain one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from exporter.gpu_names import canonical_model

__all__ = ["TABLES", "MigModel", "MigProfile", "mig_model", "smallest_fit"]

MIB_PER_GB = 1e9 / 2**20  # profile names count decimal GB; DCGM counts framebuffer in MiB


@dataclass(frozen=True)
class MigProfile:
    """One MIG profile of one GPU model."""

    name: str
    slices: int  # compute slices it holds
    memory_gb: int  # as its name says
    instances: int  # how many fit on one GPU


@dataclass(frozen=True)
class MigModel:
    """A GPU model's MIG geometry: its compute slices, memory and profiles."""

    name: str
    slices: int
    memory_gb: int
    profiles: tuple[MigProfile, ...]

    def share(self, profile: MigProfile) -> float:
        """The profile's share of the GPU, as the ledger prices a MIG instance (its slices)."""
        return profile.slices / self.slices


def _model(name: str, slices: int, memory_gb: int, rows: str) -> MigModel:
    profiles = []
    for row in rows.split():
        profile, count = row.split("x")
        size, memory = profile.split(".")
        profiles.append(MigProfile(profile, int(size[:-1]), int(memory[:-2]), int(count)))
    return MigModel(name, slices, memory_gb, tuple(profiles))


# "<profile>x<instances per GPU>", smallest first, as the guide's tables list them.
TABLES: dict[str, MigModel] = {
    m.name: m
    for m in (
        _model("A30 24GB", 4, 24, "1g.6gbx4 2g.12gbx2 4g.24gbx1"),
        _model("A100 40GB", 7, 40, "1g.5gbx7 1g.10gbx4 2g.10gbx3 3g.20gbx2 4g.20gbx1 7g.40gbx1"),
        _model("A100 80GB", 7, 80, "1g.10gbx7 1g.20gbx4 2g.20gbx3 3g.40gbx2 4g.40gbx1 7g.80gbx1"),
        _model("H100 80GB", 7, 80, "1g.10gbx7 1g.20gbx4 2g.20gbx3 3g.40gbx2 4g.40gbx1 7g.80gbx1"),
        _model("H100 94GB", 7, 94, "1g.12gbx7 1g.24gbx4 2g.24gbx3 3g.47gbx2 4g.47gbx1 7g.94gbx1"),
        _model(
            "H200 141GB",
            7,
            141,
            "1g.18gbx7 1g.35gbx4 2g.35gbx3 3g.71gbx2 4g.71gbx1 7g.141gbx1",
        ),
    )
}

_MEMORY = re.compile(r"^(\d+)gb$")


def mig_model(model: str) -> MigModel | None:
    """The MIG table of a GPU model as DCGM's `modelName` spells it; None when none is known.

    An H100 is the 80GB part unless its name says 94GB or NVL (the 94GB card); an A100 must
    say its memory (40GB and 80GB differ), as DCGM's names of it do. GH200 and H20 are not in
    the tables, so get none.
    """
    tokens = canonical_model(model).split("-")
    memory = next((int(m[1]) for t in tokens if (m := _MEMORY.match(t))), None)
    if "a30" in tokens:
        return TABLES["A30 24GB"]
    if "h200" in tokens:
        return TABLES["H200 141GB"]
    if "h100" in tokens:
        return TABLES["H100 94GB" if memory == 94 or "nvl" in tokens else "H100 80GB"]
    if "a100" in tokens and memory in (40, 80):
        return TABLES[f"A100 {memory}GB"]
    return None


def smallest_fit(
    table: MigModel, peak_mib: float, peak_activity: float, headroom: float
) -> MigProfile | None:
    """The smallest profile below the whole GPU whose memory and compute, each times
    `headroom`, hold the peak framebuffer (MiB) and the peak activity (a share of the whole
    GPU); None when only the whole GPU does."""
    fits = [
        p
        for p in table.profiles
        if p.slices < table.slices
        and peak_mib <= p.memory_gb * MIB_PER_GB * headroom
        and peak_activity <= table.share(p) * headroom
    ]
    return min(fits, key=lambda p: (p.slices, p.memory_gb), default=None)
