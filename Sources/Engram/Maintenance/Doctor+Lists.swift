import EngramVectors
import Foundation

extension Doctor {
  /// Checks the approximate tier's lists beside the snapshot (`<snapshot>.lists`): header,
  /// the stamp naming the current snapshot, layout and every byte's checksum. Lists that fail
  /// are never used (an open ignores them and the index rebuilds its lists, seconds at a
  /// million rows, on every open until a writer saves new ones), so they are a fault.
  func listsCheck() throws -> DoctorReport.Check {
    guard let url = vectors.snapshotURL else {
      return DoctorReport.Check(name: "lists", ok: true, detail: "none (the store keeps no snapshot file)")
    }
    let listsPath = url.path + ".lists"
    guard FileManager.default.fileExists(atPath: listsPath) else {
      return DoctorReport.Check(name: "lists", ok: true, detail: "none (no approximate lists saved)")
    }
    guard FileManager.default.fileExists(atPath: url.path),
      let token = try store.readTransaction({ try $0.currentSnapshotToken() })
    else {
      return DoctorReport.Check(
        name: "lists", ok: false, detail: "left without their snapshot; a repair removes them")
    }
    let state: ListsFileState
    do {
      state = try VectorIndex.verifyLists(snapshot: url, expectedToken: token, dimension: embedder.dimension)
    } catch {
      // The snapshot is not current or not intact ("snapshot" says which): a writer
      // replaces both files.
      return DoctorReport.Check(name: "lists", ok: true, detail: "not checked: the snapshot is not current")
    }
    switch state {
    case .absent:
      return DoctorReport.Check(name: "lists", ok: true, detail: "none (no approximate lists saved)")
    case .verified(let lists, let rows):
      return DoctorReport.Check(
        name: "lists", ok: true, detail: "\(lists) lists over \(rows) rows, every byte verified")
    case .stale:
      return DoctorReport.Check(
        name: "lists", ok: false, detail: "another snapshot's lists (not used); a repair rebuilds them")
    case .damaged(let reason):
      return DoctorReport.Check(
        name: "lists", ok: false, detail: "damaged (\(reason)), not used; a repair rebuilds them")
    }
  }

  /// Removes the failing lists file and, when the index is large enough to be served by the
  /// approximate tier, clusters its rows again and saves the new lists with the snapshot.
  func repairLists() throws -> String {
    if let url = vectors.snapshotURL, FileManager.default.fileExists(atPath: url.path + ".lists") {
      let listsPath = url.path + ".lists"
      try FileManager.default.removeItem(atPath: listsPath)
    }
    let index = self.index
    let settings = vectors.approximate
    guard settings.enabled, index.count >= settings.threshold else {
      return "lists: removed the failing lists file (\(index.count) rows: below the approximate threshold)"
    }
    index.rebuildApproximateIndex()
    try vectors.writeSnapshot()
    let lists = index.approximateStatus?.lists ?? 0
    return "lists: rebuilt \(lists) lists over \(index.count) rows and saved them with the snapshot"
  }
}
