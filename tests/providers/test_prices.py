"""The price table: the longest name a model begins with prices it; ``llm.prices`` adds names and
overrides the defaults; a model without a price costs ``None``, offline nothing."""

from __future__ import annotations

import pytest

from flynn.errors import ConfigError
from flynn.providers.defaults import DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL
from flynn.providers.prices import DEFAULT_PRICES, Price, PriceTable
from flynn.settings import load_settings

DEFAULTS = PriceTable(DEFAULT_PRICES)


def test_the_providers_default_models_are_priced() -> None:
    assert DEFAULTS.price_of(DEFAULT_ANTHROPIC_MODEL) == Price(2.00, 10.00)
    assert DEFAULTS.price_of(DEFAULT_OPENAI_MODEL) == Price(5.00, 30.00)


@pytest.mark.parametrize(
    ("model", "price"),
    [
        # Dated ids and aliases take their family's line.
        ("claude-sonnet-4-5-20250929", Price(3.00, 15.00)),
        ("claude-sonnet-4-6", Price(3.00, 15.00)),
        ("claude-haiku-4-5-20251001", Price(1.00, 5.00)),
        ("claude-opus-4-5-20251101", Price(5.00, 25.00)),
        # The longest name wins: an older, dearer Opus; a mini beside its big sibling.
        ("claude-opus-4-1-20250805", Price(15.00, 75.00)),
        ("claude-opus-4-20250514", Price(15.00, 75.00)),
        ("claude-opus-5-5", Price(4.00, 20.00)),
        ("gpt-4o-mini-2024-07-18", Price(0.15, 0.60)),
        ("gpt-4o-2024-08-06", Price(2.50, 10.00)),
        ("gpt-4o-2024-05-13", Price(5.00, 15.00)),
        ("gpt-4.1-nano-2025-04-14", Price(0.10, 0.40)),
        ("gpt-5-mini-2025-08-07", Price(0.25, 2.00)),
        ("gpt-5.1", Price(1.25, 10.00)),
        ("gpt-5.4-mini", Price(0.75, 4.50)),
        ("o3-mini-2025-01-31", Price(1.10, 4.40)),
        ("o4-mini", Price(1.10, 4.40)),
        ("gpt-5.6-terra", Price(2.50, 15.00)),
        ("claude-mythos-5-1", Price(10.00, 50.00)),
        ("GPT-4o", Price(2.50, 10.00)),  # names compare without case
    ],
)
def test_a_model_takes_the_longest_name_it_begins_with(model: str, price: Price) -> None:
    assert DEFAULTS.price_of(model) == price


@pytest.mark.parametrize(
    "model", ["llama3.1", "qwen2.5:7b", "gpt-oss-20b", "gpt-6-sol", "my-claude", "o"]
)
def test_a_model_no_name_begins_has_no_price(model: str) -> None:
    assert DEFAULTS.price_of(model) is None
    assert DEFAULTS.cost(provider="openai", model=model, input_tokens=9, output_tokens=9) is None


def test_cost_is_per_million_tokens_and_offline_is_free() -> None:
    cost = DEFAULTS.cost(
        provider="anthropic",
        model="claude-sonnet-4-5-20250929",
        input_tokens=2_000,
        output_tokens=100,
    )
    assert cost == pytest.approx((2_000 * 3.00 + 100 * 15.00) / 1_000_000)
    offline = DEFAULTS.cost(provider="offline", model="offline", input_tokens=500, output_tokens=50)
    assert offline == 0.0


def test_config_prices_override_defaults_and_add_models() -> None:
    settings = load_settings(
        {
            "llm": {
                "prices": {
                    "gpt-4o": {"input": 1, "output": 4},
                    "Llama3.1": {"input": 0, "output": 0},
                    "claude-sonnet-4-5-2025": {"input": 2.5, "output": 12.5},
                }
            }
        }
    )
    table = PriceTable.configured(settings.llm.prices)
    assert table.price_of("gpt-4o-2024-08-06") == Price(1.0, 4.0)
    assert table.price_of("gpt-4o-mini") == Price(0.15, 0.60)  # its own default still wins
    assert table.price_of("llama3.1:8b") == Price(0.0, 0.0)
    assert table.price_of("claude-sonnet-4-5-20250929") == Price(2.5, 12.5)
    assert table.price_of("claude-sonnet-4-6") == Price(3.00, 15.00)
    assert PriceTable.configured({}).price_of("gpt-4o") == Price(2.50, 10.00)


@pytest.mark.parametrize(
    ("prices", "key", "message"),
    [
        ({"gpt-4o": {"input": -1, "output": 4}}, "llm.prices.gpt-4o.input", "greater than"),
        ({"gpt-4o": {"input": 1, "output": "4"}}, "llm.prices.gpt-4o.output", "valid number"),
        ({"gpt-4o": {"input": True, "output": 4}}, "llm.prices.gpt-4o.input", "valid number"),
        ({"gpt-4o": {"input": 1e9, "output": 4}}, "llm.prices.gpt-4o.input", "less than"),
        ({"gpt-4o": {"input": float("nan"), "output": 4}}, "llm.prices.gpt-4o.input", "finite"),
        ({"gpt-4o": {"input": 1}}, "llm.prices.gpt-4o.output", "required"),
        ({"gpt-4o": {"input": 1, "output": 2, "cached": 0}}, "llm.prices.gpt-4o.cached", "unknown"),
        ({"gpt-4o": 2.5}, "llm.prices.gpt-4o", "dictionary"),
    ],
)
def test_a_bad_price_is_refused_naming_its_key(
    prices: dict[str, object], key: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"llm": {"prices": prices}})
    [problem] = caught.value.problems
    assert problem.key == key
    assert message in problem.message
