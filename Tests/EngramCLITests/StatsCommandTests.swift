import Engram
import EngramTestSupport
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct StatsTierLineTests {
  @Test func namesTheIndexThatServes() {
    #expect(StatsCommand.tierLine(["index_tier": "exact"]) == "exact scan")
    let approximate: JSONValue = [
      "index_tier": "approximate", "index_calibrated_recall": 0.953, "index_lists": 632, "index_probes": 12,
    ]
    #expect(
      StatsCommand.tierLine(approximate)
        == "approximate (632 lists, 12 probed, calibrated recall@10 0.953; --exact scans all)")
  }
}
