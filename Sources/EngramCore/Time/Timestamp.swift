import Foundation

/// Conversions between `Date` and the millisecond timestamps the store keeps in its
/// columns (records carry `Date`; only the column values are milliseconds).
public enum Timestamp {
  /// Now, in milliseconds since the Unix epoch.
  public static func now() -> Int64 { milliseconds(Date()) }
  /// `date` in milliseconds since the Unix epoch, to the nearest millisecond (so a date
  /// read from the store, `date(ms)`, gives back exactly `ms`).
  public static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }
  /// The date of `milliseconds` since the Unix epoch.
  public static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }
}
