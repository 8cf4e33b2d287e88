import Foundation

/// The tensors of a `.safetensors` file, read in place from a memory map.
///
/// Format: an 8-byte little-endian header length, a JSON header mapping each tensor name to
/// `{dtype, shape, data_offsets: [begin, end]}` (offsets relative to the end of the header),
/// then the raw little-endian data.
final class SafeTensors {
  /// One tensor's metadata.
  struct Entry {
    var dtype: String
    var shape: [Int]
    /// Absolute byte range inside the file.
    var range: Range<Int>
  }

  let file: MappedFile
  let entries: [String: Entry]

  /// Maps and validates `path`: header bounds, JSON shape, offsets inside the file, sizes
  /// matching shapes for known dtypes.
  /// - Throws: `EmbeddingError.invalidSafetensors` for a truncated or damaged file.
  init(path: String) throws(EmbeddingError) {
    let file = try MappedFile(path: path)
    self.file = file
    guard file.count >= 8 else {
      throw .invalidSafetensors(path: path, reason: "shorter than the 8-byte header length")
    }
    var headerLength: UInt64 = 0
    withUnsafeMutableBytes(of: &headerLength) {
      $0.copyMemory(from: UnsafeRawBufferPointer(start: file.base, count: 8))
    }
    headerLength = UInt64(littleEndian: headerLength)
    guard headerLength >= 2, headerLength <= UInt64(file.count - 8), headerLength <= 100_000_000 else {
      throw .invalidSafetensors(
        path: path, reason: "header length \(headerLength) exceeds the file (\(file.count) bytes)")
    }
    let dataStart = 8 + Int(headerLength)
    let header = Data(bytes: file.base + 8, count: Int(headerLength))
    guard let root = try? JSONSerialization.jsonObject(with: header) as? [String: Any] else {
      throw .invalidSafetensors(path: path, reason: "the header is not a JSON object")
    }
    var parsed: [String: Entry] = [:]
    for (name, value) in root where name != "__metadata__" {
      guard let info = value as? [String: Any], let dtype = info["dtype"] as? String,
        let shape = (info["shape"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.intValue }),
        let offsets = (info["data_offsets"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.intValue }),
        offsets.count == 2, shape.count == (info["shape"] as? [Any])?.count
      else {
        throw .invalidSafetensors(path: path, reason: "tensor \(name) has no dtype/shape/data_offsets")
      }
      let begin = offsets[0]
      let end = offsets[1]
      // Compared as `end <= count - dataStart`: `dataStart + end` overflows for a huge offset.
      guard begin >= 0, end >= begin, end <= file.count - dataStart else {
        throw .invalidSafetensors(
          path: path,
          reason:
            "tensor \(name) bytes \(begin)..<\(end) lie outside the file (truncated? \(file.count) bytes)")
      }
      guard shape.allSatisfy({ $0 >= 0 }) else {
        throw .invalidSafetensors(path: path, reason: "tensor \(name) has a negative dimension")
      }
      if let width = Self.byteWidth(dtype) {
        // Any overflow means the shape cannot match the bytes the file holds.
        var bytes: Int? = width
        for dimension in shape {
          guard let sofar = bytes else { break }
          let (product, overflow) = sofar.multipliedReportingOverflow(by: dimension)
          bytes = overflow ? nil : product
        }
        guard bytes == end - begin else {
          throw .invalidSafetensors(
            path: path, reason: "tensor \(name) has \(end - begin) bytes for shape \(shape) of \(dtype)")
        }
      }
      parsed[name] = Entry(dtype: dtype, shape: shape, range: (dataStart + begin)..<(dataStart + end))
    }
    entries = parsed
  }

  static func byteWidth(_ dtype: String) -> Int? {
    switch dtype {
    case "F64", "I64", "U64": return 8
    case "F32", "I32", "U32": return 4
    case "F16", "BF16", "I16", "U16": return 2
    case "I8", "U8", "BOOL": return 1
    default: return nil
    }
  }

  /// A float32 tensor of exactly `shape`, pointing into the map (no copy).
  /// - Throws: `.missingTensor`, `.unsupportedDType`, `.tensorShapeMismatch`, `.invalidSafetensors`
  ///   (misaligned data).
  func float32(_ name: String, shape: [Int]) throws(EmbeddingError) -> UnsafePointer<Float> {
    guard let entry = entries[name] else { throw .missingTensor(name: name, path: file.path) }
    guard entry.dtype == "F32" else { throw .unsupportedDType(name: name, dtype: entry.dtype) }
    guard entry.shape == shape else {
      throw .tensorShapeMismatch(name: name, expected: shape, actual: entry.shape)
    }
    let address = file.base + entry.range.lowerBound
    guard Int(bitPattern: address) % MemoryLayout<Float>.alignment == 0 else {
      throw .invalidSafetensors(path: file.path, reason: "tensor \(name) is not 4-byte aligned")
    }
    return address.assumingMemoryBound(to: Float.self)
  }
}
