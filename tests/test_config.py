"""Config validation: every error names file, line and key; secrets only from env or files."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from exporter.cli import main
from exporter.config import load_config, parse_duration, read_secret
from exporter.errors import ConfigError

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
    path = write_config(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    issue = caught.value.issues[0]
    assert (issue.line, issue.key) == (line, key)
    assert message in issue.message
    assert caught.value.lines()[0].startswith(f"{path}:{line}: ")


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
    monkeypatch.setenv("KEY_FOR_TEST", "sk-secret\n")
    assert read_secret("KEY_FOR_TEST", None).get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(read_secret("KEY_FOR_TEST", None))
    secret_file = tmp_path / "key"  # type: ignore[operator]
    secret_file.write_text("sk-from-file\n")
    assert read_secret(None, str(secret_file)).get_secret_value() == "sk-from-file"
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
        '  litellm: {url: "http://litellm:4000", api_key_env: TEST_LITELLM_KEY}\n',
    )
    path = write_config(text)
    monkeypatch.delenv("TEST_LITELLM_KEY", raising=False)
    assert main(["--config.file", path, "--check-config"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: sources.litellm: environment variable TEST_LITELLM_KEY is not set" in err
    monkeypatch.setenv("TEST_LITELLM_KEY", "sk-test")
    assert main(["--config.file", path, "--check-config"]) == 0
    assert "sk-test" not in capsys.readouterr().err
