"""Estimated cost of provider-reported usage, from the maintained `genai-prices` table.

A model the table does not know has no price: callers show "unknown", never a guess.
The offline model costs nothing. Prices are the table's current ones (USD); the table
ships with the package and is read locally (its background updater is never started).
"""

from __future__ import annotations

from decimal import Decimal

import genai_prices

FREE_PROVIDERS = frozenset({"offline", "scripted"})


def estimate_cost(
    model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0
) -> Decimal | None:
    """USD for this usage of `provider:model`, or None when the price is not known.

    `input_tokens` includes `cached_tokens` (cache reads), which are billed cheaper."""
    provider, _, name = model.partition(":")
    if provider in FREE_PROVIDERS or not name:
        return Decimal(0) if provider in FREE_PROVIDERS else None
    usage = genai_prices.Usage(
        input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cached_tokens
    )
    try:
        priced = genai_prices.calc_price(usage, name, provider_id=provider)
    except (LookupError, ValueError):
        return None
    return priced.total_price
