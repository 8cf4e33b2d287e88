import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The packed float32 form (`PackedFloat32`): every bit back, smaller for embeddings, and
/// damage refused rather than misread.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct PackedFloat32Tests {
  /// A unit vector with Gaussian components, as sentence embeddings look.
  static func gaussianUnitVector(_ dimension: Int, _ random: inout SplitMix64) -> [Float] {
    var vector = (0..<dimension).map { _ in random.nextGaussian() }
    let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
    for index in vector.indices { vector[index] /= norm }
    return vector
  }

  static func roundTrip(_ vector: [Float]) -> (bytes: [UInt8], back: [Float]?) {
    let bytes = vector.withUnsafeBufferPointer { EmbeddingCodec.encodeFloat32($0) }
    let back = bytes.withUnsafeBytes { EmbeddingCodec.decoded($0, dimension: vector.count) }
    return (bytes, back)
  }

  @Test(arguments: [32, 100, 384, 768, 1536])
  func embeddingLikeVectorsComeBackBitForBitInSevenEighthsOfTheBytes(dimension: Int) {
    var random = SplitMix64(seed: UInt64(dimension))
    for _ in 0..<50 {
      let vector = Self.gaussianUnitVector(dimension, &random)
      let packed = vector.withUnsafeBufferPointer { PackedFloat32.pack($0) }
      #expect(packed != nil)
      // 24 bits of sign and mantissa plus about 3 of exponent: under 28 bits a component.
      #expect((packed?.count ?? 4 * dimension) * 8 < 28 * dimension + 8 * PackedFloat32.headerBytes + 8)
      let (bytes, back) = Self.roundTrip(vector)
      #expect(bytes == packed)
      #expect(back?.map(\.bitPattern) == vector.map(\.bitPattern))
    }
  }

  /// Signed zeros, subnormals, the extremes, infinities and NaN payloads: stored packed or
  /// plain, each comes back with the very same bits.
  @Test func everyBitPatternComesBack() {
    let specials: [Float] = [
      0, -0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
      -.greatestFiniteMagnitude, .infinity, -.infinity, Float(bitPattern: 0x7FC0_1234),
      Float(bitPattern: 0xFFA0_0001),
      1, -1, 0.5, 1e-20, -3e-30,
    ]
    var random = SplitMix64(seed: 7)
    for trial in 0..<200 {
      var vector = Self.gaussianUnitVector(64 + trial % 5, &random)
      for _ in 0..<(trial % 9) {
        vector[Int.random(in: vector.indices, using: &random)] = specials.randomElement(using: &random)!
      }
      let (_, back) = Self.roundTrip(vector)
      #expect(back?.map(\.bitPattern) == vector.map(\.bitPattern))
    }
    // Every exponent at once: escapes throughout, and still smaller or stored plain.
    let spread = (0..<256).map { Float(bitPattern: UInt32($0) << 23 | UInt32($0 * 7919) & 0x7F_FFFF) }
    #expect(Self.roundTrip(spread).back?.map(\.bitPattern) == spread.map(\.bitPattern))
    #expect(Self.roundTrip(spread).bytes.count <= 4 * spread.count)
  }

  /// Components far below the largest are escaped (8 raw exponent bits) and come back.
  @Test func exponentsOutsideTheWindowAreEscaped() throws {
    var vector = [Float](repeating: 0.05, count: 200)
    vector[3] = 1e-9
    vector[150] = -2e-12
    vector[199] = 0.9
    let packed = try #require(vector.withUnsafeBufferPointer { PackedFloat32.pack($0) })
    let back = try #require(packed.withUnsafeBytes { EmbeddingCodec.decoded($0, dimension: 200) })
    #expect(back.map(\.bitPattern) == vector.map(\.bitPattern))
  }

  /// Exponent counts in a Fibonacci series give codes longer than the decoder's 9-bit table:
  /// those are decoded by their limits, and come back as well.
  @Test func codesLongerThanTheTableAreDecoded() throws {
    let counts = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144]
    var vector: [Float] = []
    for (distance, count) in counts.enumerated() {
      vector += (0..<count).map {
        Float(sign: $0 % 2 == 0 ? .plus : .minus, exponent: -distance, significand: 1.25)
      }
    }
    let lengths = try #require(
      [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0].indices.map { symbol in
        symbol < counts.count ? counts[symbol] : 0
      }.withUnsafeBufferPointer { PackedFloat32.codeLengths($0) })
    #expect(lengths.max()! > 9)
    #expect(vector.withUnsafeBufferPointer { PackedFloat32.pack($0) } != nil)
    #expect(Self.roundTrip(vector).back?.map(\.bitPattern) == vector.map(\.bitPattern))
  }

  /// One exponent throughout: a one-bit code per component.
  @Test func oneExponentTakesOneBitAComponent() throws {
    let vector: [Float] = (0..<100).map { index in
      let magnitude = Float(1 + Double(index) / 1000)
      return index % 2 == 0 ? magnitude : -magnitude
    }
    let packed = try #require(vector.withUnsafeBufferPointer { PackedFloat32.pack($0) })
    #expect(packed.count == PackedFloat32.headerBytes + 1 + 300 + 13)
    #expect(Self.roundTrip(vector).back?.map(\.bitPattern) == vector.map(\.bitPattern))
  }

  /// Feature-hashing vectors are mostly +0: those components cost a code and no mantissa.
  @Test func sparseVectorsPackSmall() throws {
    var random = SplitMix64(seed: 11)
    for _ in 0..<50 {
      var vector = [Float](repeating: 0, count: 384)
      for _ in 0..<60 {
        vector[Int.random(in: 0..<384, using: &random)] += Float.random(in: -1...1, using: &random)
      }
      vector[5] = -0.0
      let packed = try #require(vector.withUnsafeBufferPointer { PackedFloat32.pack($0) })
      #expect(packed.count < 4 * 384 / 4)
      #expect(Self.roundTrip(vector).back?.map(\.bitPattern) == vector.map(\.bitPattern))
    }
    let zeros = [Float](repeating: 0, count: 384)
    #expect(Self.roundTrip(zeros).bytes.count == PackedFloat32.headerBytes + 1 + 48)
    #expect(Self.roundTrip(zeros).back == zeros)
  }

  /// A packed blob that would be as long as an int8 row (`4 + n`) gets one zero byte more.
  @Test func aPackedBlobIsNeverAsLongAsAnInt8Row() throws {
    // 80 components, 21 of one exponent and 59 of +0: two one-bit codes, so
    // 10 + 1 + 63 + 10 = 84 = 4 + 80 bytes before the extra byte.
    let vector: [Float] = (0..<80).map { $0 < 21 ? Float(1 + Double($0) / 100) : 0 }
    let packed = try #require(vector.withUnsafeBufferPointer { PackedFloat32.pack($0) })
    #expect(packed.count == 85)
    #expect(packed.last == 0)
    #expect(Self.roundTrip(vector).back?.map(\.bitPattern) == vector.map(\.bitPattern))
    #expect(!packed.dropLast().withUnsafeBytes { PackedFloat32.isPackedLength($0.count, dimension: 80) })
  }

  /// A blob's length alone says how it is stored: plain, packed and int8 never share one.
  @Test func lengthsTellTheEncodingsApart() {
    for dimension in 1...4096 {
      #expect(!PackedFloat32.isPackedLength(4 * dimension, dimension: dimension))
      #expect(
        !PackedFloat32.isPackedLength(EmbeddingCodec.int8Length(dimension: dimension), dimension: dimension))
    }
    // Too short to be worth packing: stored plain.
    #expect([Float(0.25)].withUnsafeBufferPointer { PackedFloat32.pack($0) } == nil)
    #expect([Float]().withUnsafeBufferPointer { PackedFloat32.pack($0) } == nil)
  }

  /// Truncated, lengthened, oversubscribed or incomplete codes and random bytes are refused
  /// (or, where the damage only changes mantissa bits, decoded to some vector) and never crash.
  @Test func damagedBlobsAreRefused() throws {
    var random = SplitMix64(seed: 99)
    let vector = Self.gaussianUnitVector(384, &random)
    let packed = try #require(vector.withUnsafeBufferPointer { PackedFloat32.pack($0) })
    func decodes(_ bytes: [UInt8], _ dimension: Int = 384) -> Bool {
      bytes.withUnsafeBytes { EmbeddingCodec.decoded($0, dimension: dimension) } != nil
    }
    #expect(decodes(packed))
    #expect(!decodes(Array(packed.dropLast())))
    #expect(!decodes(packed + [0]))
    #expect(!decodes(packed, 383))
    var oversubscribed = packed
    for byte in 1...9 { oversubscribed[byte] = 0x11 }  // 17 one-bit codes
    #expect(!decodes(oversubscribed))
    var incomplete = packed
    for byte in 1...9 { incomplete[byte] = 0 }
    incomplete[1] = 0x02  // one code of two bits: half the patterns mean nothing
    #expect(!decodes(incomplete))
    // Padding bits set after the last code: refused (the one-exponent vector below leaves
    // 100 one-bit codes, so its last byte holds 4 padding bits).
    var padded = try #require(
      (0..<100).map { Float(1 + Double($0) / 1000) }.withUnsafeBufferPointer { PackedFloat32.pack($0) })
    #expect(decodes(padded, 100))
    padded[padded.count - 1] |= 1
    #expect(!decodes(padded, 100))
    for _ in 0..<2_000 {
      let length = Int.random(in: (3 * 384 + 10)..<(4 * 384), using: &random)
      let noise = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
      _ = decodes(noise)
      var flipped = packed
      flipped[Int.random(in: flipped.indices, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
      _ = decodes(flipped)
    }
  }
}
