# The runtime image: the `exporter` package and its runtime dependencies, nothing else.
#   make image        (docker build -t $(IMAGE) .; the tag is the one deploy/ names)
# The base is pinned to a patch release; pin its digest too (python:3.11.11-slim-bookworm@sha256:...)
# where the registry is reachable when this file changes.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# Build stage: a virtual environment at the path it keeps in the runtime stage.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/exporter
WORKDIR /build
COPY pyproject.toml README.md ./
COPY exporter ./exporter
# A regular (not editable) install: the package is copied into the venv's site-packages.
RUN /opt/exporter/bin/pip install . && /opt/exporter/bin/pip uninstall --yes pip

# Runtime stage: the venv only; no compiler, no pip, no source tree.
FROM ${PYTHON_IMAGE}
ENV PATH=/opt/exporter/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN groupadd --system --gid 10001 exporter \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin exporter
COPY --from=build /opt/exporter /opt/exporter
# Exists at run time (relative paths in a config resolve here) and is not writable: the
# Deployment mounts the root filesystem read-only anyway.
WORKDIR /app
# Numeric, so Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
USER 10001:10001
EXPOSE 10290
ENTRYPOINT ["gpu-chargeback-exporter"]
CMD ["--config.file=/etc/gpu-chargeback-exporter/config.yaml"]
