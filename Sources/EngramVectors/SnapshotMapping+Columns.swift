#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension SnapshotMapping {
  /// Maps each column of the snapshot privately (copy-on-write: the file is never written,
  /// and unwritten pages stay shared with the page cache and other processes) at the start
  /// of an anonymous region with room for as many rows again (at least 4,096), so rows
  /// appended to an opened snapshot need no copy of the rows before them.
  ///
  /// Does nothing when the page size is not the file's 4,096-byte column alignment or a
  /// mapping fails; an append then copies the rows, as before.
  /// - Complexity: O(1): two `mmap` calls per column; no page is touched.
  func mapColumns(descriptor: Int32, layout: SnapshotFormat.Layout, count n: Int, dimension: Int) {
    guard columns.isEmpty, n > 0, sysconf(Int32(_SC_PAGESIZE)) == SnapshotFormat.alignment else { return }
    let capacity = n + max(4096, n)
    let page = SnapshotFormat.alignment
    func round(_ bytes: Int) -> Int { (bytes + page - 1) / page * page }
    let specs =
      [(layout.ids, 8), (layout.sessions, 8), (layout.scopes, 8), (layout.timestamps, 8), (layout.kinds, 1)]
      + SnapshotFormat.payload(layout, dimension: dimension).map { ($0.offset, $0.width) }
    var made: [(base: UnsafeMutableRawPointer, length: Int)] = []
    for (offset, width) in specs {
      let length = round(capacity * width)
      guard
        let region = mmap(
          nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
        region != MAP_FAILED
      else { break }
      made.append((region, length))
      // The file's rows at the start; the rest of their last page is the file's zero padding
      // (or, for the last column, zeros past the end of the file).
      let fileBytes = round(n * width)
      let placed = mmap(
        region, fileBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, descriptor, off_t(offset))
      guard let placed, placed == region else { break }
    }
    guard made.count == specs.count else {
      for region in made { munmap(region.base, region.length) }
      return
    }
    columns = made
    columnCapacity = capacity
  }
}
