"""The independent reference for the calculator's differential test.

Reads one JSON query per line on stdin and writes one JSON answer per line
on stdout, computed with Python's standard library alone: `datetime` and
`calendar` for dates, `fractions` for percentages. The test
(`calculator_reference.rs`) turns each query into the words a person
types, asks Hearth's calculator, and compares the two answers.

Queries:
  {"kind": "diff", "from": "YYYY-MM-DD", "to": "YYYY-MM-DD", "unit": U}
      the time from one date to the other in unit U (days, weeks, months,
      years, hours): whole units and the days left over, with its sign.
  {"kind": "shift", "date": "YYYY-MM-DD", "steps": [[sign, n, unit], ...]}
      the date moved by each step in turn (months keep the day, or take
      the month's last day when it is shorter): ISO date and weekday name.
  {"kind": "percent", "form": F, "a": "x", "b": "y"}
      of:   a% of b          plus: b + a%        minus: b - a%
      off:  a% off b         share: a as a percentage of b (in percent)
"""

import calendar
import datetime
import json
import sys
from fractions import Fraction


def parse(iso):
    return datetime.date.fromisoformat(iso)


def add_months(d, months):
    total = d.year * 12 + (d.month - 1) + months
    year, month = divmod(total, 12)
    month += 1
    last = calendar.monthrange(year, month)[1]
    return datetime.date(year, month, min(d.day, last))


def whole_months(a, b):
    """The most calendar months from a that do not pass b (a <= b)."""
    m = 0
    while add_months(a, m + 1) <= b:
        m += 1
    return m


def diff(q):
    a, b = parse(q["from"]), parse(q["to"])
    unit = q["unit"]
    sign = -1 if b < a else 1
    lo, hi = (b, a) if sign < 0 else (a, b)
    days = (hi - lo).days
    if unit == "days":
        return {"sign": sign, "days": days}
    if unit == "hours":
        return {"sign": sign, "hours": days * 24}
    if unit == "weeks":
        return {"sign": sign, "weeks": days // 7, "days": days % 7}
    months = whole_months(lo, hi)
    left = (hi - add_months(lo, months)).days
    if unit == "months":
        return {"sign": sign, "months": months, "days": left}
    return {"sign": sign, "years": months // 12, "months": months % 12, "days": left}


def shift(q):
    d = parse(q["date"])
    for sign, n, unit in q["steps"]:
        n = sign * n
        if unit == "days":
            d = d + datetime.timedelta(days=n)
        elif unit == "weeks":
            d = d + datetime.timedelta(weeks=n)
        elif unit == "months":
            d = add_months(d, n)
        else:
            d = add_months(d, 12 * n)
    return {"date": d.isoformat(), "weekday": calendar.day_name[d.weekday()]}


def percent(q):
    a, b = Fraction(q["a"]), Fraction(q["b"])
    form = q["form"]
    value = {
        "of": a / 100 * b,
        "plus": b * (1 + a / 100),
        "minus": b * (1 - a / 100),
        "off": b * (1 - a / 100),
        "share": a / b * 100,
    }[form]
    return {"value": str(float(value))}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        q = json.loads(line)
        answer = {"diff": diff, "shift": shift, "percent": percent}[q["kind"]](q)
        print(json.dumps(answer), flush=False)


if __name__ == "__main__":
    main()
