/// How `ingest` reads a file: its format (detected from the content when nil) and, for
/// WhatsApp exports, the order of day and month.
public struct IngestOptions: Sendable, Equatable {
  /// The format to read the file as; nil detects it from the content (the default).
  public var format: ConversationFile.Format?
  /// The order of day and month in WhatsApp dates; nil infers it from the file (a first
  /// field above 12 means day first, a second one month first) and takes day first when
  /// the file does not say (the default).
  public var dateOrder: DateOrder?

  /// Options that detect the format and infer the date order.
  public init(format: ConversationFile.Format? = nil, dateOrder: DateOrder? = nil) {
    self.format = format
    self.dateOrder = dateOrder
  }
}

/// The order of day and month in a date written with numbers only (`03/04/24`).
public enum DateOrder: String, Sendable, CaseIterable {
  /// Day, month, year: `31/12/23`.
  case dmy
  /// Month, day, year: `12/31/23`.
  case mdy
}
