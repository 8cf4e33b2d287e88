import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramCLI

/// A clock the test moves by hand.
final class ManualClock: Sendable {
  let seconds = Mutex(100.0)
  func advance(_ delta: Double) { seconds.withLock { $0 += delta } }
  var now: @Sendable () -> Double { { [self] in seconds.withLock { $0 } } }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ProgressBarTests {
  @Test func lineShowsBarCountsRateAndETA() {
    let line = ProgressBar.line(label: "ingest", done: 250, total: 1_000, elapsed: 5, width: 60)
    #expect(line == "ingest [====>" + String(repeating: " ", count: 13) + "]  250/1000  25%  50/s  ETA 0:15")
    #expect(TextWidth.width(of: line) <= 59)
  }

  @Test func completeBarIsFull() {
    let line = ProgressBar.line(label: "x", done: 10, total: 10, elapsed: 2, width: 60)
    #expect(line.hasPrefix("x [" + String(repeating: "=", count: 24) + "]"))
    #expect(line.hasSuffix("ETA 0:00"))
  }

  @Test func unknownTotalShowsCountAndRateOnly() {
    #expect(
      ProgressBar.line(label: "embed", done: 1_234, total: nil, elapsed: 2, width: 80) == "embed  1234  617/s"
    )
  }

  @Test func noRateYetMeansUnknownETA() {
    #expect(
      ProgressBar.line(label: "a", done: 0, total: 5, elapsed: 0, width: 80).hasSuffix("0/s  ETA --:--"))
  }

  @Test func narrowTerminalsDropTheBarAndTrim() {
    let line = ProgressBar.line(label: "ingest", done: 250, total: 1_000, elapsed: 5, width: 20)
    #expect(!line.contains("["))
    #expect(TextWidth.width(of: line) <= 19)
  }

  @Test(arguments: [
    (0.0, "0/s"), (0.25, "0.2/s"), (9.96, "10.0/s"), (812.4, "812/s"), (12_345, "12.3k/s"),
    (25_000_000, "25.0M/s"), (.infinity, "0/s"),
  ])
  func formatsRates(rate: Double, text: String) {
    #expect(ProgressBar.formatRate(rate) == text)
  }

  @Test(arguments: [
    (0.0, "0:00"), (4.2, "0:05"), (754, "12:34"), (3_723, "1:02:03"), (-1, "--:--"), (.nan, "--:--"),
  ])
  func formatsClockTimes(seconds: Double, text: String) {
    #expect(ProgressBar.formatClock(seconds) == text)
  }

  @Test func summaryReportsCountTimeAndRate() {
    #expect(
      ProgressBar.summary(label: "ingest", done: 5_000, elapsed: 6.1) == "ingest: 5000 done in 6.1s (820/s)")
    #expect(ProgressBar.summary(label: "ingest", done: 10, elapsed: 75) == "ingest: 10 done in 1:15 (0.1/s)")
  }

  @Test func offATerminalOnlyTheSummaryIsWritten() {
    let output = CapturedOutput()
    let clock = ManualClock()
    let bar = ProgressBar(label: "ingest", total: 3, output: output, isInteractive: false, now: clock.now)
    bar.advance()
    bar.advance(by: 2)
    #expect(output.text.isEmpty)
    clock.advance(2)
    bar.finish()
    bar.finish()
    #expect(output.text == "ingest: 3 done in 2.0s (1.5/s)\n")
  }

  @Test func onATerminalRedrawsAreThrottled() {
    let output = CapturedOutput()
    let clock = ManualClock()
    let bar = ProgressBar(
      label: "ingest", total: 100, output: output, isInteractive: true, width: 60, minimumInterval: 0.5,
      now: clock.now)
    clock.advance(1)
    bar.update(done: 10)
    bar.update(done: 11)
    clock.advance(0.2)
    bar.update(done: 12)
    #expect(output.text.components(separatedBy: "\r").count == 2)
    clock.advance(0.5)
    bar.update(done: 50)
    #expect(output.text.components(separatedBy: "\r").count == 3)
    #expect(output.text.hasSuffix("50/100  50%  29/s  ETA 0:02\u{1B}[K"))
    bar.finish()
    #expect(output.text.hasSuffix("\r\u{1B}[Kingest: 50 done in 1.7s (29/s)\n"))
    bar.update(done: 60)
    #expect(output.text.hasSuffix("\n"))
  }
}
