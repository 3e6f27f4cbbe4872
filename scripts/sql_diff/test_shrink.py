"""Tests of shrink.py (`python -m pytest scripts/sql_diff`): rendered
tokens mean the same query, and shrinking keeps the failure while
removing what it does not need."""
import duckdb
import pytest

from shrink import render, shrink, tokens


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute("create table t as select range % 7 as a, range * 1.5 as f, 'x' || range as s from range(50)")
    return c


QUERIES = [
    "select a, count(*), sum(f) from t where a > 1 and (f < 30 or s like 'x1%') group by a order by a",
    "select s, a::varchar || '-' from t where a in (1, 2, -3) and s <> 'it''s' order by s limit 3",
    "select count(*) filter (where not (a is not null)) from t",
    "select a, row_number() over (partition by a order by f desc) from t order by 1, 2",
]


@pytest.mark.parametrize("q", QUERIES)
def test_rendered_tokens_are_the_same_query(con, q):
    assert con.sql(render(tokens(q))).fetchall() == con.sql(q).fetchall()


def runs(con, q: str) -> bool:
    try:
        con.sql(q).fetchall()
        return True
    except duckdb.Error:
        return False


def test_shrinking_keeps_the_failure_and_drops_the_rest(con):
    # The failure: a query that still runs and still reads column s with
    # a LIKE; everything else is noise to remove.
    q = QUERIES[0]
    calls = []

    def still_fails(text):
        calls.append(text)
        return runs(con, text) and "like" in text and " s " in f" {text} "

    small = shrink(q, still_fails)
    assert still_fails(small)
    assert len(tokens(small)) < len(tokens(q)) / 2, small
    # No single token can go: it is a local minimum.
    toks = tokens(small)
    for i in range(len(toks)):
        assert not still_fails(render(toks[:i] + toks[i + 1:])), small
    assert len(calls) < 5000


def test_a_query_that_cannot_shrink_is_returned_whole(con):
    q = "select 1"
    assert shrink(q, lambda text: text == q) == q
