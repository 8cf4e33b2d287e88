import EngramTestSupport
import EngramVectors
import Foundation
import Testing

/// `verifyLists`, what `doctor` runs on `<snapshot>.lists`: the header, the stamp naming the
/// snapshot, and every byte (an open checks the codes only with `.full` verification).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ListsCheckTests {
  func folder() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lists-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
  }

  func flip(_ path: String, at offset: (Int) -> Int) throws {
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes[offset(bytes.count)] ^= 0x5A
    try bytes.write(to: URL(fileURLWithPath: path))
  }

  @Test func intactListsAreVerifiedAndMissingOnesAreAbsent() throws {
    let (index, _) = try ApproximateIndexTests.makeIndex()
    let directory = try folder()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("v.snapshot")
    try index.write(snapshotTo: file, token: 3)
    let lists = try #require(index.approximateStatus).lists
    #expect(
      try VectorIndex.verifyLists(
        snapshot: file, expectedToken: 3, dimension: ApproximateIndexTests.dimension)
        == .verified(lists: lists, rows: index.count))
    try FileManager.default.removeItem(atPath: file.path + ".lists")
    #expect(
      try VectorIndex.verifyLists(
        snapshot: file, expectedToken: 3, dimension: ApproximateIndexTests.dimension)
        == .absent)
  }

  @Test func damagedCodesAreFoundThoughAnOrdinaryOpenUsesThem() throws {
    let (index, _) = try ApproximateIndexTests.makeIndex()
    let directory = try folder()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("v.snapshot")
    try index.write(snapshotTo: file, token: 3)
    // The last bytes are the code sums: checked only when every byte is read.
    try flip(file.path + ".lists") { $0 - 3 }
    let configuration = VectorIndex.Configuration(
      dimension: ApproximateIndexTests.dimension,
      approximate: ApproximateConfiguration(threshold: 1000, build: .manual))
    let opened = try VectorIndex.open(snapshot: file, expectedToken: 3, configuration: configuration)
    #expect(opened.approximateStatus != nil)
    #expect(
      try VectorIndex.verifyLists(
        snapshot: file, expectedToken: 3, dimension: ApproximateIndexTests.dimension)
        == .damaged(reason: "rows, layout or checksum"))
  }

  @Test func aDamagedHeaderAndAnotherSnapshotsListsAreToldApart() throws {
    let (index, _) = try ApproximateIndexTests.makeIndex()
    let directory = try folder()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("v.snapshot")
    let listsURL = URL(fileURLWithPath: file.path + ".lists")
    try index.write(snapshotTo: file, token: 1)
    let older = try Data(contentsOf: listsURL)
    index.remove(ids: [1])
    try index.write(snapshotTo: file, token: 2)
    try older.write(to: listsURL)
    let dimension = ApproximateIndexTests.dimension
    #expect(try VectorIndex.verifyLists(snapshot: file, expectedToken: 2, dimension: dimension) == .stale)
    try index.write(snapshotTo: file, token: 2)
    try flip(listsURL.path) { _ in 20 }  // the probe count, under the header checksum
    #expect(
      try VectorIndex.verifyLists(snapshot: file, expectedToken: 2, dimension: dimension)
        == .damaged(reason: "header"))
    // A snapshot that is not current is reported as such, not as damaged lists.
    #expect(throws: VectorIndexError.self) {
      try VectorIndex.verifyLists(snapshot: file, expectedToken: 9, dimension: dimension)
    }
  }
}
