import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The built-in table of places and time zones.
@Suite("Place directory", .timeLimit(.minutes(5)), .watchdog) struct PlaceDirectoryTests {
  /// Every identifier in the table is one Foundation knows.
  @Test func everyIdentifierIsATimeZoneFoundationKnows() {
    let rows = PlaceDirectory.cities + PlaceDirectory.countries + PlaceDirectory.zones
    for row in rows {
      #expect(TimeZone(identifier: row.zone) != nil, "\(row.english): \(row.zone)")
    }
    #expect(PlaceDirectory.allPlaces.allSatisfy { $0.timeZone != nil })
  }

  /// `make corpus` output is current: the compiled table holds exactly the rows of places.tsv.
  @Test func generatedTableMatchesTheTSVFile() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/EngramAgent/Places")
    let text = try String(contentsOf: folder.appendingPathComponent("places.tsv"), encoding: .utf8)
    let rows = PlaceDirectory.rows(fromTable: text)
    #expect(rows.count > 250)
    #expect(rows == PlaceDirectory.allRows, "stale PlaceDirectory+Generated.swift: run `make corpus`")
  }

  @Test func coversMajorCitiesAndCountriesInBothLanguages() {
    let places = PlaceDirectory.allPlaces
    #expect(places.filter { $0.kind == .city }.count >= 150)
    #expect(places.filter { $0.kind == .country }.count >= 50)
    for place in places where place.kind != .zone {
      #expect(MessageLanguage.detect(place.chinese) == .chinese, "\(place.english)")
      #expect(MessageLanguage.detect(place.english) == .english, "\(place.chinese)")
    }
  }

  /// Every English and Chinese name finds a place in its own row's zone (a name two rows
  /// share, such as 日本 and 日本时间, points to the same zone).
  @Test func everyNameLooksUpToItsZone() {
    for row in PlaceDirectory.cities + PlaceDirectory.countries + PlaceDirectory.zones {
      for name in [row.english, row.chinese] + row.aliases {
        #expect(PlaceDirectory.lookup(name)?.timeZoneIdentifier == row.zone, "\(name)")
      }
    }
  }

  @Test(arguments: [
    ("lisbon", "Europe/Lisbon"), ("  New   York ", "America/New_York"), ("NYC", "America/New_York"),
    ("São Paulo", "America/Sao_Paulo"), ("Sao Paulo", "America/Sao_Paulo"),
    ("St. Petersburg", "Europe/Moscow"),
    ("Washington D.C.", "America/New_York"), ("the UK", "Europe/London"), ("纽约", "America/New_York"),
    ("UTC", "UTC"), ("gmt", "GMT"), ("PST", "America/Los_Angeles"), ("CET", "Europe/Berlin"),
    ("JST", "Asia/Tokyo"), ("Asia/Tokyo", "Asia/Tokyo"), ("asia/kolkata", "Asia/Kolkata"),
    ("america/new_york", "America/New_York"), ("Europe/Lisbon", "Europe/Lisbon"),
  ])
  func lookupIgnoresCaseAccentsAndDots(_ name: String, _ zone: String) {
    #expect(PlaceDirectory.lookup(name)?.timeZoneIdentifier == zone)
  }

  @Test(arguments: ["Atlantis", "", "Asia/Atlantis", "the", "Tokyo Tower", "in Tokyo"])
  func unknownNamesAreNil(_ name: String) {
    #expect(PlaceDirectory.lookup(name) == nil)
  }

  @Test func zoneNamesComeFromTheTableOrTheIdentifier() {
    #expect(PlaceDirectory.name(ofZone: "Asia/Tokyo", in: .chinese) == "东京")
    #expect(PlaceDirectory.name(ofZone: "Asia/Tokyo", in: .english) == "Tokyo")
    #expect(PlaceDirectory.name(ofZone: "America/Argentina/Buenos_Aires", in: .english) == "Buenos Aires")
    #expect(PlaceDirectory.name(ofZone: "Pacific/Chatham", in: .chinese) == "Chatham")
    #expect(PlaceDirectory.name(ofZone: "UTC", in: .english) == "UTC")
  }
}
