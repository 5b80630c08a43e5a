"""Tooling tests: committed and generated artefacts (mixin, deploy, README, image, bench)."""
