"""Shrinks a SQL query to a smaller one that still shows the same failure.

    from shrink import shrink
    smallest = shrink(sql, still_fails)   # still_fails(sql) -> bool

A greedy reducer over tokens, in the spirit of C-Reduce and delta
debugging: it tries removals that keep SQL's shape first (a clause such as
WHERE .. or ORDER BY .., one item of a comma list, one operand of an
AND/OR chain, the parentheses around a group, a group replaced by one of
its operands), then runs of tokens, halving their length down to single
tokens, and keeps any candidate for which `still_fails` holds, until no
removal does. Candidates that no longer parse are simply rejected by
`still_fails` (the engines refuse them), so the reducer needs no grammar.

`sql_diff.py --shrink` uses it on every query whose answers differ.
"""
import re
from typing import Callable, Iterator, List

TOKEN = re.compile(
    r"""\s*(
        '(?:[^']|'')*'            # a string
      | "(?:[^"]|"")*"            # a quoted name
      | \d+(?:\.\d*)?(?:e[+-]?\d+)?
      | [A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_*][A-Za-z_0-9]*)?
      | <>|!=|<=|>=|\|\||::|[-+*/%(),<>=.;]
      | \S                         # anything else, one character
    )""",
    re.X | re.I,
)

# Keywords that start a clause at their nesting depth; a clause runs to
# the next one of them at the same depth (or the end of its group).
CLAUSES = {
    "where", "group", "having", "qualify", "window", "order", "limit",
    "offset", "union", "intersect", "except", "on", "using",
}


def tokens(sql: str) -> List[str]:
    """The query as tokens (whitespace dropped, strings kept whole)."""
    return [m.group(1) for m in TOKEN.finditer(sql) if m.group(1).strip()]


def render(toks: List[str]) -> str:
    """Tokens back to SQL text: spaces between words, none inside calls."""
    out = ""
    for t in toks:
        tight = out.endswith("(") or t in (")", ",", ".", "::") or out.endswith(("::", "."))
        out += t if (not out or tight) else " " + t
    return out


def depths(toks: List[str]) -> List[int]:
    """Each token's parenthesis depth (a parenthesis counts as outside)."""
    d, out = 0, []
    for t in toks:
        if t == ")":
            d -= 1
        out.append(d)
        if t == "(":
            d += 1
    return out


def _groups(toks: List[str]) -> Iterator[tuple]:
    """(open, close) index pairs of every parenthesized group."""
    stack = []
    for i, t in enumerate(toks):
        if t == "(":
            stack.append(i)
        elif t == ")" and stack:
            yield stack.pop(), i


def _spans(toks: List[str], lo: int, hi: int, separators) -> List[tuple]:
    """Splits toks[lo:hi] at the top-level tokens in `separators`: the
    (start, end) of each part, separators excluded."""
    d = depths(toks)
    base = d[lo] if lo < hi else 0
    parts, start = [], lo
    for i in range(lo, hi):
        if d[i] == base and toks[i].lower() in separators:
            parts.append((start, i))
            start = i + 1
    parts.append((start, hi))
    return parts


# Keywords that end a list or a chain of conditions at their depth.
BOUNDARIES = CLAUSES | {
    "select", "from", "join", "by", "when", "then", "else", "end", "between", "filter", "over",
}


def _ranges(toks: List[str]) -> List[tuple]:
    """The regions whose parts can be removed: the stretches between
    boundary keywords, in the whole query and inside every parenthesized
    group."""
    d = depths(toks)
    out = []
    for lo, hi in [(0, len(toks))] + [(a + 1, b) for a, b in _groups(toks)]:
        start = lo
        for i in range(lo, hi):
            if d[i] == d[lo] and toks[i].lower() in BOUNDARIES:
                out.append((start, i))
                start = i + 1
        out.append((start, hi))
    return [(a, b) for a, b in out if a < b]


def structural(toks: List[str]) -> Iterator[List[str]]:
    """Smaller queries that keep SQL's shape, largest removals first."""
    d = depths(toks)
    # A clause: from its keyword to the next clause keyword at its depth.
    for i, t in enumerate(toks):
        if t.lower() in CLAUSES:
            j = i + 1
            while j < len(toks) and d[j] >= d[i] and not (d[j] == d[i] and toks[j].lower() in CLAUSES):
                j += 1
            yield toks[:i] + toks[j:]
    for lo, hi in _ranges(toks):
        # One item of a comma list, with its comma.
        items = _spans(toks, lo, hi, {","})
        if len(items) > 1:
            for k, (a, b) in enumerate(items):
                cut = (a - 1, b) if k else (a, b + 1)
                yield toks[: cut[0]] + toks[cut[1]:]
        # One operand of an AND / OR chain, with its connective; or the
        # chain replaced by one operand.
        operands = _spans(toks, lo, hi, {"and", "or"})
        if len(operands) > 1:
            for k, (a, b) in enumerate(operands):
                cut = (a - 1, b) if k else (a, b + 1)
                yield toks[: cut[0]] + toks[cut[1]:]
    for a, b in _groups(toks):
        # The parentheses around a group (a call keeps them: a name before).
        if a == 0 or not re.match(r"\w", toks[a - 1]) or toks[a - 1].lower() in (
            "and", "or", "not", "where", "on", "select", "from", "in", "exists", "when", "then", "else"
        ):
            yield toks[:a] + toks[a + 1: b] + toks[b + 1:]


def runs(toks: List[str]) -> Iterator[List[str]]:
    """Runs of tokens removed, from half the query down to one token."""
    n = len(toks)
    size = max(n // 2, 1)
    while True:
        for start in range(0, n - size + 1, max(size // 2, 1)):
            yield toks[:start] + toks[start + size:]
        if size == 1:
            return
        size //= 2


def shrink(sql: str, still_fails: Callable[[str], bool], max_tries: int = 5000) -> str:
    """The smallest query reached from `sql` by removals for which
    `still_fails` holds (`sql` itself if none does). `still_fails` is
    called at most `max_tries` times."""
    best = tokens(sql)
    tried = set()
    budget = max_tries
    improved = True
    while improved and budget > 0:
        improved = False
        for candidate in list(structural(best)) + list(runs(best)):
            text = render(candidate)
            if not candidate or len(candidate) >= len(best) or text in tried:
                continue
            tried.add(text)
            budget -= 1
            if still_fails(text):
                best = candidate
                improved = True
                break
            if budget <= 0:
                break
    return render(best)
