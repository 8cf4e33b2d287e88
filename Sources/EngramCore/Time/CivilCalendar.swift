/// The proleptic Gregorian calendar by arithmetic on day numbers (days since 1970-01-01), by
/// H. Hinnant's "chrono-compatible low-level date algorithms": the one copy every part that
/// reads or writes a date without `Calendar` uses (the date parser's instants at a fixed
/// offset, a date's civil text, the keyword index's day words, a recurrence's wall-clock days).
/// Valid for every year an `Int64` day number reaches; callers bound the years they accept.
package enum CivilCalendar {
  /// The day number of a date (`days_from_civil`): `month` 1-12, `day` counted from the
  /// month's first (a day past the month's end counts on into the next).
  package static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = floorDivision(shiftedYear, 400)
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The (year, month 1-12, day 1-31) of a day number (`civil_from_days`).
  package static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Whether `year` has a February 29.
  package static func isLeapYear(_ year: Int64) -> Bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
  }

  /// The number of days of `month` (1-12) in `year`.
  package static func daysIn(year: Int64, month: Int64) -> Int64 {
    switch month {
    case 2: isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// `value / divisor` rounded towards minus infinity (`divisor` > 0): the day of a second,
  /// the year of a month index, also before 1970.
  package static func floorDivision(_ value: Int64, _ divisor: Int64) -> Int64 {
    value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
  }
}
