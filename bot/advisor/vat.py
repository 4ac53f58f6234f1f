"""VAT on a price or a cost: the one formula every answer, figure and budget uses (rate: knowledge/pricing.yml).

Prices in the catalogue exclude VAT (knowledge/gpus.yml); the customer pays them with VAT (Turkish KDV, 20 % in
knowledge/pricing.yml). An amount is multiplied by ``1 + rate`` exactly as written here, so the advice, the FAQ
figures and the comparison state the same number for the same card.
"""
from __future__ import annotations


def price_with_vat(amount_usd: float, vat_rate: float, *, to_cent: bool = False) -> float:
    """``amount_usd`` (VAT excluded) with VAT at ``vat_rate`` (0.2 for 20 %).

    ``to_cent``: rounded to the cent, as the price list shows an hourly price; round a per-card price before
    multiplying it by a card count, so that n cards cost exactly n x the per-card price shown elsewhere (fa review
    §7: 8 x 11.99 = 95.92)."""
    gross = amount_usd * (1 + vat_rate)
    return round(gross, 2) if to_cent else gross


def price_without_vat(amount_usd_with_vat: float, vat_rate: float) -> float:
    """The inverse of :func:`price_with_vat`: a customer's VAT-included cap or budget as a catalogue price."""
    return amount_usd_with_vat / (1 + vat_rate)
