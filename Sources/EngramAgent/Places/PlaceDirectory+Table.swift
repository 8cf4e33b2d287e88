// The places `PlaceDirectory` knows: data, not logic, in `places.tsv` beside this file, which
// `make corpus` compiles into `PlaceDirectory+Generated.swift`. Each row is an English name, a
// Chinese name, an IANA time zone identifier and other names people write for it.
// `PlaceDirectoryTests` checks every identifier with Foundation's `TimeZone(identifier:)` and
// that the compiled table is current.

extension PlaceDirectory {
  /// One row of the table.
  struct Row: Sendable, Equatable {
    var english: String
    var chinese: String
    var zone: String
    var kind: KnownPlace.Kind
    var aliases: [String]

    init(
      _ english: String, _ chinese: String, _ zone: String, _ kind: KnownPlace.Kind, _ aliases: [String] = []
    ) {
      self.english = english
      self.chinese = chinese
      self.zone = zone
      self.kind = kind
      self.aliases = aliases
    }
  }

  /// Every row of the table, in file order.
  static let allRows = rows(fromTable: generatedTable)

  /// Major world cities.
  static let cities = allRows.filter { $0.kind == .city }

  /// Countries whose main territory keeps one time zone ("France" is metropolitan France).
  static let countries = allRows.filter { $0.kind == .country }

  /// Time zone names and abbreviations. An abbreviation stands for the region that uses it
  /// (PST and PDT both mean Pacific time, America/Los_Angeles, whatever the season).
  static let zones = allRows.filter { $0.kind == .zone }

  /// The rows of a table written as `places.tsv` is: tab-separated kind (`city`, `country`
  /// or `zone`), English name, Chinese name, zone identifier and, optionally, aliases
  /// separated by `|`; blank lines and lines starting with `#` are skipped.
  ///
  /// A malformed row is a programming error (`make corpus` refuses it before it is compiled).
  static func rows(fromTable text: String) -> [Row] {
    text.split(separator: "\n").compactMap { line -> Row? in
      guard !line.hasPrefix("#"), !line.allSatisfy(\.isWhitespace) else { return nil }
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard (4...5).contains(fields.count), let kind = KnownPlace.Kind(rawValue: fields[0]) else {
        preconditionFailure("places.tsv: malformed row \(line)")
      }
      let aliases = fields.count == 5 ? fields[4].split(separator: "|").map(String.init) : []
      return Row(fields[1], fields[2], fields[3], kind, aliases)
    }
  }
}
