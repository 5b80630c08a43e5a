"""Unit-economics families: GPU prices applied and built, energy, cost per token, build or buy."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

GPU_PRICE_PER_HOUR = family(
    "gpu_price_per_hour",
    G,
    "GPU-hour price applied per GPU model (kind=model) and Kueue flavor (kind=flavor), and where "
    "it came from: config (gpu_prices, gpu_flavor_prices), price_build, opencost_charge (what "
    "OpenCost charged on its nodes), opencost_assets, config_models (its nodes' configured model "
    "prices), flavor_price (a model whose nodes a configured or built flavor price governs) or "
    "cluster_average (the blended price, when nothing else prices it). Beside a governing price "
    "(config, price_build, flavor_price), source=opencost_charge is what OpenCost itself charged.",
    ("kind", "name", "source"),
    "currency/h",
    "opencost",
)

GPU_PRICE_BUILD_PER_HOUR = family(
    "gpu_price_build_per_hour",
    G,
    "A built GPU price's parts, per node and hour: capex (over the available hours of its "
    "amortisation), energy (GPUs x watts x PUE x tariff) and operations; their sum over "
    "gpus_per_node is the GPU-hour price.",
    ("kind", "name", "part"),
    "currency/h",
    "exporter",
)

GPU_PRICE_BUILD_WATTS = family(
    "gpu_price_build_watts",
    G,
    "Power per GPU a built price used: nameplate (gpu_watts) or measured (dcgm-exporter's mean "
    "DCGM_FI_DEV_POWER_USAGE over that model's or flavor's GPUs).",
    ("kind", "name", "power"),
    "watts",
    "dcgm",
)

GPU_PRICE_BUILD_POWER_FALLBACK = family(
    "gpu_price_build_power_fallback",
    G,
    "1 when a price build asks for measured power but uses its nameplate gpu_watts, by reason: "
    "no_reading (no GPU of it reports power) or sample_dropped (one GPU's power sample was "
    "dropped this refresh, so the mean of the rest is not its draw).",
    ("kind", "name", "reason"),
    "",
    "dcgm",
)

TEAM_GPU_POWER_WATTS = family(
    "team_gpu_power_watts",
    G,
    "Measured power draw of the GPUs a team holds (DCGM_FI_DEV_POWER_USAGE; a shared GPU split "
    "as its count is). Absent, with the team's energy families, while one of its GPUs' power "
    "sample is dropped: unknown, never less.",
    ("team",),
    "watts",
    "dcgm",
)

TEAM_GPU_ENERGY_KWH_PER_HOUR = family(
    "team_gpu_energy_kwh_per_hour",
    G,
    "Energy rate of the team's GPUs at the wall: measured kW x the PUE of their model's price "
    "build (1 without one).",
    ("team",),
    "kWh/h",
    "dcgm",
)

TEAM_GPU_ENERGY_COST_PER_HOUR = family(
    "team_gpu_energy_cost_per_hour",
    G,
    "Energy cost rate of the team's GPUs: their kWh per hour at their model's price-build "
    "tariff. Absent for a team holding a GPU model no price build gives a tariff.",
    ("team",),
    "currency/h",
    "dcgm",
)

TEAM_GPU_CO2E_GRAMS_PER_HOUR = family(
    "team_gpu_co2e_grams_per_hour",
    G,
    "Emissions rate of the team's GPUs: kWh per hour x grid_co2e_grams_per_kwh. Absent without it.",
    ("team",),
    "grams/h",
    "dcgm",
)

LLM_COST_PER_MILLION_TOKENS = family(
    "llm_cost_per_million_tokens",
    G,
    "Cost per million tokens (prompt plus completion) of a model, month to date: declared "
    "(LiteLLM spend over tokens) and, for a self-hosted model, measured (its share of the "
    "serving cost over its tokens).",
    ("model", "basis"),
    "currency",
    "litellm",
    inputs=("opencost", "vllm"),
)

TEAM_LLM_COST_PER_MILLION_TOKENS = family(
    "team_llm_cost_per_million_tokens",
    G,
    "What a team paid per million tokens of a model, month to date: its external spend, or its "
    "re-attributed share of the serving cost, over its tokens.",
    ("team", "model"),
    "currency",
    "litellm",
    inputs=("opencost", "vllm"),
)

TEAM_LLM_COST_PER_REQUEST = family(
    "team_llm_cost_per_request",
    G,
    "What a team paid per request to a model, month to date (the same cost over its requests).",
    ("team", "model"),
    "currency",
    "litellm",
    inputs=("opencost", "vllm"),
)

TEAM_LLM_ALTERNATIVE_COST_MONTH_TO_DATE = family(
    "team_llm_alternative_cost_month_to_date",
    G,
    "What a team's tokens to a self-hosted model would have cost at the model's declared "
    "alternative (llm_models[].alternative), month to date.",
    ("team", "model"),
    "currency",
    "litellm",
)

LLM_BREAK_EVEN_RATIO = family(
    "llm_break_even_ratio",
    G,
    "A self-hosted model's serving cost over what its tokens would cost at its alternative, "
    "month to date: the multiple of today's token volume at which self-hosting costs the "
    "same per token; below 1 self-hosting is already cheaper.",
    ("model",),
    "ratio",
    "litellm",
    inputs=("opencost",),
)

LLM_BREAK_EVEN_UTILIZATION_RATIO = family(
    "llm_break_even_utilization_ratio",
    G,
    "GPU utilisation of the serving namespace at which self-hosting breaks even with the "
    "alternative: its measured utilisation x llm_break_even_ratio (above 1: not reachable).",
    ("model",),
    "ratio",
    "dcgm",
    inputs=("litellm", "opencost"),
)
