import EngramCore
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Many users' engines in one process: opened on first use, kept within a byte budget (least
/// recently used idle engine out first, an engine with a lease in flight never), each user
/// within their concurrency and rate limits.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct UserEnginesTests {
  /// Engines of `folder/USER.sqlite` with small page caches.
  static func engines(_ folder: ScratchFolder, limits: UserEngines.Limits) -> UserEngines {
    let root = folder.url.path
    return UserEngines(limits: limits) { user in try engine(root + "/\(user).sqlite", user: user) }
  }

  static func engine(_ path: String, user: String) throws -> MemoryEngine {
    var configuration = EngramConfiguration(embedder: try HashingEmbedder(dimension: 32))
    configuration.user = user
    configuration.readerCount = 1
    configuration.cacheSizeKiB = 256
    return try MemoryEngine(path: path, configuration: configuration)
  }

  @Test func anEngineIsEstimatedByItsRowsAndItsFilesNotByTheRoomItMayUse() async throws {
    let scratch = try ScratchFolder()
    let engine = try Self.engine(scratch.url.path + "/ann.sqlite", user: "ann")
    for index in 0..<40 { try await engine.memories.remember("Ann's note number \(index) about her bees") }
    _ = try await engine.search("bees", k: 5)
    _ = try await engine.search("note about bees", k: 5, mode: .keyword)
    // The index holds its 40 rows of 32 floats and little room; each of the two connections
    // caches at most the files (far less than its 256 KiB cache on a memory this small),
    // besides its schema and statements.
    let index = try engine.index.memoryBytes
    #expect(index >= 40 * 32 * 4 && index < 100 * (32 * 4 + 64))
    let files = [scratch.url.path + "/ann.sqlite", scratch.url.path + "/ann.sqlite-wal"].map {
      (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0
    }.reduce(0, +)
    let perConnection = PageCacheEstimate.connectionOverhead
    #expect(engine.estimatedResidentBytes == index + 2 * (min(256 << 10, files) + perConnection))
    // What the connections hold, as SQLite counts it, is within the estimate.
    let database = try #require(engine.store as? Database)
    let measured = await BlockingWork.run { database.connectionMemoryBytes() }
    #expect(measured > 0 && measured <= engine.estimatedResidentBytes - index)
    await engine.close()
  }

  @Test func theLeastRecentlyUsedIdleEngineGoesFirstAndALeasedOneStays() async throws {
    let scratch = try ScratchFolder()
    // The estimate of an engine like those below (one memory stored), measured.
    let probe = try Self.engine(scratch.url.path + "/probe.sqlite", user: "probe")
    try await probe.memories.remember("Probe keeps bees")
    let each = probe.estimatedResidentBytes
    await probe.close()
    var limits = UserEngines.Limits()
    limits.cacheBytes = each * 5 / 2  // two engines fit, three do not
    let engines = Self.engines(scratch, limits: limits)
    let ann = try await engines.lease(user: "ann")
    try await ann.engine.memories.remember("Ann keeps bees")
    let bob = try await engines.lease(user: "bob")
    bob.release()
    // Carol pushes the budget over: Bob (idle, least recently used) goes; Ann (leased) stays.
    let carol = try await engines.lease(user: "carol")
    #expect(engines.isCached("ann"))
    #expect(!engines.isCached("bob"))
    #expect(engines.isCached("carol"))
    #expect(engines.statistics.evicted == 1)
    carol.release()
    // Bob comes back: now Ann is still leased, Carol idle and least recent: Carol goes.
    let bobAgain = try await engines.lease(user: "bob")
    #expect(engines.isCached("ann") && engines.isCached("bob") && !engines.isCached("carol"))
    #expect(engines.statistics.cachedBytes <= limits.cacheBytes)
    // A leased engine stays usable throughout.
    #expect(try await ann.engine.search("bees", k: 1, mode: .keyword).first?.text == "Ann keeps bees")
    ann.release()
    bobAgain.release()
    await engines.close()
  }

  @Test func aUserPastTheirConcurrencyIsToldToRetryAndOthersAreNot() async throws {
    let scratch = try ScratchFolder()
    var limits = UserEngines.Limits()
    limits.concurrentRequestsPerUser = 2
    let engines = Self.engines(scratch, limits: limits)
    let first = try await engines.lease(user: "ann")
    let second = try await engines.lease(user: "ann")
    await #expect(throws: UserEnginesError.busy(user: "ann", retryAfter: .seconds(1))) {
      _ = try await engines.lease(user: "ann")
    }
    let bob = try await engines.lease(user: "bob")
    first.release()
    let third = try await engines.lease(user: "ann")
    for lease in [second, bob, third] { lease.release() }
    #expect(engines.statistics.leases == 0)
    await engines.close()
  }

  @Test func aUserPastTheirRateWaitsForTheBucketToRefill() async throws {
    let scratch = try ScratchFolder()
    var limits = UserEngines.Limits()
    // One request per 100 s after a burst of 2: opening the engine on a slow machine cannot
    // refill the bucket within the test.
    limits.requestsPerSecondPerUser = 0.01
    limits.burstPerUser = 2
    let engines = Self.engines(scratch, limits: limits)
    try await engines.lease(user: "ann").release()
    try await engines.lease(user: "ann").release()
    do {
      _ = try await engines.lease(user: "ann")
      Issue.record("a third request within the burst was admitted")
    } catch UserEnginesError.busy(let user, let retryAfter) {
      #expect(user == "ann")
      #expect(retryAfter > .zero && retryAfter <= .seconds(100))
    }
    try await engines.lease(user: "bob").release()
    await engines.close()
  }

  @Test func concurrentFirstRequestsOfOneUserOpenOneEngine() async throws {
    let scratch = try ScratchFolder()
    let engines = Self.engines(scratch, limits: UserEngines.Limits())
    let leases = try await withThrowingTaskGroup(of: EngineLease.self) { group in
      for _ in 0..<6 { group.addTask { try await engines.lease(user: "ann") } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(Set(leases.map { ObjectIdentifier($0.engine) }).count == 1)
    #expect(engines.statistics.opened == 1)
    for lease in leases { lease.release() }
    await engines.close()
  }

  @Test func aTokenLeasesOnlyItsOwnUsersEngine() async throws {
    let scratch = try ScratchFolder()
    var users = UsersFile()
    let annToken = try users.add("ann")
    let path = scratch.path("shared.sqlite")
    let engines = UserEngines(users: users) { user in
      var configuration = EngramConfiguration(embedder: try HashingEmbedder(dimension: 32))
      configuration.user = user
      return try MemoryEngine(path: path, configuration: configuration)
    }
    let lease = try await engines.lease(token: annToken)
    #expect(lease.user == "ann" && lease.engine.configuration.user == "ann")
    lease.release()
    await #expect(throws: UserEnginesError.unknownToken) { _ = try await engines.lease(token: "ann") }
    await engines.close()
  }
}
