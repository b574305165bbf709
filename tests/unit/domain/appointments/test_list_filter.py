"""The list filter's rules: how names are matched, how the filter is read and carried in a state token."""

from __future__ import annotations

from datetime import date

from doctordesk.domain.appointments.list_filter import (
    ListFilter,
    filter_token,
    name_words,
    parse_filter,
    prefix_end,
    search_words,
    split_filter,
)


def test_name_words_are_case_folded_without_accents_and_split_at_hyphens_and_apostrophes():
    assert name_words("Jörg Meyer-Müller") == {"jorg", "meyer", "muller"}
    assert name_words("Seán O'Brien") == {"sean", "o", "brien"}
    assert name_words("GROSSE Straße") == {"grosse", "strasse"}


def test_search_words_are_folded_like_names_so_any_spelling_of_case_and_accent_matches():
    assert search_words("  MÜL  maria ") == ("maria", "mul")
    assert all(w.startswith(s) for s, w in zip(search_words("Mül"), ["muller"], strict=True))


def test_prefix_end_bounds_exactly_the_words_that_start_with_the_prefix():
    end = prefix_end("mul")
    words = ["mukz", "mul", "muller", "mulzzz", "mum", "mv"]
    assert [w for w in words if "mul" <= w < end] == ["mul", "muller", "mulzzz"]


def test_parse_filter_accepts_a_whole_filter_and_names_each_bad_field():
    f, fields = parse_filter({"status": "declined", "from": "2026-01-02", "to": "2026-02-03", "q": " anna  mü "})
    assert fields == {}
    assert f == ListFilter("declined", date(2026, 1, 2), date(2026, 2, 3), "anna mü")
    _, fields = parse_filter({"status": "lost", "from": "2026-1-2", "to": "x", "q": "a\nb"})
    assert set(fields) == {"status", "from", "to", "q"}
    _, fields = parse_filter({"from": "2026-02-03", "to": "2026-02-01"})
    assert set(fields) == {"to"}
    _, fields = parse_filter({"q": "x" * 61})
    assert set(fields) == {"q"}


def test_the_filter_survives_a_round_trip_through_the_state_token_whatever_the_search_holds():
    f = ListFilter("pending-response", date(2026, 3, 1), None, "Zoë ~!:. O'Brien")
    token = "e1.4.17.abc~1_2:::" + filter_token(f)
    rest, back = split_filter(token)
    assert rest == "e1.4.17.abc~1_2:::"
    assert back == f
    assert filter_token(ListFilter()) == ""
    assert split_filter("e1.4.17.abc") == ("e1.4.17.abc", ListFilter())


def test_a_malformed_filter_in_a_token_counts_as_no_filter():
    assert split_filter("e1.2.3.h!lost...")[1] == ListFilter()
    assert split_filter("e1.2.3.h!declined.2026-13-01..")[1] == ListFilter()
    assert split_filter("e1.2.3.h!only.two")[1] == ListFilter()
