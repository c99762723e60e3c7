"""What a model call costs: US dollars per million input and output tokens, per model name.

A name prices every model it begins, the longest name winning: ``claude-sonnet-4-5`` prices
``claude-sonnet-4-5-20250929``, and ``gpt-4o-mini`` wins over ``gpt-4o``. ``llm.prices`` adds
names or overrides these defaults; a model no name begins has no price (its tokens still count).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from flynn.providers.offline import OFFLINE
from flynn.settings import ModelPrice


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens read (``input``) and written (``output``)."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


PRICES_CHECKED = "2026-11"
"""When the defaults below were last compared with the vendors' price pages."""

# Standard (not batch, not priority) rates for prompts of ordinary length; cache reads and
# writes are not told apart from other input by the providers, so they are priced as input.
DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        # Anthropic. The family names price new versions until they get a line of their own.
        "claude-opus": Price(5.00, 25.00),  # 4.5 and later, 5
        "claude-opus-4-0": Price(15.00, 75.00),
        "claude-opus-4-1": Price(15.00, 75.00),
        "claude-opus-4-2025": Price(15.00, 75.00),  # claude-opus-4-20250514
        "claude-opus-5-5": Price(4.00, 20.00),
        "claude-sonnet": Price(3.00, 15.00),  # 4, 4.5, 4.6
        "claude-sonnet-5": Price(2.00, 10.00),  # 5 and 5.5
        "claude-haiku": Price(1.00, 5.00),  # 4.5
        "claude-haiku-5-5": Price(0.10, 0.50),  # prompts up to 100k tokens
        "claude-fable": Price(10.00, 50.00),
        "claude-mythos": Price(10.00, 50.00),
        "claude-3-5-haiku": Price(0.80, 4.00),
        "claude-3-haiku": Price(0.25, 1.25),
        "claude-3-5-sonnet": Price(3.00, 15.00),
        "claude-3-7-sonnet": Price(3.00, 15.00),
        "claude-3-opus": Price(15.00, 75.00),
        # OpenAI. No price was published for gpt-6-* when these were checked.
        "gpt-5.6-sol": Price(5.00, 30.00),
        "gpt-5.6-terra": Price(2.50, 15.00),
        "gpt-5.6-luna": Price(1.00, 6.00),
        "gpt-5.5": Price(5.00, 30.00),
        "gpt-5.5-pro": Price(30.00, 180.00),
        "gpt-5.4": Price(2.50, 15.00),
        "gpt-5.4-mini": Price(0.75, 4.50),
        "gpt-5.4-nano": Price(0.20, 1.25),
        "gpt-5.4-pro": Price(30.00, 180.00),
        "gpt-5.3": Price(1.75, 14.00),
        "gpt-5.2": Price(1.75, 14.00),
        "gpt-5.2-pro": Price(21.00, 168.00),
        "gpt-5": Price(1.25, 10.00),  # also 5.1 and gpt-5-chat-latest
        "gpt-5-mini": Price(0.25, 2.00),
        "gpt-5-nano": Price(0.05, 0.40),
        "gpt-5-pro": Price(15.00, 120.00),
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        "gpt-4.1-nano": Price(0.10, 0.40),
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-2024-05-13": Price(5.00, 15.00),
        "gpt-4o-mini": Price(0.15, 0.60),
        "o1": Price(15.00, 60.00),
        "o1-mini": Price(1.10, 4.40),
        "o1-pro": Price(150.00, 600.00),
        "o3": Price(2.00, 8.00),
        "o3-mini": Price(1.10, 4.40),
        "o3-pro": Price(20.00, 80.00),
        "o4-mini": Price(1.10, 4.40),
    }
)


class PriceTable:
    """Prices by model name prefix; ``cost`` is the ``Prices`` the costs table records with."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self._prices = {name.casefold(): price for name, price in prices.items()}
        self._longest_first = sorted(self._prices, key=len, reverse=True)

    @classmethod
    def configured(cls, overrides: Mapping[str, ModelPrice]) -> PriceTable:
        """The defaults with ``llm.prices`` laid over them (names compared without case)."""
        prices = dict(DEFAULT_PRICES)
        prices.update({name.casefold(): Price(p.input, p.output) for name, p in overrides.items()})
        return cls(prices)

    def price_of(self, model: str) -> Price | None:
        name = model.casefold()
        for prefix in self._longest_first:
            if name.startswith(prefix):
                return self._prices[prefix]
        return None

    def cost(
        self, *, provider: str, model: str, input_tokens: int, output_tokens: int
    ) -> float | None:
        """US dollars for one call; 0 offline, ``None`` for a model without a price."""
        if provider == OFFLINE:
            return 0.0
        price = self.price_of(model)
        return None if price is None else price.cost(input_tokens, output_tokens)
