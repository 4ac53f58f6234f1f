"""bot/advisor/vat.py: the one VAT formula, and every answer that states a VAT price agreeing with it."""
import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import load_knowledge
from bot.advisor.vat import price_with_vat, price_without_vat

KB = load_knowledge()


def test_twenty_percent_kdv_on_an_hourly_price():
    assert price_with_vat(4.99, 0.2) == pytest.approx(5.988)
    assert price_with_vat(4.99, 0.2, to_cent=True) == 5.99
    assert price_with_vat(4.99, 0.0) == 4.99


def test_rounded_per_card_before_the_card_count_multiplies_it():
    # 9.99 with 20 % is 11.988, shown as 11.99; eight cards are 8 x 11.99, not round(8 x 11.988) = 95.90.
    assert 8 * price_with_vat(9.99, 0.2, to_cent=True) == pytest.approx(95.92)
    assert round(price_with_vat(8 * 9.99, 0.2), 2) == pytest.approx(95.9)


def test_without_vat_undoes_with_vat():
    for amount in (0.5, 3.2, 11.99, 1000.0):
        assert price_without_vat(price_with_vat(amount, 0.2), 0.2) == pytest.approx(amount)


def test_the_catalogue_rate_is_the_one_in_pricing_yml():
    assert KB.pricing.with_vat(10.0) == price_with_vat(10.0, KB.pricing.vat_rate)


def test_the_advice_states_each_card_at_the_formula_price():
    advice = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048))
    assert advice.cards
    for card in advice.cards:
        assert card.price_usd_hour_with_vat == price_with_vat(card.price_usd_hour, KB.pricing.vat_rate)
