"""Config validation: every error names file, line and key; secrets only from env or files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from chargeback_demo.stack import demo_config_dict
from exporter.cli import main
from exporter.config.schema import format_duration, load_config, parse_duration
from exporter.credentials import read_secret
from exporter.errors import ConfigError
from tests.support.configs import assert_first_issue

VALID = """\
currency: EUR
timezone: Europe/Madrid
idle_policy: proportional
teams:
  - name: datos
    namespaces: [ns-datos]
    budget: {gpu: 2500, llm: 800}
attribution:
  team_label_keys: [team]
  fallback_label_keys: [app.kubernetes.io/part-of]
sources:
  opencost: {url: "http://opencost.opencost:9003", interval: 2m}
llm_models:
  - {model: llama-3-70b-onprem, self_hosted: {namespace: ns-vllm}}
  - {model: gpt-4o, external: true}
"""


def test_valid_config_loads_frozen(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config(VALID))
    assert config.teams[0].budget.gpu == 2500
    assert config.sources.opencost is not None
    assert config.sources.opencost.interval.total_seconds() == 120
    with pytest.raises(Exception, match="frozen"):
        config.currency = "USD"


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        (
            VALID.replace("interval: 2m", "intervall: 2m"),
            12,
            "sources.opencost.intervall",
            "unknown key",
        ),
        (
            VALID.replace("idle_policy: proportional", "idle_policy: sharing"),
            3,
            "idle_policy",
            "'separate', 'proportional' or 'reservation'",
        ),
        (
            VALID.replace("{gpu: 2500, llm: 800}", "{gpu: -1, llm: 800}"),
            7,
            "teams[0].budget.gpu",
            "greater than or equal to 0",
        ),
        (
            VALID.replace("timezone: Europe/Madrid", "timezone: Mars/Olympus"),
            2,
            "timezone",
            "unknown time zone",
        ),
        (
            VALID.replace("external: true", "external: false"),
            15,
            "llm_models[1]",
            "either external",
        ),
        (
            VALID.replace("idle_policy: proportional", "idle_policy: reservation"),
            1,
            "",
            "needs sources.kueue",
        ),
    ],
)
def test_errors_name_file_line_and_key(
    write_config: Callable[[str], str], text: str, line: int, key: str, message: str
) -> None:
    assert_first_issue(write_config(text), line, key, message)


def test_invalid_yaml_names_the_line(write_config: Callable[[str], str]) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config("currency: EUR\nteams: [\n  - name: x\n"))
    assert caught.value.issues[0].line is not None
    assert "invalid YAML" in caught.value.issues[0].message


def test_duplicate_and_reserved_team_names(write_config: Callable[[str], str]) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config("teams:\n  - name: a\n  - name: a\n"))
    assert (caught.value.issues[0].line, caught.value.issues[0].key) == (1, "teams")
    assert "repeated: a" in caught.value.issues[0].message
    with pytest.raises(ConfigError) as caught:
        load_config(write_config("teams:\n  - name: a\n  - name: __idle__\n"))
    assert (caught.value.issues[0].line, caught.value.issues[0].key) == (3, "teams[1].name")


def test_check_config_exits_2_with_file_line_key(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(VALID.replace("currency: EUR", "currency: euro"))
    assert main(["--config.file", path, "--check-config"]) == 2
    assert f"{path}:1: currency:" in capsys.readouterr().err
    assert main(["--config.file", write_config(VALID), "--check-config"]) == 0


def test_missing_config_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config.file", "/nonexistent/config.yaml", "--check-config"]) == 2
    assert "/nonexistent/config.yaml: (top level): cannot read" in capsys.readouterr().err


def test_durations() -> None:
    assert parse_duration("90s").total_seconds() == 90
    assert parse_duration("1.5h").total_seconds() == 5400
    assert parse_duration(30).total_seconds() == 30
    for bad in ("5 minutes", "-1s", "0s", True):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_secrets_from_env_and_file(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEY_FOR_TEST", "sk-secret-0123456789\n")
    assert read_secret("KEY_FOR_TEST", None).get_secret_value() == "sk-secret-0123456789"
    assert "sk-secret-0123456789" not in repr(read_secret("KEY_FOR_TEST", None))
    secret_file = tmp_path / "key"  # type: ignore[operator]
    secret_file.write_text("sk-from-file-0123456789\n")
    assert read_secret(None, str(secret_file)).get_secret_value() == "sk-from-file-0123456789"
    monkeypatch.delenv("KEY_FOR_TEST")
    with pytest.raises(ValueError, match="KEY_FOR_TEST is not set"):
        read_secret("KEY_FOR_TEST", None)


def test_check_config_reads_secrets(
    write_config: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = VALID.replace(
        '  opencost: {url: "http://opencost.opencost:9003", interval: 2m}\n',
        '  opencost: {url: "http://opencost.opencost:9003", interval: 2m}\n'
        '  litellm: {url: "http://litellm:4000", api_key_env: TEST_LITELLM_KEY, currency: EUR}\n',
    )
    path = write_config(text)
    monkeypatch.delenv("TEST_LITELLM_KEY", raising=False)
    assert main(["--config.file", path, "--check-config"]) == 2
    err = capsys.readouterr().err
    line = text.splitlines().index(next(x for x in text.splitlines() if "litellm" in x)) + 1
    key = "sources.litellm.api_key_env"
    assert f"{path}:{line}: {key}: environment variable TEST_LITELLM_KEY is not set" in err
    monkeypatch.setenv("TEST_LITELLM_KEY", "sk-test-0123456789")
    assert main(["--config.file", path, "--check-config"]) == 0
    assert "sk-test-0123456789" not in capsys.readouterr().err


def _source(extra: str) -> str:
    return f'sources:\n  opencost: {{url: "http://opencost:9003", {extra}}}\n'


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ("interval: 0.0001ms", "interval", "must be at least 1s, got 0.0001ms"),
        ("interval: 500ms", "interval", "must be at least 1s, got 500ms"),
        ("interval: 2d", "interval", "must be at most 1d, got 2d"),
        ("interval: .inf", "interval", "a duration must be a finite number"),
        ("interval: .nan", "interval", "a duration must be a finite number"),
        ("interval: 1.0e+999", "interval", "a duration must be a finite number"),
        ("interval: 99999999999d", "interval", "a duration must be at most a year"),
        ("timeout: 50ms", "timeout", "must be at least 100ms, got 50ms"),
        ("timeout: 10m", "timeout", "must be at most 5m, got 10m"),
        ("rate_window: 30s", "rate_window", "must be at least 1m, got 30s"),
        ("max_staleness: 8d", "max_staleness", "must be at most 7d, got 8d"),
        (
            "interval: 10m, max_staleness: 10m",
            "max_staleness",
            "10m is shorter than interval + timeout = 630s; data would expire between refreshes",
        ),
        (
            "interval: 1h",
            "max_staleness",
            "30m (the default) is shorter than interval + timeout = 3630s",
        ),
    ],
)
def test_durations_have_bounds_per_field(
    write_config: Callable[[str], str], extra: str, key: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(_source(extra)))
    issue = caught.value.issues[0]
    assert (issue.line, issue.key) == (2, f"sources.opencost.{key}")
    assert message in issue.message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1KiB", "must be between 64KiB and 4GiB, got '1KiB'"),
        ("8GiB", "must be between 64KiB and 4GiB, got '8GiB'"),
        ("lots", "expected a size like 64MiB, 512KiB or a number of bytes, got 'lots'"),
        ("64 MB", "expected a size like 64MiB"),
        ("-1", "must be between 64KiB and 4GiB"),
        ("true", "expected a size like 64MiB"),
    ],
)
def test_max_response_size_is_a_bounded_size(
    write_config: Callable[[str], str], value: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(_source(f"max_response_size: {value}")))
    issue = caught.value.issues[0]
    assert (issue.line, issue.key) == (2, "sources.opencost.max_response_size")
    assert message in issue.message


def test_max_response_size_takes_units_and_bytes(write_config: Callable[[str], str]) -> None:
    sizes = {"64KiB": 64 << 10, "128MiB": 128 << 20, "4GiB": 4 << 30, "1000000": 10**6}
    for text, size in sizes.items():
        config = load_config(write_config(_source(f"max_response_size: {text}")))
        assert config.sources.opencost is not None
        assert config.sources.opencost.max_response_size == size
    default = load_config(write_config(_source("interval: 5m")))
    assert default.sources.opencost is not None
    assert default.sources.opencost.max_response_size == 128 << 20


def test_durations_at_their_bounds_load(write_config: Callable[[str], str]) -> None:
    text = _source("interval: 1s, timeout: 100ms, max_staleness: 1100ms, rate_window: 7d")
    opencost = load_config(write_config(text)).sources.opencost
    assert opencost is not None and opencost.max_staleness.total_seconds() == 1.1
    text = _source("interval: 1d, timeout: 5m, max_staleness: 7d")
    assert load_config(write_config(text)).sources.opencost is not None


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("gpu_prices: {a100: .inf}\n", "gpu_prices.a100"),
        ("llm_completion_weight: .nan\n", "llm_completion_weight"),
        ("teams: [{name: a, budget: {gpu: .inf}}]\n", "teams[0].budget.gpu"),
        (
            "sources: {dcgm: {urls: ['http://g:9400'], idle_threshold: .nan}}\n",
            "sources.dcgm.idle_threshold",
        ),
        ("attribution: {max_teams: .inf}\n", "attribution.max_teams"),
        ("attribution: {max_models: .inf}\n", "attribution.max_models"),
    ],
)
def test_non_finite_numbers_are_refused(
    write_config: Callable[[str], str], text: str, key: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(text))
    assert caught.value.issues[0].key == key
    assert "finite number" in caught.value.issues[0].message


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "~\n", "null\n"])
def test_an_empty_file_is_an_error(
    write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = write_config(text)
    assert main(["--config.file", path, "--check-config"]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: (top level): the file has no settings (it is empty or only comments)\n"
    )


def test_each_identity_belongs_to_one_team(write_config: Callable[[str], str]) -> None:
    text = """\
