import EngramTestSupport
import Testing

/// The `.offPool` trait moves a suite's synchronous tests off the cooperative pool, where
/// blocking work would stall the rest of the run.
@Suite(.timeLimit(.minutes(5)), .watchdog, .offPool) struct OffPoolTests {
  @Test func aSynchronousTestRunsOnTheOffPoolQueue() {
    #expect(OffPoolExecutor.isCurrent)
  }

  @Test func anAsynchronousTestRunsThereToo() async {
    await Task.yield()
    #expect(OffPoolExecutor.isCurrent)
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct WithoutOffPoolTests {
  @Test func aTestWithoutTheTraitRunsOnThePool() {
    #expect(!OffPoolExecutor.isCurrent)
  }
}
