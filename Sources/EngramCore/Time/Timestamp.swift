import Foundation

/// Conversions between `Date` and the store's millisecond timestamps.
public enum Timestamp {
  /// Now, in milliseconds since the Unix epoch.
  public static func now() -> Int64 { milliseconds(Date()) }
  /// `date` in milliseconds since the Unix epoch (rounded down).
  public static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
  }
  /// The date of `milliseconds` since the Unix epoch.
  public static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }
}
