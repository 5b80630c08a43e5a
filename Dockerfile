# A small runtime image: the package and its runtime dependencies, nothing else.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY exporter ./exporter
RUN pip install --no-cache-dir . && rm -rf /src
USER 65534
EXPOSE 10290
ENTRYPOINT ["gpu-chargeback-exporter"]
CMD ["--config.file=/etc/gpu-chargeback-exporter/config.yaml"]
