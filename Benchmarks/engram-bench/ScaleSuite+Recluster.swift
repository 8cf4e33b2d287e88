import EngramCore
import EngramStore
import EngramVectors
import Foundation

extension ScaleSuite {
  /// What re-clustering the memory's vector rows costs: the work a background build does when
  /// appends have drifted the approximate lists (as many rows again as were clustered), or
  /// when a memory first reaches the threshold. The snapshot beside the database is mapped
  /// (its token read from the header, `VectorIndex+Snapshot.swift`: u64 at byte 24), then
  /// `rebuildApproximateIndex()` is timed with the engine's default settings (one build
  /// thread). A snapshot of int8 codes (format 3) re-reads its float32 rows from the database
  /// before clustering, as the engine's does: that read is part of the time. Nil when the memory keeps no snapshot or holds fewer rows than the threshold.
  /// Run in this process, last (it maps the rows and raises this process's resident size).
  static func reclusterReport(db: String) throws -> BenchReport? {
    let url = URL(fileURLWithPath: db + ".vectors")
    guard let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
    defer { try? handle.close() }
    guard let header = try handle.read(upToCount: 32), header.count == 32 else { return nil }
    let token = header.withUnsafeBytes {
      UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }
    let store = try StoreFactory.open(
      StoreLocation(parsing: db),
      options: {
        var options = StoreFactory.Options(); options.readOnly = true; return options
      }())
    defer { store.close() }
    let index = try VectorIndex.open(snapshot: url, expectedToken: token, rowSource: StoreRows(store: store))
    let settings = ApproximateConfiguration()
    guard index.count >= settings.threshold else { return nil }
    progress("scale: re-clustering \(index.count) vector rows")
    let start = ContinuousClock.now
    index.rebuildApproximateIndex()
    let seconds = (ContinuousClock.now - start).seconds
    guard let status = index.approximateStatus else { throw BenchError("re-clustering built no lists") }
    var report = BenchReport()
    report.set("rows", index.count)
    report.set("seconds", seconds)
    report.set("lists", status.lists)
    report.set("probes", status.probes)
    report.set("calibrated_recall", status.calibratedRecall)
    report.set("build_threads", settings.buildThreads)
    report.set("load_average", loadAverage())
    return report
  }
}

/// The float32 rows of a snapshot of codes, read from the store by owner. Index ids pack an
/// owner as `id << 2 | kind code` (the engine's `VectorKey`).
private struct StoreRows: FloatRowSource {
  let store: any MemoryStore

  func floatRows(for ids: [Int64]) throws -> [[Float]?] {
    let owners = ids.map { (kind: ItemKind(code: UInt8($0 & 3)) ?? .summary, id: $0 >> 2) }
    return try store.readTransaction { try $0.embeddingVectors(owners: owners) }
  }
}