teams:
  - name: a
    namespaces: [ns-a, ns-shared]
    cluster_queues: [cq-shared]
    litellm_teams: [lt-shared, lt-shared]
  - name: b
    namespaces: [ns-shared]
    cluster_queues: [cq-b, cq-shared]
    litellm_teams: [lt-shared]
"""
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(text))
    assert [(i.line, i.key, i.message) for i in caught.value.issues] == [
        (
            7,
            "teams[1].namespaces[0]",
            "namespace 'ns-shared' is already claimed by team 'a' at teams[0].namespaces[1] "
            "(line 3)",
        ),
        (
            8,
            "teams[1].cluster_queues[1]",
            "ClusterQueue 'cq-shared' is already claimed by team 'a' at "
            "teams[0].cluster_queues[0] (line 4)",
        ),
        (
            9,
            "teams[1].litellm_teams[0]",
            "LiteLLM team 'lt-shared' is already claimed by team 'a' at "
            "teams[0].litellm_teams[0] (line 5)",
        ),
    ]


def test_a_model_is_declared_once(write_config: Callable[[str], str]) -> None:
    text = (
        "llm_models:\n  - {model: m, external: true}\n  - {model: m, self_hosted: {namespace: x}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(text))
    assert caught.value.lines()[0].endswith(
        ":3: llm_models[1].model: model 'm' is already declared at llm_models[0] (line 2)"
    )


def test_the_demo_config_loads(tmp_path: Path) -> None:
    urls = {
        name: f"http://127.0.0.1:{port}"
        for name, port in [("opencost", 9003), ("dcgm", 9400), ("kueue", 6443), ("litellm", 4000)]
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(demo_config_dict(urls, str(tmp_path)), sort_keys=False))
    config = load_config(str(path))
    assert config.sources.kueue is not None and config.sources.litellm is not None


def test_format_duration() -> None:
    assert [format_duration(parse_duration(v)) for v in ("90s", "2h", "1.5s", "0.0004s")] == [
        "90s",
        "2h",
        "1500ms",
        "0.0004s",
    ]


REPORT_NAMING = """\
currency: EUR
report:
  cluster: {cluster}
  locale: {locale}
  provider: {provider}
