"""Writes random valid queries over the tables of `sql_diff.py --make-nulls`
(t: a int, b bigint, c double, d decimal, s text, dt date, flag bool; u: k,
v, w; x: edge values i bigint, f double), one per line, for `sql_diff.py` to run on sloth and DuckDB:

    python scripts/sql_diff/random_queries.py --count 2000 --seed 1 > /tmp/random.sql
    python scripts/sql_diff/sql_diff.py DIR /tmp/random.sql --sloth target/release/sloth

Besides plain differential queries (filters, group by, joins, windows,
subqueries, set operations over NULL-heavy columns with duplicates), every
random predicate p also yields the ternary-logic-partitioning (TLP) query:
the counts of rows where p, where NOT p and where p IS NULL, side by side
with the total: a wrong NULL or NOT in any rewrite breaks the sum, and both
engines must give the same four numbers; and the NoREC pair: the count of
rows where p (a filter the optimizer pushes into the scan) beside the sum of
CASE WHEN p THEN 1 ELSE 0 END over all rows (evaluated row by row, never
pushed), which must agree with each other and with DuckDB. Queries avoid the places where sloth
follows PostgreSQL and DuckDB does not (integer division, NULL order under
DESC), so any difference is a finding.
"""
import argparse
import random

INT = ["a", "b", "w", "k"]
NUM = {"t": ["a", "b", "c", "d"], "u": ["k", "w"], "x": ["f"]}
TEXT = {"t": ["s"], "u": ["v"], "x": ["cast(i as varchar)"]}
# Constants that x's edge values compare against: each zero, NaN, infinity.
EDGES = ["0", "-0.0", "'nan'::double", "'inf'::double", "'-inf'::double", "1.5", "-1.5"]


