"""Answers as real models write them: the matchers read values, not one spelling."""

import datetime as dt

import pytest

from randori.tasks.checks import Clock, Day, Money, mentions, mentions_date, mentions_money, mentions_time, states
from randori.validity.variants import phrasings


@pytest.mark.parametrize("text", [
    "129.00", "€129", "€ 129.00", "129 €", "129,00 €", "EUR 129", "129 EUR", "129 euros", "**€129**",
    "The refund of 129.00 EUR arrived", "−€129.00", "eur 129.00"])
def test_money_written_any_common_way(text):
    assert mentions_money(text, 129.0)


@pytest.mark.parametrize("text", ["1,015.00 EUR", "1.015,00 €", "€1,015", "1015 euros", "1 015,00 €", "EUR 1015.00"])
def test_thousands_separators(text):
    assert mentions_money(text, 1015.0)


@pytest.mark.parametrize("text", [
    "129", "RMA-129", "order 12900", "1290.00 EUR", "139.00 EUR", "129.50 EUR", "on 13.03.2026", "version 4.12.1",
    "129.00 USD"])
def test_not_that_amount(text):
    assert not mentions_money(text, 129.0, currency="EUR")


@pytest.mark.parametrize("text", [
    "2026-03-27", "27 March 2026", "March 27, 2026", "Fri, Mar 27, 2026", "27.03.2026", "FRIDAY, 27 MARCH",
    "on the 27th of March", "due 27.03.", "from 24 to 27 March", "03/27/2026", "**27 Mar 2026**"])
def test_dates_written_any_common_way(text):
    assert mentions_date(text, "2026-03-27")


@pytest.mark.parametrize("text", ["2026-03-28", "28 March 2026", "27 March 2025", "March 2026", "v27.3", "27.3.1"])
def test_not_that_date(text):
    assert not mentions_date(text, dt.date(2026, 3, 27))


@pytest.mark.parametrize("text", ["15:00", "check-in from 3 pm", "3:00 PM", "3 p.m.", "15h00", "at 3PM."])
def test_times_written_any_common_way(text):
    assert mentions_time(text, "15:00")


def test_a_range_shares_its_am_pm():
    assert mentions_time("call 1:00-1:45 PM", "13:00") and mentions_time("call 1:00-1:45 PM", "13:45")
    assert mentions_time("10-11 am", "10:00") and mentions_time("from 11 to 1 pm", "11:00")
    assert not mentions_time("call 1:00-1:45 PM", "01:00")


@pytest.mark.parametrize("text", ["16:00", "3 am", "15.00 EUR", "3 hours", "13:15"])
def test_not_that_time(text):
    assert not mentions_time(text, "15:00")


def test_needles_and_distractors():
    assert mentions("Your balance is €3,184.52 as of FRI, MAR 13, 2026", Money(3184.52), Day("2026-03-13"), "balance")
    assert mentions("the 9:30 train", ("09:30", Clock("09:30")))
    answer = "The cheapest is Casa Nova at 384 EUR."
    assert states(answer, "Casa Nova", Money(384), distractors=(Money(447), "Nørrebro"))
    assert not states(answer + " Or possibly 447.00 EUR.", "Casa Nova", Money(384), distractors=(Money(447),))
    assert not states(answer, "Casa Nova", Money(385))


def test_phrasings_rewrite_every_value_and_stay_correct():
    gt = "Yes, Brightwave refunded 1,129.00 EUR on 2026-03-13; check-in is from 15:00 on Tuesday 19 May."
    variants = dict(phrasings(gt))
    assert variants["money: no cents"] == gt.replace("1,129.00 EUR", "€1,129")
    assert variants["money: in words"] == gt.replace("1,129.00 EUR", "1,129 euros")
    assert variants["money: european"] == gt.replace("1,129.00 EUR", "1.129,00 €")
    assert "Fri, Mar 13, 2026" in variants["date: weekday, month day, year"]
    assert "Tuesday, May 19" in variants["date: month day"]
    assert "from 3 pm" in variants["time: 12-hour short"] and "3:00 PM" in variants["time: 12-hour"]
    assert variants["upper case"] == gt.upper() and variants["lower case"] == gt.lower()
    assert "**1,129.00 EUR**" in variants["markdown emphasis"]
    for label, text in variants.items():  # every rewrite still states every value
        assert mentions(text, Money(1129), Day("2026-03-13"), Clock("15:00"), Day("2026-05-19")), label


def test_a_distractor_may_stand_as_context_in_its_own_sentence():
    june = ("40M",)
    ok = "We may make 25M tile requests a month. From June the plan allows 40M."
    hedge = "We may make 25M or maybe 40M tile requests a month."
    assert states(ok, "25M", distractors=june, context={"40M": ("june",)})
    assert not states(hedge, "25M", distractors=june, context={"40M": ("june",)})
    assert not states(ok, "25M", distractors=june)
