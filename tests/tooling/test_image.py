"""The Dockerfile: pinned slim base, two stages, non-root, only the runtime package copied."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).parents[2]
RUNTIME_CONTEXT = {"pyproject.toml", "README.md", "exporter"}


@dataclass
class Stage:
    """One FROM ... and the instructions under it."""

    base: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, op: str) -> list[str]:
        """The arguments of every instruction `op` in this stage."""
        return [args for name, args in self.instructions if name == op]


def _stages() -> list[Stage]:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = re.sub(r"\\\n", " ", text).splitlines()
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        op, _, rest = line.strip().partition(" ")
        if op == "ARG" and not stages:
            name, _, default = rest.partition("=")
            args[name] = default
        elif op == "FROM":
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], rest.split()[0])
            stages.append(Stage(image))
        else:
            stages[-1].instructions.append((op, rest))
    return stages


def test_the_base_is_a_pinned_slim_python() -> None:
    stages = _stages()
    assert len(stages) >= 2, "multi-stage: build, then a runtime without the build tools"
    for stage in stages:
        # A patch release and a Debian release: python:3.11 or :slim alone would drift.
        assert re.fullmatch(r"python:3\.\d+\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?", stage.base)


def test_the_runtime_stage_runs_as_a_numeric_non_root_user_in_a_workdir_that_exists() -> None:
    runtime = _stages()[-1]
    (user,) = runtime.all("USER")
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "numeric, so runAsNonRoot can check it"
    (workdir,) = runtime.all("WORKDIR")
    # Nothing after WORKDIR removes it (the old image deleted its own working directory).
    after = runtime.instructions[runtime.instructions.index(("WORKDIR", workdir)) :]
    assert not any(workdir in args for op, args in after if op == "RUN")
    assert runtime.all("ENTRYPOINT") == ['["gpu-chargeback-exporter"]']


def test_only_the_runtime_package_enters_the_image() -> None:
    stages = _stages()
    copied: set[str] = set()
    for stage in stages:
        for args in stage.all("COPY") + stage.all("ADD"):
            parts = args.split()
            if parts[0].startswith("--from="):  # from an earlier stage, not the context
                continue
            copied.update(p.rstrip("/").removeprefix("./") for p in parts[:-1])
    assert copied == RUNTIME_CONTEXT
    # The runtime stage takes the built environment, never the source tree.
    assert all(a.startswith("--from=") for a in stages[-1].all("COPY"))


def test_the_build_context_is_only_what_the_image_copies() -> None:
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*", "ignore everything, then allow what is copied"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    assert allowed == RUNTIME_CONTEXT