class Gen:
    def __init__(self, rng: random.Random):
        self.r = rng

    def pick(self, xs):
        return self.r.choice(xs)

    def number(self, table: str) -> str:
        col = self.pick(NUM[table])
        form = self.r.randrange(6)
        if form == 0:
            return f"({col} + {self.r.randint(-5, 5)})"
        if form == 1:
            return f"({col} * {self.r.randint(-3, 3)})"
        if form == 2:
            return f"abs({col})"
        if form == 3:
            return f"coalesce({col}, {self.r.randint(-2, 2)})"
        return col

    def predicate(self, table: str, depth: int = 0) -> str:
        form = self.r.randrange(9 if depth < 2 else 5)
        if table == "x" and form in (0, 3, 6):
            return self.edge_predicate()
        if form == 0:
            op = self.pick(["=", "<>", "<", "<=", ">", ">="])
            return f"{self.number(table)} {op} {self.r.randint(-6, 6)}"
        if form == 1:
            return f"{self.pick(NUM[table])} is {self.pick(['', 'not '])}null"
        if form == 2:
            s = self.pick(TEXT[table])
            return self.pick([f"{s} like '{self.pick('ABCDv')}%'", f"{s} = ''", f"length({s}) > {self.r.randint(0, 12)}"])
        if form == 3:
            items = ", ".join(str(self.r.randint(-5, 15)) for _ in range(self.r.randint(1, 4)))
            return f"{self.pick(NUM[table])} {self.pick(['', 'not '])}in ({items})"
        if form == 4:
            lo = self.r.randint(-5, 5)
            return f"{self.pick(NUM[table])} between {lo} and {lo + self.r.randint(0, 8)}"
        if form == 5 and table == "t":
            return self.pick(["flag", "not flag", "flag is not true", "flag is false"])
        if form == 8 and table == "t":
            return f"dt {self.pick(['<', '>='])} date '{self.r.randint(1991, 2016)}-0{self.r.randint(1, 9)}-15'"
        a = self.predicate(table, depth + 1)
        b = self.predicate(table, depth + 1)
        return f"({a} {self.pick(['and', 'or'])} {b})" if form != 7 else f"not ({a})"

    def edge_predicate(self) -> str:
        form = self.r.randrange(3)
        if form == 0:
            op = self.pick(["=", "<>", "<", "<=", ">", ">="])
            return f"{self.pick(['f', 'abs(f)', '-f'])} {op} {self.pick(EDGES)}"
        if form == 1:
            items = ", ".join(self.pick(EDGES) for _ in range(self.r.randint(1, 3)))
            return f"f {self.pick(['', 'not '])}in ({items})"
        op = self.pick(["=", "<", ">"])
        return f"i {op} {self.pick(['0', '9223372036854775807', '-9223372036854775808', '8'])}"

    def edges(self) -> str:
        form = self.r.randrange(4)
        where = f" where {self.predicate('x')}" if self.r.random() < 0.5 else ""
        if form == 0:
            return f"select f, count(*), min(i), max(i) from x{where} group by f"
        if form == 1:
            return f"select count(distinct f), min(f), max(f), count(distinct i), sum(f) from x{where}"
        if form == 2:
            on = self.pick(["a.f = b.f", "a.f = -b.f", "a.i = b.i and a.f <= b.f"])
            return f"select count(*), count(b.i) from x a {self.pick(['join', 'left join', 'full join'])} x b on {on}"
        return f"select distinct f from x{where}"

    def tlp(self) -> str:
        table = self.pick(["t", "u", "x"])
        p = self.predicate(table)
        return (
            f"select count(*) filter (where {p}) as yes, count(*) filter (where not ({p})) as no, "
            f"count(*) filter (where ({p}) is null) as unknown, count(*) as total from {table}"
        )

    def norec(self) -> str:
        table = self.pick(["t", "u", "x"])
        p = self.predicate(table)
        return (
            f"select (select count(*) from {table} where {p}) as filtered, "
            f"(select sum(case when {p} then 1 else 0 end) from {table}) as evaluated"
        )

    def aggregate(self, table: str) -> str:
        col = self.pick(NUM[table])
        if self.r.random() < 0.25 and table == "t":
            return self.pick([
                "median(c)", "stddev_samp(c)", "var_pop(d)", "bool_and(flag)", "bool_or(a > 0)",
                "string_agg(s, ',' order by s)", "count(a, s)", "min(s)", "max(dt)",
                "sum(c) filter (where a > 0)", "count(*) filter (where s like 'A%')",
                "max(b) - min(b)", "covar_pop(c, d)", "regr_avgy(c, a)", "regr_count(c, b)",
                "bit_or(a)", "bit_xor(b)", "bit_and(b + 1000000000000)", "array_agg(b order by b)",
            ])
        fn = self.pick(["sum", "min", "max", "count", "avg"])
        distinct = "distinct " if self.r.random() < 0.2 and fn != "avg" else ""
        return f"{fn}({distinct}{col})"

    def group_by(self) -> str:
        table = self.pick(["t", "u"])
        keys = {"t": ["a", "s", "flag", "a % 3", "year(dt)"], "u": ["k", "v", "w % 4"]}[table]
        key = self.pick(keys)
        aggs = ", ".join(self.aggregate(table) for _ in range(self.r.randint(1, 3)))
        where = f" where {self.predicate(table)}" if self.r.random() < 0.6 else ""
        having = f" having count(*) > {self.r.randint(0, 50)}" if self.r.random() < 0.3 else ""
        if self.r.random() < 0.15:
            other = self.pick([k for k in keys if k != key])
            sets = self.pick([f"rollup ({key}, {other})", f"cube ({key}, {other})",
                              f"grouping sets (({key}), ({other}), ())"])
            return (f"select {key} as g, {other} as h, grouping({key}, {other}), count(*), {aggs} "
                    f"from {table}{where} group by {sets}{having}")
        return f"select {key} as g, count(*), {aggs} from {table}{where} group by {key}{having}"

    def join(self) -> str:
        kind = self.pick(["join", "left join", "right join", "full join"])
        pred = f" where {self.predicate('t')}" if self.r.random() < 0.5 else ""
        on = self.pick(["t.a = u.k", "t.a = u.k and t.b > u.w", "t.a = u.k + 1"])
        return (
            f"select u.v, count(*), count(t.a), sum(u.w), min(t.s) from t {kind} u on {on}{pred} group by u.v"
        )

    def subquery(self) -> str:
        form = self.r.randrange(6)
        p = self.predicate("u")
        if form == 4:
            # Correlated by a non-equality: planned per distinct outer value.
            value = self.pick(["count(*)", "coalesce(sum(w), -1)", "max(v)", "count(v) + 1"])
            cond = self.pick(["u.w > t.a * 5", "u.k < t.a and u.w >= t.c", "u.w between t.a and t.a + 20"])
            return (f"select a, count(*), sum(length(cast((select {value} from u where {cond} and {p}) as varchar))) "
                    f"from t group by a")
        if form == 5:
            op = self.pick(["<", "<=", ">", ">=", "=", "<>"])
            q = self.pick(["all", "any"])
            return (f"select count(*), sum(b) from t where a {op} {q} "
                    f"(select k from u where u.w < t.c + 50 and {p})")
        if form == 3:
            # A correlated scalar subquery: outer rows without a match read
            # its value over no rows.
            value = self.pick(["count(*) + 1", "coalesce(sum(w), -1)", "max(w)", "count(v) * 2"])
            return (f"select a, count(*), sum((select {value} from u where u.k = t.a and {p})) "
                    f"from t group by a")
        if form == 0:
            return f"select count(*), sum(b) from t where a in (select k from u where {p})"
        if form == 1:
            return f"select count(*) from t where exists (select 1 from u where u.k = t.a and {p})"
        return f"select count(*), max(c) from t where a not in (select k from u where k is not null and {p})"

    def window(self) -> str:
        fn = self.pick(["row_number()", "rank()", "dense_rank()", "sum(w)", "count(*)", "max(w)",
                        "lag(w)", "lead(w, 2, -1)", "first_value(w)", "last_value(v)", "nth_value(w, 2)",
                        "percent_rank()", "cume_dist()", "ntile(3)", "lag(v ignore nulls)",
                        "lead(v, 2 ignore nulls)", "last_value(v ignore nulls)"])
        if self.r.random() < 0.3 and fn in ("sum(w)", "count(*)", "max(w)", "first_value(w)",
                                            "last_value(v)", "nth_value(w, 2)",
                                            "last_value(v ignore nulls)"):
            lo, hi = self.r.randint(0, 3), self.r.randint(0, 3)
            if fn in ("sum(w)", "count(*)", "max(w)") and self.r.random() < 0.5:
                # RANGE / GROUPS frames over the one key w (peers: tied w),
                # whose aggregates do not depend on the order among peers.
                units = self.pick(["range", "groups"])
                order = self.pick(["w", "w desc", "w nulls first", "w desc nulls last"])
                return (
                    f"select k, w, v, {fn} over (partition by k order by {order} {units} between "
                    f"{lo} preceding and {hi} following) as x from u where {self.predicate('u')}"
                )
            return (
                f"select k, w, v, {fn} over (partition by k order by w, v rows between {lo} preceding "
                f"and {hi} following) as x from u where {self.predicate('u')}"
            )
        return (
            f"select k, w, v, {fn} over (partition by k order by w, v) as x from u "
            f"where {self.predicate('u')}"
        )

    def scalar(self) -> str:
        """A scalar expression over t: CASE, NULL functions, casts, string
        and date functions, decimal arithmetic."""
        form = self.r.randrange(10)
        n, m = self.number("t"), self.number("t")
        if form == 0:
            return f"case when {self.predicate('t')} then {n} else {m} end"
        if form == 1:
            return f"nullif({self.pick(['a', 'a % 4'])}, {self.r.randint(-2, 2)})"
        if form == 2:
            return f"greatest({n}, {m})" if self.r.random() < 0.5 else f"least({n}, {m})"
        if form == 3:
            return f"cast({self.pick(['c', 'd', 'a'])} as {self.pick(['bigint', 'double', 'varchar', 'decimal(12,3)'])})"
        if form == 4:
            return self.pick(["upper(s)", "lower(s)", "length(s)", "substring(s, 2, 3)", "s || '-' || cast(a as varchar)", "replace(s, 'x', 'y')", "trim(s)", "left(s, 2)"])
        if form == 5:
            return self.pick(["year(dt)", "month(dt)", "dt + 3", "date_part('dow', dt)", "dt - date '1995-01-01'"])
        if form == 6:
            return f"round({self.pick(['c', 'd'])} * {self.pick(['d', '1.25', 'c'])}, {self.r.randint(0, 3)})"
        if form == 7:
            return f"{self.pick(['d', 'd * 2', 'd - 1.5'])} + {self.pick(['d', 'a', '0.125'])}"
        if form == 8:
            return f"coalesce(s, cast(a as varchar), 'none')"
        return f"({self.predicate('t')}) is {self.pick(['', 'not '])}{self.pick(['true', 'false', 'null'])}"

    def projection(self) -> str:
        exprs = ", ".join(self.scalar() for _ in range(self.r.randint(1, 3)))
        if self.r.random() < 0.5:
            return f"select {exprs} from t where {self.predicate('t')}"
        return f"select {exprs}, count(*) from t group by all"

    def top(self) -> str:
        """ORDER BY every output column (NULL order spelt out, so the
        engines' defaults do not matter) with LIMIT/OFFSET: top-k and sort."""
        table = self.pick(["t", "u", "x"])
        cols = {"t": ["a", "b", "c", "d", "s", "dt", "flag"], "u": ["k", "v", "w"], "x": ["i", "f"]}[table]
        chosen = self.r.sample(cols, self.r.randint(1, len(cols)))
        keys = ", ".join(
            f"{i + 1} {self.pick(['asc', 'desc'])} nulls {self.pick(['first', 'last'])}"
            for i in range(len(chosen))
        )
        where = f" where {self.predicate(table)}" if self.r.random() < 0.5 else ""
        offset = f" offset {self.r.randint(1, 30)}" if self.r.random() < 0.3 else ""
        return f"select {', '.join(chosen)} from {table}{where} order by {keys} limit {self.r.randint(1, 60)}{offset}"

    def set_op(self) -> str:
        op = self.pick(["union", "union all", "intersect", "except"])
        return f"select a from t where {self.predicate('t')} {op} select k from u where {self.predicate('u')}"

    def query(self) -> str:
        kinds = [self.tlp, self.tlp, self.norec, self.group_by, self.join, self.subquery, self.window, self.set_op, self.edges,
                 self.projection, self.projection, self.top]
        return self.pick(kinds)()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    gen = Gen(random.Random(args.seed))
    print(f"-- {args.count} random queries, seed {args.seed}")
    for _ in range(args.count):
        print(gen.query())


if __name__ == "__main__":
    main()
