import EngramCore
import Foundation

extension MemoryEngine {
  /// A memory written to and read from files (`engine.transfer`): the whole memory as JSONL
  /// (export, and import into an empty memory), and its reminders and events as iCalendar.
  /// Conversation exports of other apps are read by `conversation.ingest`; exports of a
  /// memory no engine has open are the static `MemoryEngine.export(databaseAt:…)` and
  /// `MemoryEngine.calendar(databaseAt:…)`.
  ///
  /// Every method is async and runs its file and SQLite work off the cooperative thread pool
  /// (the reading, writing and parsing stay with `Exporter`, `Importer` and `CalendarExchange`).
  public struct Transfer: Sendable {
    let exporter: Exporter
    let importer: Importer
    let calendar: CalendarExchange

    /// Writes the whole memory as JSONL: a header line, one line per row of every table
    /// (vectors as base64 of their stored bytes), and an `end` line with the number of lines
    /// before it and their checksum. Returns the number of lines, header and end included.
    ///
    /// A file is written to a temporary file created exclusively with mode 0600 beside it,
    /// then renamed into place; `-` writes to standard output.
    /// - Complexity: O(rows) time; memory bounded by one chunk of lines (about 1 MiB) and
    ///   the longest row, whatever the memory's size.
    @discardableResult
    public func export(to path: String) async throws -> Int {
      try await BlockingWork.run { [exporter] in try exporter.export(to: path) }
    }

    /// Streams the export to `sink` in chunks of whole lines (each chunk is valid UTF-8 on
    /// its own). Returns the number of lines. `sink` is called on a thread of `BlockingWork`'s,
    /// one chunk after another.
    @discardableResult
    public func export(into sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws
      -> Int
    {
      try await BlockingWork.run { [exporter] in try exporter.export(into: sink) }
    }

    /// Imports an export into this memory, which must be empty; all or nothing.
    ///
    /// The file is read line by line in one transaction, so memory stays bounded by the
    /// longest line whatever the export's size. Ids, times, vectors and every other column
    /// are kept exactly, so exporting the result gives the same lines. Every line must be
    /// valid UTF-8; every vector must have the embedder's dimension and finite components
    /// whose squares sum to a finite, non-zero length; a version 2 export must end with its
    /// `end` line, whose line count and checksum must match (a truncated or altered file is
    /// refused). The vector index is rebuilt from the imported rows on the next search (or
    /// the next open). Returns the number of rows imported.
    ///
    /// - Throws: `EngramError.importTargetNotEmpty`, `EngramError.malformedExport` (with the
    ///   line), `EngramError.invalidExportVector` (with the line), `ImportError.invalidUTF8`
    ///   (with the line), `ImportError.unreadable`, `EngramError.modelMismatch` when the
    ///   export's vectors come from another model.
    @discardableResult
    public func importExport(from path: String) async throws -> Int {
      try await BlockingWork.run { [importer] in try importer.importExport(from: path) }
    }

    /// The memory's reminders and events as one iCalendar (RFC 5545) calendar: events as
    /// VEVENT (DTEND one hour after DTSTART unless an end is stored), reminders as VTODO with
    /// DUE, STATUS and a display alarm at the due time; UTC times, CRLF line ends, lines
    /// folded at 75 octets. UIDs are stable (`engram-<kind>-<id>@<database id>`, or the UID an
    /// item was imported with), so a calendar app updates rather than duplicates on a second
    /// export. `stamp` is the DTSTAMP.
    public func calendarText(stamp: Date = Date()) async throws -> String {
      try await BlockingWork.run { [calendar] in try calendar.calendarText(stamp: stamp).text }
    }

    /// Stores the events (VEVENT) and reminders (VTODO) of an iCalendar file, all or nothing.
    ///
    /// An item whose UID is stored already (imported before, or exported from this memory) is
    /// not added again: it is updated when the file changes it, else left as it is. Times in
    /// UTC or with a `TZID` (an IANA identifier, directly or through the file's VTIMEZONE) are
    /// exact; floating times are read in `timeZone`, and a date alone (an all-day item) is
    /// that day at 09:00 in `timeZone`. A VTODO is due at its DUE, else its DTSTART; COMPLETED
    /// marks it done. An RRULE is kept as text (not expanded). Cancelled components and
    /// overrides of one occurrence (RECURRENCE-ID) are skipped.
    ///
    /// - Throws: `ICalendarError` (with the line) for a file that is not iCalendar, a line
    ///   that cannot be read, a component left open, a bad date or an unknown time zone; store
    ///   errors. Nothing is stored then.
    @discardableResult
    public func importCalendar(_ data: Data, timeZone: TimeZone = .current, at now: Date = Date())
      async throws -> CalendarImportSummary
    {
      try await BlockingWork.run { [calendar] in
        try calendar.importCalendar(data, timeZone: timeZone, at: now)
      }
    }
  }
}
