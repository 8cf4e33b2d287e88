import CEngramKernels
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramEmbeddings

/// `engram_parallel`, the spinning pool under the forward pass, and how a batch is split.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ParallelTests {
  /// Counts, per part, how often each part ran: every slot must end at exactly `rounds`.
  private func runCounted(parts: Int, rounds: Int) -> [Int] {
    let counts = UnsafeMutablePointer<Int>.allocate(capacity: parts)
    counts.initialize(repeating: 0, count: parts)
    defer { counts.deallocate() }
    for _ in 0..<rounds {
      engram_parallel(
        Int32(parts),
        { context, part in
          context!.assumingMemoryBound(to: Int.self)[Int(part)] += 1
        }, counts)
    }
    return Array(UnsafeBufferPointer(start: counts, count: parts))
  }

  @Test("every part runs exactly once per region", arguments: [0, 1, 2, 3, 5, 9])
  func everyPartOnce(parts: Int) {
    #expect(runCounted(parts: parts, rounds: 500) == Array(repeating: 500, count: parts))
  }

  @Test("regions from several threads at once, and nested regions, all complete")
  func concurrentAndNested() {
    let finished = Mutex([Bool](repeating: false, count: 4))
    // Four callers race for the pool; whoever loses runs serially. Each part of a region
    // runs a nested region, which always runs serially on its thread.
    DispatchQueue.concurrentPerform(iterations: 4) { caller in
      let counts = runCounted(parts: 3, rounds: 200)
      var nested = 0
      withUnsafeMutablePointer(to: &nested) { pointer in
        engram_parallel(
          2,
          { context, _ in
            engram_parallel(
              3,
              { context, _ in context!.assumingMemoryBound(to: Int.self).pointee += 0 },
              context)
          }, pointer)
      }
      finished.withLock { $0[caller] = counts == [200, 200, 200] }
    }
    #expect(finished.withLock { $0 } == [true, true, true, true])
  }

  @Test("a batch splits into contiguous groups of about equal token counts")
  func balancedGroups() {
    #expect(BertModel.balancedGroups([], parts: 2) == [0..<0])
    #expect(BertModel.balancedGroups([5], parts: 4) == [0..<1])
    #expect(BertModel.balancedGroups([10, 10, 10, 10], parts: 2) == [0..<2, 2..<4])
    #expect(BertModel.balancedGroups([30, 5, 5, 5, 5], parts: 2) == [0..<1, 1..<5])
    #expect(BertModel.balancedGroups([1, 1, 1], parts: 8).count == 3)
    let counts = (0..<32).map { 5 + ($0 * 37) % 60 }
    let groups = BertModel.balancedGroups(counts, parts: 3)
    #expect(groups.count == 3)
    #expect(groups.first?.lowerBound == 0 && groups.last?.upperBound == counts.count)
    for (left, right) in zip(groups, groups.dropFirst()) { #expect(left.upperBound == right.lowerBound) }
    let sums = groups.map { counts[$0].reduce(0, +) }
    #expect(sums.max()! - sums.min()! <= 2 * counts.max()!)
  }

  @Test(
    "map keeps the order and every item at any thread count, and splits only from its minimum",
    arguments: [1, 2, 3, 7])
  func mapKeepsOrder(threads: Int) {
    for count in [0, 1, 5, 31, 32, 33, 257] {
      let items = (0..<count).map { "text \($0)" }
      let threadsSeen = Mutex(Set<String>())
      let mapped = BertModel.map(items, threads: threads) { item -> Int in
        threadsSeen.withLock { _ = $0.insert(String(describing: Thread.current)) }
        return Int(item.dropFirst(5))! * 2
      }
      #expect(mapped == (0..<count).map { $0 * 2 }, "\(count) items on \(threads) threads")
      if count < 32 || threads == 1 {
        #expect(threadsSeen.withLock { $0.count } <= 1, "\(count) items ran on one thread")
      }
    }
  }

  /// What the parts of one region share: how many have started, on which threads.
  private final class Rendezvous: @unchecked Sendable {
    let parts: Int
    let started = Atomic<Int>(0)
    let gaveUp = Atomic<Bool>(false)
    let threads = Mutex(Set<UInt>())

    init(parts: Int) { self.parts = parts }

    /// Marks a part started, then waits (sleeping) up to a second for every part to start.
    func arrive() {
      threads.withLock { _ = $0.insert(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
      started.add(1, ordering: .sequentiallyConsistent)
      let deadline = Date().addingTimeInterval(1)
      while started.load(ordering: .sequentiallyConsistent) < parts, !gaveUp.load(ordering: .relaxed) {
        if Date() > deadline {
          gaveUp.store(true, ordering: .relaxed)
          return
        }
        usleep(200)
      }
    }
  }

  @Test("a worker started for a region takes part in it")
  func newWorkersJoinTheirFirstRegion() {
    // Each region needs every part running at once; each of these part counts needs one
    // more worker than the last (the other tests use at most 9 parts). A worker that took
    // the region being published as one it had already seen sat it out, and the region's
    // parts waited for it in vain (before the fix, the first region of a process ran on its
    // caller alone).
    for parts in 2...14 {
      var attempts = 0
      while true {
        attempts += 1
        let rendezvous = Rendezvous(parts: parts)
        let caller = UInt(bitPattern: Int(bitPattern: pthread_self()))
        engram_parallel(
          Int32(parts),
          { context, _ in
            Unmanaged<Rendezvous>.fromOpaque(context!).takeUnretainedValue().arrive()
          }, Unmanaged.passUnretained(rendezvous).toOpaque())
        let threads = rendezvous.threads.withLock { $0 }
        // Another test's region held the pool: the parts ran here, one after another. Again.
        if threads == [caller], attempts < 50 {
          usleep(20_000)
          continue
        }
        let gaveUp = rendezvous.gaveUp.load(ordering: .relaxed)
        #expect(!gaveUp, "\(parts) parts: \(threads.count) threads took part")
        #expect(threads.count == parts)
        break
      }
    }
  }

  @Test("map's parts are claimed as threads come free: one slow part does not hold half the items")
  func mapBalancesALateThread() {
    // The first item waits until three quarters of the items are done: only a split into more
    // parts than threads lets the other thread take them (one part a thread leaves it half).
    let count = 64
    for attempt in 1...50 {
      let done = Atomic<Int>(0)
      let timedOut = Atomic<Bool>(false)
      let threadsSeen = Mutex(Set<String>())
      let mapped = BertModel.map(Array(0..<count), threads: 2) { item -> Int in
        threadsSeen.withLock { _ = $0.insert(String(describing: Thread.current)) }
        if item == 0 {
          let deadline = Date().addingTimeInterval(2)
          while done.load(ordering: .sequentiallyConsistent) < count * 3 / 4 {
            if Date() > deadline {
              timedOut.store(true, ordering: .relaxed)
              break
            }
            usleep(500)
          }
        }
        done.add(1, ordering: .sequentiallyConsistent)
        return item * 3
      }
      #expect(mapped == (0..<count).map { $0 * 3 })
      // Another region held the pool: every item ran here, one after another. Again.
      if threadsSeen.withLock({ $0.count }) == 1, attempt < 50 {
        usleep(20_000)
        continue
      }
      let late = timedOut.load(ordering: .relaxed)
      #expect(!late, "the other thread did not take three quarters of the items")
      break
    }
  }
}
