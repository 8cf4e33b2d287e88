import EngramTestSupport
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DatabaseLocationTests {
  @Test func optionWinsOverEnvironment() {
    #expect(
      DatabaseLocation.resolve(option: "/a.sqlite", environment: ["ENGRAM_DB": "/b.sqlite"]) == "/a.sqlite")
  }

  @Test func environmentWinsOverDefaultAndTildeExpands() {
    #expect(
      DatabaseLocation.resolve(option: nil, environment: ["ENGRAM_DB": "~/m.db", "HOME": "/h"]) == "/h/m.db")
    #expect(DatabaseLocation.resolve(option: "", environment: ["ENGRAM_DB": "/e.db"]) == "/e.db")
  }

  @Test func defaultIsUnderTheDataFolder() {
    #expect(
      DatabaseLocation.resolve(option: nil, environment: ["XDG_DATA_HOME": "/data", "HOME": "/h"])
        == "/data/engram/memory.sqlite")
    let fallback = DatabaseLocation.resolve(
      option: nil, environment: ["HOME": "/h", "XDG_DATA_HOME": "relative"])
    #expect(fallback.hasPrefix("/h/"))
    #expect(fallback.hasSuffix("/engram/memory.sqlite"))
  }
}