llm_models:
  - {{model: gpt-4o, external: true, publisher: {publisher}}}
"""


def _naming(**values: str) -> str:
    good = {"cluster": "prod-madrid", "locale": "es-ES", "provider": "ML Platform"}
    return REPORT_NAMING.format(**{**good, "publisher": "OpenAI", **values})


def test_the_statements_naming_loads(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config(_naming()))
    report = config.report
    assert (report.cluster, report.locale, report.provider) == (
        "prod-madrid",
        "es-ES",
        "ML Platform",
    )
    assert report.invoice_issuer is None
    assert config.llm_models[0].publisher == "OpenAI"
    defaults = load_config(write_config("currency: USD\n")).report
    assert (defaults.cluster, defaults.locale) == ("default-cluster", None)


@pytest.mark.parametrize(
    ("values", "line", "key", "message"),
    [
        ({"cluster": '"prod madrid"'}, 3, "report.cluster", "letters, digits"),
        ({"cluster": "prod/eu"}, 3, "report.cluster", "letters, digits"),
        ({"locale": "xx-QQ"}, 4, "report.locale", "unknown locale 'xx-QQ'"),
        ({"locale": "es_ES"}, 4, "report.locale", "a tag like es-ES"),
        ({"provider": '"Plataforma \u20ac"'}, 5, "report.provider", "printable ASCII"),
        ({"publisher": '""'}, 7, "llm_models[0].publisher", "printable ASCII"),
    ],
)
def test_the_statements_naming_is_checked_with_file_line_and_key(
    write_config: Callable[[str], str], values: dict[str, str], line: int, key: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(_naming(**values)))
    issue = caught.value.issues[0]
    assert (issue.line, issue.key) == (line, key)
    assert message in issue.message
