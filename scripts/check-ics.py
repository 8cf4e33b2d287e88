#!/usr/bin/env python3
"""Checks an `engram export --format ics` file with an independent parser (`icalendar`).

usage: check-ics.py FILE.ics [EXPECTED.json]

Asserts, beyond what the parser itself accepts: CRLF line ends and lines of at most 75
octets; one VCALENDAR (VERSION 2.0, a PRODID); unique UIDs; every VEVENT with a UTC DTSTART,
a later UTC DTEND, a SUMMARY and a DTSTAMP; every VTODO with a STATUS of NEEDS-ACTION or
COMPLETED and, when it has a UTC DUE, one VALARM (ACTION DISPLAY, an absolute TRIGGER at the
DUE). Then it round-trips the calendar (`to_ical`, parsed again: the same components, UIDs,
times and texts). EXPECTED.json, when given, is a list of objects `{"type": "VEVENT"|"VTODO",
"summary", "start" (ISO 8601, UTC; DTSTART or DUE; null for none), "description"?,
"status"?}`, compared with the components in order. Prints one line and exits 0 when all
holds, else names what did not and exits 1.
"""
import datetime
import json
import sys

try:
    import icalendar
except ImportError:
    sys.exit("check-ics: the Python package icalendar is missing: run `make setup` "
             "(it installs icalendar into .venv-mcp)")


def fail(message):
    sys.exit(f"check-ics: {message}")


def utc(component, name):
    prop = component.get(name)
    if prop is None:
        return None
    value = prop.dt
    if not isinstance(value, datetime.datetime):
        fail(f"{component.name} {component.get('UID')}: {name} is not a date-time: {value!r}")
    if value.tzinfo is None or value.utcoffset() != datetime.timedelta(0):
        fail(f"{component.name} {component.get('UID')}: {name} is not in UTC: {value!r}")
    return value


def describe(calendar):
    """The facts compared across the round trip, one tuple per component, in order."""
    facts = []
    for component in calendar.walk():
        if component.name in ("VEVENT", "VTODO", "VALARM"):
            facts.append((
                component.name, str(component.get("UID", "")), str(component.get("SUMMARY", "")),
                str(component.get("DESCRIPTION", "")), str(component.get("STATUS", "")),
                *(component.get(name).dt if component.get(name) is not None else None
                  for name in ("DTSTART", "DTEND", "DUE", "TRIGGER")),
            ))
    return facts


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: check-ics.py FILE.ics [EXPECTED.json]")
    raw = open(sys.argv[1], "rb").read()
    if not raw.endswith(b"\r\n"):
        fail("the file does not end with CRLF")
    for number, line in enumerate(raw[:-2].split(b"\r\n"), 1):
        if b"\n" in line or b"\r" in line:
            fail(f"line {number}: a bare CR or LF (lines must end with CRLF)")
        if len(line) > 75:
            fail(f"line {number}: {len(line)} octets (folding allows 75)")
        line.decode("utf-8")

    calendar = icalendar.Calendar.from_ical(raw)
    if calendar.name != "VCALENDAR" or str(calendar.get("VERSION")) != "2.0" or not calendar.get("PRODID"):
        fail("not a VCALENDAR with VERSION:2.0 and a PRODID")
    events = [c for c in calendar.walk() if c.name == "VEVENT"]
    todos = [c for c in calendar.walk() if c.name == "VTODO"]
    uids = [str(c.get("UID")) for c in events + todos]
    if any(not uid for uid in uids) or len(set(uids)) != len(uids):
        fail(f"UIDs missing or repeated: {uids}")
    for event in events:
        start, end = utc(event, "DTSTART"), utc(event, "DTEND")
        if start is None or end is None or end <= start:
            fail(f"VEVENT {event.get('UID')}: DTSTART {start} / DTEND {end}")
        if not event.get("SUMMARY") or utc(event, "DTSTAMP") is None:
            fail(f"VEVENT {event.get('UID')}: no SUMMARY or DTSTAMP")
    for todo in todos:
        if str(todo.get("STATUS")) not in ("NEEDS-ACTION", "COMPLETED"):
            fail(f"VTODO {todo.get('UID')}: STATUS {todo.get('STATUS')}")
        if utc(todo, "DTSTAMP") is None or not todo.get("SUMMARY"):
            fail(f"VTODO {todo.get('UID')}: no SUMMARY or DTSTAMP")
        due = utc(todo, "DUE")
        alarms = [c for c in todo.subcomponents if c.name == "VALARM"]
        if due is None:
            if alarms:
                fail(f"VTODO {todo.get('UID')}: an alarm without a DUE")
            continue
        if len(alarms) != 1:
            fail(f"VTODO {todo.get('UID')}: {len(alarms)} alarms (expected one)")
        alarm = alarms[0]
        trigger = alarm.get("TRIGGER")
        if str(alarm.get("ACTION")) != "DISPLAY" or not alarm.get("DESCRIPTION"):
            fail(f"VTODO {todo.get('UID')}: the alarm is not a DISPLAY alarm with a DESCRIPTION")
        if trigger is None or trigger.params.get("VALUE") != "DATE-TIME" or trigger.dt != due:
            fail(f"VTODO {todo.get('UID')}: the alarm's TRIGGER {trigger and trigger.dt} is not the DUE {due}")

    if len(sys.argv) == 3:
        expected = json.load(open(sys.argv[2], encoding="utf-8"))
        components = [c for c in calendar.walk() if c.name in ("VEVENT", "VTODO")]
        if len(components) != len(expected):
            fail(f"{len(components)} components, expected {len(expected)}")
        for component, want in zip(components, expected):
            start = utc(component, "DTSTART" if component.name == "VEVENT" else "DUE")
            got = {
                "type": component.name, "summary": str(component.get("SUMMARY")),
                "start": start.strftime("%Y-%m-%dT%H:%M:%SZ") if start else None,
            }
            if "description" in want:
                got["description"] = str(component.get("DESCRIPTION")) if component.get("DESCRIPTION") else None
            if "status" in want:
                got["status"] = str(component.get("STATUS"))
            if got != want:
                fail(f"component {got} is not the expected {want}")

    again = icalendar.Calendar.from_ical(calendar.to_ical())
    if describe(again) != describe(calendar):
        fail("the calendar changed across a round trip through icalendar")
    print(f"check-ics: ok ({len(events)} events, {len(todos)} reminders; icalendar {icalendar.__version__})")


if __name__ == "__main__":
    main()
