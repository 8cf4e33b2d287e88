/// A lossless, smaller byte form of a float32 vector: every bit of every component comes
/// back, NaN payloads, signed zeros and subnormals included.
///
/// The 23 mantissa bits and the sign of a component look random and are kept as they are
/// (3 bytes); its 8 exponent bits are not: the components of an embedding span a few
/// octaves, so the exponents are entropy coded with a Huffman code built for the vector.
/// For sentence embeddings that is about 2.7 bits instead of 8, and a 384-float vector takes
/// about 1,290 bytes instead of 1,536. A component that is exactly +0 is a symbol of its
/// own and stores no mantissa, so sparse vectors (feature hashing) shrink much further.
///
/// Layout (`n` components, `m` of them other than +0):
/// - byte 0: `top`, the largest biased exponent in the vector;
/// - bytes 1...9: 18 code lengths, 4 bits each, low nibble first (0: symbol unused). Symbol
///   `s < 16` is the exponent `top - s`; symbol 16 is an escape, followed in the bit
///   stream by the exponent's 8 bits; symbol 17 is +0;
/// - `m` as a LEB128 varint;
/// - `3 m` bytes: per component other than +0, `sign << 23 | mantissa`, little-endian;
/// - the code bits, most significant bit first, zero-padded to a whole byte; one more zero
///   byte when the blob would otherwise be `4 + n` bytes long.
///
/// The codes are canonical (by length, then symbol), so the lengths alone define them.
/// `pack` returns nil when this form would not be smaller than the plain `4 n` bytes, or
/// when a code would need more than 15 bits: such vectors are stored plain. A packed blob is
/// shorter than `4 n` bytes and never `4 + n` long, so its length alone tells it from the
/// plain form (`4 n`) and from int8 codes (`4 + n`).
public enum PackedFloat32 {
  /// Bytes before the count of mantissas.
  static let headerBytes = 10
  /// Exponents coded by distance below the largest; farther ones are escaped.
  static let window = 16
  /// The symbol of an escaped exponent.
  static let escape = window
  /// The symbol of +0.
  static let zero = window + 1
  /// The window's symbols, the escape and +0.
  static let symbols = window + 2
  /// The longest code a 4-bit length can describe.
  static let maximumCodeLength = 15
  /// The shortest packed blob: header, a one-byte count and one byte of codes.
  static let minimumLength = headerBytes + 2

  /// Whether `length` bytes can be a packed vector of `dimension` components.
  public static func isPackedLength(_ length: Int, dimension: Int) -> Bool {
    dimension > 0 && length >= minimumLength && length < 4 * dimension && length != 4 + dimension
  }

