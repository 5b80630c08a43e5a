"""What-if settings: each key parsed into the names the config and month use; every mistake an
error naming its key and, for a name, the names the month knows."""

from __future__ import annotations

import pytest

from exporter.config.schema import IdlePolicy
from exporter.finance.what_if.keys import parse_what_if
from exporter.finance.what_if.rerun import what_if_config
from exporter.ledger.what_if.settings import WhatIf, WhatIfError
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from tests.support.seed_month import H100, SEED, month_config, month_snapshots

CONFIG = month_config(
    IdlePolicy.PROPORTIONAL,
    ["a", "b", "c"],
    gpu_prices={"nvidia h100 80gb hbm3": 1.5},
    llm_models=[
        {"model": "llama", "self_hosted": {"namespace": "ns-a"}},
        {"model": "gpt-4o", "external": True},
    ],
)
LATEST = month_snapshots(SEED)


def _parse(*settings: str) -> WhatIf:
    return parse_what_if(settings, CONFIG, LATEST)


def test_every_key_parses_to_the_names_the_config_and_month_use() -> None:
    what_if = _parse(
        "idle_policy=reservation",
        "gpu_price.NVIDIA-H100-80GB-HBM3=2.5",
        "gpu_flavor_price.h100=2",
        "quota.cq-a=3",
        "tokens_per_second.llama=2800",
    )
    assert what_if.idle_policy is IdlePolicy.RESERVATION
    # The config's spelling, so the config keeps one key for the model.
    assert what_if.gpu_prices == {"nvidia h100 80gb hbm3": 2.5}
    assert what_if.gpu_flavor_prices == {"h100": 2.0}
    assert what_if.quotas == {("cq-a", "h100"): 3.0}
    assert what_if.tokens_per_second == {"llama": 2800.0}
    assert len(what_if.given) == 5


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("idle_policy", "--what-if 'idle_policy': expected KEY=VALUE"),
        ("=3", "--what-if '=3': expected KEY=VALUE"),
        ("idle_policy=fair", "--what-if idle_policy: unknown policy 'fair' (known: separate,"),
        ("gpu_prices.x=1", "--what-if gpu_prices.x: unknown key (known: idle_policy, gpu_price."),
        ("gpu_price=1", "--what-if gpu_price: unknown key"),
        ("gpu_price.A100=1", "--what-if gpu_price.A100: no GPU model 'A100' in the month (known: "),
        (f"gpu_price.{H100}=0", f"--what-if gpu_price.{H100}: '0' is not a number above 0"),
        (f"gpu_price.{H100}=nan", f"--what-if gpu_price.{H100}: 'nan' is not a number above 0"),
        (f"gpu_price.{H100}=1e999", f"--what-if gpu_price.{H100}: '1e999' is not a number"),
        ("gpu_flavor_price.l40s=1", "--what-if gpu_flavor_price.l40s: no flavor 'l40s' in the "),
        ("quota.cq-z=1", "no ClusterQueue with GPU quota 'cq-z' in the month (known: cq-a, cq-b"),
        ("quota.cq-a=-1", "--what-if quota.cq-a: '-1' is not a number of 0 or more"),
        ("quota.cq-a/l40s=1", "--what-if quota.cq-a/l40s: no GPU flavor of cq-a 'l40s' in the"),
        ("tokens_per_second.gpt-4o=9", "no self-hosted model 'gpt-4o' in the month (known: llama)"),
        ("tokens_per_second.llama=ten", "--what-if tokens_per_second.llama: 'ten' is not a number"),
    ],
)
def test_a_bad_setting_names_its_key(setting: str, said: str) -> None:
    with pytest.raises(WhatIfError) as caught:
        _parse(setting)
    assert said in str(caught.value)


def test_a_key_given_twice_is_refused() -> None:
    with pytest.raises(WhatIfError, match=r"^--what-if quota.cq-a: given twice$"):
        _parse("quota.cq-a=1", "quota.cq-a=2")
    # One queue and flavor, spelled two ways; one GPU model, spelled two ways.
    with pytest.raises(WhatIfError, match=r"^--what-if quota.cq-a/h100: given twice$"):
        _parse("quota.cq-a=1", "quota.cq-a/h100=2")
    with pytest.raises(WhatIfError, match=r"^--what-if gpu_price.NVIDIA_H100_80GB_HBM3: given"):
        _parse(f"gpu_price.{H100}=1", "gpu_price.NVIDIA_H100_80GB_HBM3=2")


def test_a_queue_with_gpu_quota_in_two_flavors_must_name_one() -> None:
    assert LATEST.kueue is not None
    extra = QuotaRecord("cq-a", "pool", "l40s", "nvidia.com/gpu", 4.0)
    latest = LATEST.__class__(
        opencost=LATEST.opencost, kueue=KueueSnapshot((*LATEST.kueue.queues, extra))
    )
    with pytest.raises(WhatIfError, match=r"several flavors \(h100, l40s\): name one"):
        parse_what_if(["quota.cq-a=1"], CONFIG, latest)
    chosen = parse_what_if(["quota.cq-a/l40s=1"], CONFIG, latest)
    assert chosen.quotas == {("cq-a", "l40s"): 1.0}


def test_the_changed_config_is_validated_as_a_file_is() -> None:
    # Without sources.kueue, reservation has no quota to charge: the config's own rule says so.
    config = CONFIG.model_copy(
        update={"sources": CONFIG.sources.model_copy(update={"kueue": None})}
    )
    with pytest.raises(WhatIfError) as caught:
        what_if_config(parse_what_if(["idle_policy=reservation"], config, LATEST), config)
    message = str(caught.value)
    assert message.startswith("--what-if idle_policy=reservation: the config would not hold")
    assert "needs sources.kueue" in message
