import Foundation

/// SplitMix64: a small, fast, seeded generator. The same seed gives the same numbers on
/// every run and machine, so what is drawn from it (k-means seeds, the intent model's
/// training order, test and benchmark data) repeats.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator whose sequence is fixed by `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A standard normal sample (Box-Muller, two uniform draws).
  public mutating func nextGaussian() -> Float {
    let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
    let u2 = Double.random(in: 0..<1, using: &self)
    return Float((-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
  }
}
