import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Reading VEVENTs and VTODOs: UTC, TZID (IANA, path-prefixed, through VTIMEZONE), floating
/// and all-day times; durations; status; what is skipped; bad dates and zones with their line.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ICalendarReaderTests {
  let shanghai = TimeZone(identifier: "Asia/Shanghai")!

  func entries(_ body: String, timeZone: TimeZone? = nil) throws -> (entries: [CalendarEntry], skipped: Int) {
    let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + body + "END:VCALENDAR\r\n"
    return try ICalendarReader(timeZone: timeZone ?? shanghai).entries(
      of: ICalendarSyntax.parse(Data(text.utf8)))
  }

  func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

  @Test func timesInUTCWithATZIDFloatingAndAllDay() throws {
    let read = try entries(
      """
      BEGIN:VEVENT\r
      UID:utc\r
      DTSTART:20250612T070000Z\r
      DTEND:20250612T083000Z\r
      SUMMARY:utc\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      UID:zoned\r
      DTSTART;TZID=America/New_York:20250612T150000\r
      DURATION:PT45M\r
      SUMMARY:zoned\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      UID:floating\r
      DTSTART:20250612T150000\r
      SUMMARY:floating\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      UID:allday\r
      DTSTART;VALUE=DATE:20250613\r
      DTEND;VALUE=DATE:20250614\r
      SUMMARY:all day\r
      END:VEVENT\r

      """)
    let byUID = Dictionary(uniqueKeysWithValues: read.entries.map { ($0.uid, $0) })
    #expect(byUID["utc"]?.start == instant("2025-06-12T07:00:00Z"))
    #expect(byUID["utc"]?.end == instant("2025-06-12T08:30:00Z"))
    #expect(byUID["zoned"]?.start == instant("2025-06-12T19:00:00Z"))
    #expect(byUID["zoned"]?.end == instant("2025-06-12T19:45:00Z"))
    #expect(byUID["floating"]?.start == instant("2025-06-12T15:00:00+08:00"))
    #expect(byUID["allday"]?.start == instant("2025-06-13T09:00:00+08:00"))
    #expect(byUID["allday"]?.allDay == true)
    // An all-day DTEND is the day after the last: kept, at the same hour.
    #expect(byUID["allday"]?.end == instant("2025-06-14T09:00:00+08:00"))
    #expect(
      byUID.mapValues(\.timeForm) == ["utc": .utc, "zoned": .zoned, "floating": .floating, "allday": .date])
    #expect(byUID["zoned"]?.timeZone == "America/New_York")
    #expect(byUID["floating"]?.timeZone == "Asia/Shanghai")
  }

  @Test func tzidsResolveThroughVTimeZoneNamesPathsAndFixedOffsets() throws {
    let read = try entries(
      """
      BEGIN:VTIMEZONE\r
      TZID:Custom Lisbon\r
      X-LIC-LOCATION:Europe/Lisbon\r
      END:VTIMEZONE\r
      BEGIN:VTIMEZONE\r
      TZID:Fixed Plus Five Thirty\r
      BEGIN:STANDARD\r
      DTSTART:19700101T000000\r
      TZOFFSETFROM:+0530\r
      TZOFFSETTO:+0530\r
      END:STANDARD\r
      END:VTIMEZONE\r
      BEGIN:VTODO\r
      UID:a\r
      DUE;TZID=Custom Lisbon:20250115T100000\r
      SUMMARY:lisbon\r
      END:VTODO\r
      BEGIN:VTODO\r
      UID:b\r
      DUE;TZID=/mozilla.org/20050126_1/Europe/Berlin:20250115T100000\r
      SUMMARY:berlin\r
      END:VTODO\r
      BEGIN:VTODO\r
      UID:c\r
      DTSTART;TZID=Fixed Plus Five Thirty:20250115T100000\r
      SUMMARY:kolkata\r
      STATUS:COMPLETED\r
      END:VTODO\r
      BEGIN:VTODO\r
      UID:d\r
      SUMMARY:undated\r
      END:VTODO\r

      """)
    #expect(
      read.entries.map(\.start) == [
        instant("2025-01-15T10:00:00Z"), instant("2025-01-15T09:00:00Z"), instant("2025-01-15T04:30:00Z"),
        nil,
      ])
    #expect(read.entries.map(\.done) == [false, false, true, false])
    #expect(read.entries.allSatisfy { $0.kind == .reminder })
  }

  @Test func cancelledItemsAndOverriddenOccurrencesAreSkippedAndRRuleKept() throws {
    let read = try entries(
      """
      BEGIN:VEVENT\r
      UID:weekly\r
      DTSTART:20250602T010000Z\r
      RRULE:FREQ=WEEKLY;BYDAY=MO\r
      SUMMARY:weekly\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      UID:weekly\r
      RECURRENCE-ID:20250609T010000Z\r
      DTSTART:20250609T020000Z\r
      SUMMARY:weekly (moved)\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      UID:gone\r
      DTSTART:20250602T010000Z\r
      STATUS:CANCELLED\r
      SUMMARY:gone\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      DTSTART:20250602T010000Z\r
      END:VEVENT\r

      """)
    #expect(read.skipped == 2)
    #expect(read.entries.count == 2)
    #expect(read.entries.first?.recurrence == "FREQ=WEEKLY;BYDAY=MO")
    // No UID and no SUMMARY: a UID derived from the content, a placeholder title.
    #expect(read.entries.last?.uid.hasPrefix("engram-import-") == true)
    #expect(read.entries.last?.title == "(untitled)")
  }

  @Test(arguments: [
    (
      "DTSTART:20250230T100000Z",
      ICalendarError.Problem.invalidDate(property: "DTSTART", value: "20250230T100000Z")
    ),
    ("DTSTART:2025-06-12", .invalidDate(property: "DTSTART", value: "2025-06-12")),
    ("DTSTART:20250612T250000Z", .invalidDate(property: "DTSTART", value: "20250612T250000Z")),
    ("DTSTART;TZID=Mars/Olympus:20250612T100000", .unknownTimeZone("Mars/Olympus")),
  ])
  func badDatesAndZonesNameTheirLine(_ start: String, _ problem: ICalendarError.Problem) {
    #expect(throws: ICalendarError(line: 5, problem)) {
      try entries("BEGIN:VEVENT\r\nUID:x\r\n" + start + "\r\nEND:VEVENT\r\n")
    }
  }

  @Test func anEventWithoutAStartOrWithABadDurationIsRefused() {
    #expect(throws: ICalendarError(line: 3, .missingProperty(property: "DTSTART", component: "VEVENT"))) {
      try entries("BEGIN:VEVENT\r\nUID:x\r\nEND:VEVENT\r\n")
    }
    #expect(throws: ICalendarError(line: 5, .invalidDuration(value: "PT1X"))) {
      try entries("BEGIN:VEVENT\r\nDTSTART:20250612T100000Z\r\nDURATION:PT1X\r\nEND:VEVENT\r\n")
    }
  }
}
