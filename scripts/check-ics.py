#!/usr/bin/env python3
"""Checks an `engram export --format ics` file with an independent parser (`icalendar`).

usage: check-ics.py FILE.ics [EXPECTED.json]
       check-ics.py FILE.ics --same-as ORIGINAL.ics

Asserts, beyond what the parser itself accepts: CRLF line ends and lines of at most 75
octets; one VCALENDAR (VERSION 2.0, a PRODID); unique UIDs; every VEVENT with a DTSTART (a
UTC time, a date, a floating time or a time with a TZID that icalendar resolves), a DTEND of
the same kind not before it (when given), a SUMMARY and a DTSTAMP; every VTODO with a STATUS
of NEEDS-ACTION or COMPLETED and, when it has a DUE, one VALARM (ACTION DISPLAY, an absolute
UTC TRIGGER at the DUE). Then it round-trips the calendar (`to_ical`, parsed again: the same
components, UIDs, times and texts). EXPECTED.json, when given, is a list of objects `{"type":
"VEVENT"|"VTODO", "summary", "start" (ISO 8601, UTC; DTSTART or DUE; null for none),
"description"?, "status"?}`, compared with the components in order. With --same-as, every
VEVENT and VTODO of ORIGINAL.ics is in FILE.ics with the same UID, field by field: SUMMARY,
DESCRIPTION, RRULE, and DTSTART, DTEND (or DTSTART + DURATION) and DUE of the same kind (date,
floating, UTC, or the same TZID) with the same value. Prints one line and exits 0 when all
holds, else names what did not and exits 1.
"""
import datetime
import json
import sys
import zoneinfo

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


def form(component, name):
    """(kind, zone, value) of a DATE or DATE-TIME property: kind is date, floating, utc or
    zoned (zone: its TZID); value the date, or the wall-clock date-time."""
    prop = component.get(name)
    if prop is None:
        return None
    value = prop.dt
    if not isinstance(value, datetime.datetime):
        return ("date", None, value)
    if value.tzinfo is None:
        return ("floating", None, value)
    tzid = prop.params.get("TZID")
    if tzid is None:
        if value.utcoffset() != datetime.timedelta(0):
            fail(f"{component.name} {component.get('UID')}: {name} has an offset but no TZID: {value!r}")
        return ("utc", None, value.replace(tzinfo=None))
    if value.utcoffset() is None:
        fail(f"{component.name} {component.get('UID')}: {name} TZID={tzid} is not a zone icalendar knows")
    # A TZID that is an IANA name is compared by name; another (a VTIMEZONE's own name) by the
    # offset it gives this time.
    try:
        zoneinfo.ZoneInfo(str(tzid))
        zone = str(tzid)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = value.utcoffset()
    return ("zoned", zone, value.replace(tzinfo=None))


def end_of(event):
    """DTEND, or DTSTART + DURATION, as `form` gives it; None when neither is given."""
    if event.get("DTEND") is not None:
        return form(event, "DTEND")
    if event.get("DURATION") is not None:
        kind, zone, value = form(event, "DTSTART")
        return (kind, zone, value + event.get("DURATION").dt)
    return None


def same_as(calendar, original):
    """Every VEVENT and VTODO of `original` is in `calendar`, field by field."""
    exported = {str(c.get("UID")): c for c in calendar.walk() if c.name in ("VEVENT", "VTODO")}
    compared = 0
    for component in original.walk():
        if component.name not in ("VEVENT", "VTODO"):
            continue
        uid = str(component.get("UID"))
        other = exported.get(uid)
        if other is None or other.name != component.name:
            fail(f"{component.name} {uid} is not in the export")
        for name in ("SUMMARY", "DESCRIPTION"):
            if str(component.get(name, "")) != str(other.get(name, "")):
                fail(f"{uid}: {name} {other.get(name)!r} is not the original {component.get(name)!r}")
        rules = [str(c.get("RRULE").to_ical().decode()) if c.get("RRULE") else None for c in (component, other)]
        if rules[0] != rules[1]:
            fail(f"{uid}: RRULE {rules[1]} is not the original {rules[0]}")
        pairs = [("DTSTART", form(component, "DTSTART"), form(other, "DTSTART"))]
        if component.name == "VEVENT":
            pairs.append(("DTEND", end_of(component), end_of(other)))
        else:
            pairs.append(("DUE", form(component, "DUE"), form(other, "DUE")))
        for name, want, got in pairs:
            if component.name == "VTODO" and name == "DTSTART":
                continue
            if want != got:
                fail(f"{uid}: {name} {got} is not the original {want}")
        compared += 1
    return compared


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
    same_as_file = None
    if len(sys.argv) == 4 and sys.argv[2] == "--same-as":
        same_as_file = sys.argv[3]
        del sys.argv[2:]
    if len(sys.argv) not in (2, 3):
        fail("usage: check-ics.py FILE.ics [EXPECTED.json | --same-as ORIGINAL.ics]")
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
        start, end = form(event, "DTSTART"), form(event, "DTEND")
        if start is None:
            fail(f"VEVENT {event.get('UID')}: no DTSTART")
        if end is not None:
            if (end[0] == "date") != (start[0] == "date"):
                fail(f"VEVENT {event.get('UID')}: DTSTART {start} and DTEND {end} are not both dates")
            instants = [event.get(name).dt for name in ("DTSTART", "DTEND")]
            if start[0] == "date" and instants[1] <= instants[0]:
                fail(f"VEVENT {event.get('UID')}: DTEND {end} is not after DTSTART {start}")
            if start[0] != "date" and (instants[0].tzinfo is None) == (instants[1].tzinfo is None) \
                    and instants[1] < instants[0]:
                fail(f"VEVENT {event.get('UID')}: DTEND {end} is before DTSTART {start}")
        if not event.get("SUMMARY") or utc(event, "DTSTAMP") is None:
            fail(f"VEVENT {event.get('UID')}: no SUMMARY or DTSTAMP")
    for todo in todos:
        if str(todo.get("STATUS")) not in ("NEEDS-ACTION", "COMPLETED"):
            fail(f"VTODO {todo.get('UID')}: STATUS {todo.get('STATUS')}")
        if utc(todo, "DTSTAMP") is None or not todo.get("SUMMARY"):
            fail(f"VTODO {todo.get('UID')}: no SUMMARY or DTSTAMP")
        due = form(todo, "DUE")
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
        if trigger is None or trigger.params.get("VALUE") != "DATE-TIME":
            fail(f"VTODO {todo.get('UID')}: the alarm has no absolute TRIGGER")
        utc(alarm, "TRIGGER")
        due_value = todo.get("DUE").dt
        if isinstance(due_value, datetime.datetime) and due_value.tzinfo is not None and trigger.dt != due_value:
            fail(f"VTODO {todo.get('UID')}: the alarm's TRIGGER {trigger.dt} is not the DUE {due_value}")

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
    compared = None
    if same_as_file is not None:
        compared = same_as(calendar, icalendar.Calendar.from_ical(open(same_as_file, "rb").read()))

    again = icalendar.Calendar.from_ical(calendar.to_ical())
    if describe(again) != describe(calendar):
        fail("the calendar changed across a round trip through icalendar")
    same = f"; {compared} the same as the original" if compared is not None else ""
    print(f"check-ics: ok ({len(events)} events, {len(todos)} reminders{same}; icalendar {icalendar.__version__})")


if __name__ == "__main__":
    main()
