import EngramEmbeddings
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// Counts shared by the tasks of a concurrency test.
final class Tally: Sendable {
  let searches = Atomic<Int>(0)
  let writes = Atomic<Int>(0)
  let errors = Mutex<[String]>([])
}

/// Many readers and one writer on one engine, and two processes writing one file.
@Suite(.serialized, .timeLimit(.minutes(5)), .watchdog) struct ConcurrencyTests {
  @Test func fourSearchersAndOneWriterShareAnEngine() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(
      path: folder.path("c.sqlite"), configuration: hashingConfiguration(dimension: 64))
    defer { engine.close() }
    for number in 0..<50 {
      try await engine.memories.remember("seed memory \(number) about topic \(number % 7)")
    }
    let duration: Duration = soakEnabled ? .seconds(30) : .seconds(2)
    let deadline = ContinuousClock.now + duration
    let tally = Tally()
    let modes = SearchMode.allCases
    await withTaskGroup(of: Void.self) { group in
      for searcher in 0..<4 {
        group.addTask {
          var round = 0
          // Bounded by time, but never less than a few rounds (sanitizers, loaded machines).
          while ContinuousClock.now < deadline || round < 5 {
            do {
              let hits = try await engine.search(
                "topic \(round % 7) memory", k: 5, mode: modes[(searcher + round) % modes.count])
              // Every hit must be readable: no torn state between index and store.
              for hit in hits where hit.kind == .memory {
                if try await engine.memories.get(hit.id) == nil {
                  throw EngramError.notFound(kind: .memory, id: hit.id)
                }
              }
              tally.searches.add(1, ordering: .relaxed)
            } catch {
              tally.errors.withLock { $0.append("search: \(error)") }
            }
            round += 1
            // The engine's calls do their work synchronously on the cooperative pool (as wide
            // as the core count); yielding lets the writer task run on a 2-core machine.
            await Task.yield()
          }
        }
      }
      group.addTask {
        var number = 0
        while ContinuousClock.now < deadline || number < 5 {
          do {
            let id = try await engine.memories.remember("written memory \(number) about topic \(number % 7)")
            if number % 5 == 4 { try await engine.memories.forget(id: id) }
            tally.writes.add(1, ordering: .relaxed)
          } catch {
            tally.errors.withLock { $0.append("write: \(error)") }
          }
          number += 1
          await Task.yield()
        }
      }
    }
    let found = tally.errors.withLock { $0 }
    let searchCount = tally.searches.load(ordering: .relaxed)
    let writeCount = tally.writes.load(ordering: .relaxed)
    print("concurrency in-process: searches \(searchCount), writes \(writeCount), errors \(found.count)")
    ReliabilityLog.record(
      "concurrency",
      [
        "case": "4 searchers + 1 writer", "searches": searchCount, "writes": writeCount,
        "errors": found.count, "busy": 0,
      ])
    #expect(found.isEmpty, "\(found.prefix(5))")
    #expect(searchCount > 0)
    #expect(writeCount > 0)
    let report = try await engine.doctor()
    #expect(report.healthy, "\(report.checks)")
  }

  @Test func twoProcessesWriteOneFile() async throws {
    let folder = try TemporaryFolder()
    let database = folder.path("shared.sqlite")
    // Create the file first so both children open an existing, migrated database.
    try await MemoryEngine(path: database, configuration: hashingConfiguration(dimension: 64)).close()
    let count = soakEnabled ? 1000 : 200
    let first = try CrashTestProcess(
      database: database, mode: "remember", arguments: ["--tag", "A", "--count", String(count)])
    let second = try CrashTestProcess(
      database: database, mode: "remember", arguments: ["--tag", "B", "--count", String(count)])
    let statuses = [await first.wait(), await second.wait()]
    let lines = first.lines + second.lines
    let acknowledged = lines.filter { $0.hasPrefix("ACK memory") }
    let errors = lines.filter { $0.hasPrefix("ERR") }
    let busy = errors.filter { $0.contains("busy") || $0.contains("locked") }
    let engine = try MemoryEngine(path: database, configuration: hashingConfiguration(dimension: 64))
    defer { engine.close() }
    var lost = 0
    for line in acknowledged {
      let fields = line.split(separator: " ").map(String.init)
      if try await engine.memories.get(Int64(fields[2]) ?? -1)?.content.hasPrefix(
        "crash memory \(fields[3]):")
        != true
      {
        lost += 1
      }
    }
    print(
      "concurrency two processes: writes \(acknowledged.count) of \(2 * count), errors \(errors.count), "
        + "busy/lock timeouts \(busy.count), lost \(lost)")
    ReliabilityLog.record(
      "concurrency",
      [
        "case": "2 processes writing", "searches": 0, "writes": acknowledged.count, "errors": errors.count,
        "busy": busy.count,
      ])
    #expect(statuses == [0, 0], "\(first.standardError) \(second.standardError)")
    #expect(errors.isEmpty, "\(errors.prefix(3))")
    #expect(acknowledged.count == 2 * count)
    #expect(lost == 0)
    #expect(try await engine.maintenance.tableCounts()["memories"] == 2 * count)
    // The engine opened after both wrote sees every vector, whichever process wrote it.
    let report = try await engine.doctor()
    #expect(report.healthy, "\(report.checks)")
  }
}
