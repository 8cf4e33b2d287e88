import EngramCore
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension BertModel {
  /// The smoothing calibration's channel maxima (`channelMaxima(_:)`) kept in a file beside the
  /// model, so that only the first int8 load of a model file pays the calibration pass (and the
  /// packing of the model without smoothing it runs on): e5-small's load CPU 0.34 s -> 0.16 s
  /// on a later load (see `docs/benchmarks.md`, "Smoothed int8 products").
  ///
  /// The file (`NAME.smoothing` beside model file `NAME`) holds a key, the maxima as
  /// little-endian float32 and a checksum of everything before it. The key is the format
  /// version, the model file's size and modification time, a hash of its first 4 KiB (the
  /// header), the encoder's shape and a hash of the calibration's token ids; a file whose key,
  /// length, checksum or values (finite, not negative) do not match is not used, and the
  /// maxima are computed again. Writing goes through a temporary file renamed over the old one;
  /// a folder that cannot be written only means the next load computes them again.
  struct SmoothingCache {
    /// Where the maxima of a load came from.
    enum Source: Equatable, Sendable {
      /// Read from the file.
      case cached
      /// Computed, and the file written.
      case computed
      /// Computed; the file could not be written (a read-only folder).
      case computedUnsaved
    }

    /// Raised when the file's layout, its values or how the maxima are computed changes
    /// (2: the calibration's model packs its weights in groups of 128, `BertModel.e5WeightGroup`).
    static let formatVersion: UInt32 = 2
    static let magic = Array("ENGSMTH\u{0}".utf8)
    /// How many leading bytes of the model file are hashed into the key.
    static let headerBytes = 4096

    /// The maxima file.
    let url: URL
    /// What a file must start with (magic and key) to be read.
    let prefix: [UInt8]
    /// Floats the file holds: per layer, two products of the hidden width and one of the
    /// feed-forward width.
    let count: Int
    let configuration: BertConfiguration

    /// The cache of `model`'s maxima over `calibration` in `folder`; nil when the model file's
    /// size and modification time cannot be read.
    init?(model: MappedFile, configuration: BertConfiguration, calibration: [[Int32]], folder: URL) {
      guard let attributes = try? FileManager.default.attributesOfItem(atPath: model.path),
        let modified = attributes[.modificationDate] as? Date
      else { return nil }
      let name = URL(fileURLWithPath: model.path).lastPathComponent
      url = folder.appendingPathComponent(name + ".smoothing", isDirectory: false)
      self.configuration = configuration
      count = configuration.layerCount * (2 * configuration.hiddenSize + configuration.intermediateSize)
      var key = ByteWriter()
      key.append(Self.magic)
      key.append(Self.formatVersion)
      key.append(UInt64(model.count))
      key.append(modified.timeIntervalSince1970.bitPattern)
      key.append(
        Self.hash(UnsafeRawBufferPointer(start: model.base, count: min(model.count, Self.headerBytes))))
      for width in [configuration.layerCount, configuration.hiddenSize, configuration.intermediateSize] {
        key.append(UInt64(width))
      }
      var tokens = ByteWriter()
      for sequence in calibration {
        tokens.append(UInt64(sequence.count))
        for id in sequence { tokens.append(UInt32(bitPattern: id)) }
      }
      key.append(tokens.bytes.withUnsafeBytes { Self.hash($0) })
      prefix = key.bytes
    }

    /// The maxima the file holds (maxima[layer][product][channel]), or nil when it is absent,
    /// unreadable, or anything in it does not match.
    func read() -> [[[Float]]]? {
      guard let data = try? Data(contentsOf: url, options: .uncached),
        data.count == prefix.count + 4 * count + 8
      else { return nil }
      return data.withUnsafeBytes { bytes -> [[[Float]]]? in
        guard bytes.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes.prefix(bytes.count - 8))
        guard Self.hash(body) == bytes.loadUnaligned(fromByteOffset: body.count, as: UInt64.self).littleEndian
        else { return nil }
        var offset = prefix.count
        let widths = [configuration.hiddenSize, configuration.hiddenSize, configuration.intermediateSize]
        var maxima: [[[Float]]] = []
        for _ in 0..<configuration.layerCount {
          var layer: [[Float]] = []
          for width in widths {
            var channels = [Float](repeating: 0, count: width)
            for channel in 0..<width {
              let bits = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
              channels[channel] = Float(bitPattern: bits)
              offset += 4
            }
            guard channels.allSatisfy({ $0.isFinite && $0 >= 0 }) else { return nil }
            layer.append(channels)
          }
          maxima.append(layer)
        }
        return maxima
      }
    }

    /// Writes `maxima` through a temporary file in the same folder renamed over `url`;
    /// false (and nothing left behind) when the folder cannot be written.
    func write(_ maxima: [[[Float]]]) -> Bool {
      var file = ByteWriter()
      file.append(prefix)
      for layer in maxima {
        for product in layer {
          for value in product { file.append(value.bitPattern) }
        }
      }
      guard file.bytes.count == prefix.count + 4 * count else { return false }
      file.append(file.bytes.withUnsafeBytes { Self.hash($0) })
      let temporary = url.deletingLastPathComponent().appendingPathComponent(
        "." + url.lastPathComponent + "." + UUID().uuidString + ".tmp", isDirectory: false)
      do {
        try Data(file.bytes).write(to: temporary)
      } catch {
        return false
      }
      guard rename(temporary.path, url.path) == 0 else {
        try? FileManager.default.removeItem(at: temporary)
        return false
      }
      return true
    }

    /// 64-bit FNV-1a of `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
      FNV1a.hash(bytes)
    }
  }

  /// Little-endian bytes appended in order.
  private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func append(_ other: [UInt8]) { bytes += other }

    mutating func append<Value: FixedWidthInteger>(_ value: Value) {
      withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
  }
}
