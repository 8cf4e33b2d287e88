#!/usr/bin/env python3
"""The occurrences of recurrence rules by an independent implementation (python-dateutil).

usage: check-rrule.py CASES.jsonl

Each line of CASES.jsonl is one case: {"rule": RRULE value, "start": "YYYYMMDDTHHMMSS" (the
first occurrence's wall-clock time), "zone": IANA name, "lower": epoch seconds, "upper": epoch
seconds}. For each, one line is printed: the JSON list of the epoch seconds of the occurrences
in [lower, upper), in order. The rule is read as RFC 5545 reads it: on the wall clock of the
zone (a time in a daylight-saving gap takes the offset before the gap, a time that happens twice
is the first: zoneinfo's fold=0), and DTSTART is always the first occurrence and counts towards
COUNT even where the rule's days do not include it. An UNTIL date includes its whole day.
"""
import datetime
import json
import sys
from zoneinfo import ZoneInfo

try:
    from dateutil.rrule import rrulestr
except ImportError:
    sys.exit("check-rrule: the Python package python-dateutil is missing: run `make setup` "
             "(it comes with icalendar into .venv-mcp)")


def wall(text):
    return datetime.datetime.strptime(text, "%Y%m%dT%H%M%S")


def occurrences(case):
    zone = ZoneInfo(case["zone"])
    start = wall(case["start"]).replace(tzinfo=zone)
    lower, upper = case["lower"], case["upper"]
    parts = []
    until = None
    count = None
    for part in case["rule"].split(";"):
        name, value = part.split("=", 1)
        if name == "UNTIL":
            if len(value) == 8:
                day = datetime.datetime.strptime(value, "%Y%m%d")
                until = day.replace(hour=23, minute=59, second=59, tzinfo=zone)
            else:
                until = datetime.datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
            continue
        if name == "COUNT":
            count = int(value)
            continue
        parts.append(part)
    rule = rrulestr(";".join(parts), dtstart=start)
    first = next(iter(rule), None)
    matches = first == start and first.replace(tzinfo=None) == start.replace(tzinfo=None)
    if count is not None:
        rule = rule.replace(count=count if matches else count - 1)
    if until is not None:
        rule = rule.replace(until=until)
    found = [] if matches else [start]
    if count == 0 or (count is not None and not matches and count - 1 == 0):
        rule = None
    if rule is not None:
        for instance in rule:
            stamp = instance.timestamp()
            if stamp >= upper:
                break
            found.append(instance)
    result = []
    for instance in found:
        stamp = int(instance.timestamp())
        if lower <= stamp < upper:
            result.append(stamp)
    return result


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-rrule.py CASES.jsonl")
    with open(sys.argv[1], encoding="utf-8") as cases:
        for line in cases:
            if line.strip():
                print(json.dumps(occurrences(json.loads(line))))


if __name__ == "__main__":
    main()