  /// The packed bytes of `vector`, or nil when they would not be smaller than plain float32.
  public static func pack(_ vector: UnsafeBufferPointer<Float>) -> [UInt8]? {
    let count = vector.count
    guard count > 0 else { return nil }
    var top: UInt32 = 0
    for value in vector { top = max(top, (value.bitPattern >> 23) & 0xFF) }
    var frequencies = [Int](repeating: 0, count: symbols)
    frequencies.withUnsafeMutableBufferPointer { counts in
      for value in vector { counts[symbol(of: value, top: top)] += 1 }
    }
    guard let lengths = frequencies.withUnsafeBufferPointer({ codeLengths($0) }) else { return nil }
    var bits = 0
    for symbol in 0..<symbols { bits += frequencies[symbol] * Int(lengths[symbol]) }
    bits += frequencies[escape] * 8
    let mantissas = count - frequencies[zero]
    let countBytes = varintLength(mantissas)
    var total = headerBytes + countBytes + 3 * mantissas + (bits + 7) / 8
    if total == 4 + count { total += 1 }
    guard total < 4 * count else { return nil }
    let codes = canonicalCodes(lengths)

    return [UInt8](unsafeUninitializedCapacity: total) { bytes, initialized in
      bytes.initialize(repeating: 0)
      bytes[0] = UInt8(top)
      for symbol in 0..<symbols {
        bytes[1 + symbol / 2] |= lengths[symbol] << (symbol % 2 == 0 ? 0 : 4)
      }
      var position = headerBytes
      var remaining = mantissas
      repeat {
        bytes[position] = UInt8(remaining & 0x7F) | (remaining > 0x7F ? 0x80 : 0)
        remaining >>= 7
        position += 1
      } while remaining > 0
      for value in vector where value.bitPattern != 0 {
        let pattern = value.bitPattern
        let low = (pattern >> 31) << 23 | (pattern & 0x7F_FFFF)
        bytes[position] = UInt8(truncatingIfNeeded: low)
        bytes[position + 1] = UInt8(truncatingIfNeeded: low >> 8)
        bytes[position + 2] = UInt8(truncatingIfNeeded: low >> 16)
        position += 3
      }
      // Codes gather in a 64-bit accumulator, most significant first, and leave a byte at
      // a time.
      var accumulator: UInt64 = 0
      var pending = 0
      for value in vector {
        let symbol = symbol(of: value, top: top)
        var code = UInt64(codes[symbol])
        var length = Int(lengths[symbol])
        if symbol == escape {
          code = code << 8 | UInt64((value.bitPattern >> 23) & 0xFF)
          length += 8
        }
        accumulator = accumulator << UInt64(length) | code
        pending += length
        while pending >= 8 {
          pending -= 8
          bytes[position] = UInt8(truncatingIfNeeded: accumulator >> UInt64(pending))
          position += 1
        }
      }
      if pending > 0 { bytes[position] = UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pending)) }
      initialized = total
    }
  }

  /// Unpacks `blob` into `output[0..<dimension]`. Returns false, leaving `output` undefined,
  /// when `blob` is not a well-formed packed vector of `dimension` components.
  public static func unpack(
    _ blob: UnsafeRawBufferPointer, dimension: Int, into output: UnsafeMutableBufferPointer<Float>
  ) -> Bool {
    guard isPackedLength(blob.count, dimension: dimension), output.count >= dimension,
      let base = blob.baseAddress, let target = output.baseAddress
    else { return false }
    let top = UInt32(blob[0])
    var lengths = [UInt8](repeating: 0, count: symbols)
    for symbol in 0..<symbols {
      lengths[symbol] = (blob[1 + symbol / 2] >> (symbol % 2 == 0 ? 0 : 4)) & 0x0F
    }
    // The count of mantissas: at most `dimension`, in at most 3 bytes.
    var mantissaCount = 0
    var position = headerBytes
    var shift = 0
    while true {
      guard position < blob.count, shift <= 14 else { return false }
      let byte = Int(blob[position])
      mantissaCount |= (byte & 0x7F) << shift
      position += 1
      shift += 7
      if byte & 0x80 == 0 { break }
    }
    let streamStart = position + 3 * mantissaCount
    guard mantissaCount <= dimension, streamStart <= blob.count else { return false }
    guard let decoder = CanonicalDecoder(lengths: lengths) else { return false }
    return decoder.withTable { table, tableBits in
      var reader = BitReader(bytes: blob, start: streamStart)
      var mantissas = base.advanced(by: position).assumingMemoryBound(to: UInt8.self)
      let mantissaEnd = base.advanced(by: streamStart).assumingMemoryBound(to: UInt8.self)
      for index in 0..<dimension {
        // Most codes are found by the table; longer ones by the limits.
        let entry = table[Int(reader.peek(tableBits))]
        var symbol: Int
        if entry != 0 {
          let length = Int(entry & 0x0F)
          guard reader.available >= length else { return false }
          reader.skip(length)
          symbol = Int(entry >> 4)
        } else {
          guard let long = decoder.decode(&reader) else { return false }
          symbol = long
        }
        if symbol == zero {
          target[index] = 0
          continue
        }
        let exponent: UInt32
        if symbol == escape {
          guard let raw = reader.take(8) else { return false }
          exponent = UInt32(raw)
        } else {
          guard UInt32(symbol) <= top else { return false }
          exponent = top - UInt32(symbol)
        }
        guard mantissas < mantissaEnd else { return false }
        let low = UInt32(mantissas[0]) | UInt32(mantissas[1]) << 8 | UInt32(mantissas[2]) << 16
        mantissas += 3
        target[index] = Float(bitPattern: (low >> 23) << 31 | exponent << 23 | (low & 0x7F_FFFF))
      }
      // Every mantissa used, and only zero padding after the last code (one whole byte more
      // where the blob would have been as long as an int8 row).
      guard mantissas == mantissaEnd else { return false }
      return reader.consumedAllButPadding(extraByte: blob.count == 5 + dimension)
    }
  }

  /// The symbol of `value`: +0, its exponent's distance below `top`, or the escape.
  @inline(__always)
  static func symbol(of value: Float, top: UInt32) -> Int {
    if value.bitPattern == 0 { return zero }
    let distance = Int(top - ((value.bitPattern >> 23) & 0xFF))
    return distance < window ? distance : escape
  }

  /// Bytes of `value` as a LEB128 varint.
  static func varintLength(_ value: Int) -> Int {
    var length = 1
    var rest = value >> 7
    while rest > 0 {
      length += 1
      rest >>= 7
    }
    return length
  }

  /// Huffman code lengths for `frequencies` (0 for unused symbols; a lone symbol gets 1),
  /// or nil when one would exceed `maximumCodeLength`.
  static func codeLengths(_ frequencies: UnsafeBufferPointer<Int>) -> [UInt8]? {
    let count = frequencies.count
    var lengths = [UInt8](repeating: 0, count: count)
    // Nodes 0..<count are the symbols, later ones the merges; a node's parent is recorded,
    // and a leaf's code length is its depth.
    var weight = [Int](repeating: 0, count: 2 * count)
    var parent = [Int](repeating: -1, count: 2 * count)
    var alive = [Bool](repeating: false, count: 2 * count)
    var nodes = count
    var used = 0
    for symbol in 0..<count where frequencies[symbol] > 0 {
      weight[symbol] = frequencies[symbol]
      alive[symbol] = true
      used += 1
    }
    if used == 1 {
      for symbol in 0..<count where alive[symbol] { lengths[symbol] = 1 }
      return lengths
    }
    for _ in 0..<max(used - 1, 0) {
      // The two lightest live nodes merge (ties by index: deterministic).
      var first = -1
      var second = -1
      for node in 0..<nodes where alive[node] {
        if first < 0 || weight[node] < weight[first] {
          second = first
          first = node
        } else if second < 0 || weight[node] < weight[second] {
          second = node
        }
      }
      alive[first] = false
      alive[second] = false
      weight[nodes] = weight[first] + weight[second]
      alive[nodes] = true
      parent[first] = nodes
      parent[second] = nodes
      nodes += 1
    }
    for symbol in 0..<count where frequencies[symbol] > 0 {
      var depth = 0
      var node = symbol
      while parent[node] >= 0 {
        node = parent[node]
        depth += 1
      }
      guard depth <= maximumCodeLength else { return nil }
      lengths[symbol] = UInt8(depth)
    }
    return lengths
  }

  /// The canonical codes of `lengths`: by length, then symbol, counting up.
  static func canonicalCodes(_ lengths: [UInt8]) -> [UInt16] {
    var codes = [UInt16](repeating: 0, count: lengths.count)
    var code = 0
    for length in 1...maximumCodeLength {
      for symbol in lengths.indices where Int(lengths[symbol]) == length {
        codes[symbol] = UInt16(code)
        code += 1
      }
      code <<= 1
    }
    return codes
  }

  /// Reads bits most significant first through a 64-bit window; never past the end.
  struct BitReader {
    let bytes: UnsafeRawBufferPointer
    /// The next byte to load into the window.
    var next: Int
    /// Unread bits, aligned to the most significant end.
    var window: UInt64 = 0
    var available = 0

    init(bytes: UnsafeRawBufferPointer, start: Int) {
      self.bytes = bytes
      next = start
    }

    /// Fills the window with whole bytes while they fit.
    @inline(__always)
    mutating func refill() {
      while available <= 56 && next < bytes.count {
        window |= UInt64(bytes[next]) << UInt64(56 - available)
        next += 1
        available += 8
      }
    }

    /// The next `count` (1...32) bits without consuming them, zeros past the end.
    @inline(__always)
    mutating func peek(_ count: Int) -> UInt64 {
      if available < count { refill() }
      return window >> UInt64(64 - count)
    }

    @inline(__always)
    mutating func skip(_ count: Int) {
      window <<= UInt64(count)
      available -= count
    }

    /// The next `count` bits, or nil when fewer are left.
    mutating func take(_ count: Int) -> UInt64? {
      let value = peek(count)
      guard available >= count else { return nil }
      skip(count)
      return value
    }

    /// Whether fewer than 8 bits are left (16 with `extraByte`) and all of them are 0.
    mutating func consumedAllButPadding(extraByte: Bool = false) -> Bool {
      refill()
      return next == bytes.count && available < (extraByte ? 16 : 8)
        && (available == 0 || window >> UInt64(64 - available) == 0)
    }
  }

  /// Decodes canonical codes by their left-justified value: the codes of each length are
  /// consecutive, so the next `maximumCodeLength` bits fall below the limit of exactly one
  /// shortest length, and their offset from its first code picks the symbol.
  struct CanonicalDecoder {
    /// Per length: one past its last code, left-justified to `maximumCodeLength` bits.
    var limits = [UInt32](repeating: 0, count: PackedFloat32.maximumCodeLength + 1)
    /// Per length: its first code.
    var firsts = [UInt32](repeating: 0, count: PackedFloat32.maximumCodeLength + 1)
    /// Per length: the index in `sorted` of its first symbol.
    var offsets = [Int](repeating: 0, count: PackedFloat32.maximumCodeLength + 1)
    /// Symbols in canonical order.
    var sorted: [UInt8] = []
    /// Per length: how many codes.
    var counts = [Int](repeating: 0, count: PackedFloat32.maximumCodeLength + 1)
    var shortest = PackedFloat32.maximumCodeLength
    var longest = 0

    /// Nil unless the lengths form a complete prefix code (or a single one-bit code).
    init?(lengths: [UInt8]) {
      let maximum = PackedFloat32.maximumCodeLength
      for length in lengths where length > 0 {
        counts[Int(length)] += 1
        shortest = min(shortest, Int(length))
        longest = max(longest, Int(length))
      }
      guard longest > 0 else { return nil }
      if counts.reduce(0, +) == 1 {
        guard counts[1] == 1 else { return nil }
      } else {
        // Kraft: a complete code leaves no unused pattern (and none is oversubscribed).
        var left = 1
        for length in 1...maximum {
          left = left * 2 - counts[length]
          guard left >= 0 else { return nil }
        }
        guard left == 0 else { return nil }
      }
      sorted.reserveCapacity(lengths.count)
      var code: UInt32 = 0
      for length in 1...maximum {
        offsets[length] = sorted.count
        firsts[length] = code
        for symbol in lengths.indices where Int(lengths[symbol]) == length { sorted.append(UInt8(symbol)) }
        code += UInt32(counts[length])
        limits[length] = code << UInt32(maximum - length)
        code <<= 1
      }
    }

    /// Calls `body` with a lookup table indexed by the next `bits` bits (at most 9): each
    /// entry is `symbol << 4 | length` for codes of up to `bits` bits, 0 where a longer
    /// code starts (decode those with `decode`).
    func withTable<R>(_ body: (UnsafePointer<UInt16>, Int) throws -> R) rethrows -> R {
      let bits = min(longest, 9)
      return try withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 1 << bits) { table in
        table.initialize(repeating: 0)
        var code = 0
        for length in 1...bits {
          for symbol in sorted[offsets[length]..<(offsets[length] + counts[length])] {
            let start = code << (bits - length)
            let entry = UInt16(symbol) << 4 | UInt16(length)
            for index in start..<(start + (1 << (bits - length))) { table[index] = entry }
            code += 1
          }
          code <<= 1
        }
        return try body(UnsafePointer(table.baseAddress!), bits)
      }
    }

    @inline(__always)
    func decode(_ reader: inout BitReader) -> Int? {
      let maximum = PackedFloat32.maximumCodeLength
      let value = UInt32(truncatingIfNeeded: reader.peek(maximum))
      var length = shortest
      while length <= longest {
        if value < limits[length] {
          guard reader.available >= length else { return nil }
          reader.skip(length)
          return Int(sorted[offsets[length] + Int((value >> UInt32(maximum - length)) - firsts[length])])
        }
        length += 1
      }
      return nil
    }
  }
}
