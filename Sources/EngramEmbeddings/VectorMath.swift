/// Vectorized float kernels for the transformer's element-wise steps.
///
/// Written over SIMD8 so that the compiler emits vector code without a vector math library:
/// `exp` by Cody–Waite range reduction and a degree-6 polynomial (Cephes `expf`, about 1 ulp),
/// `erf` by Eigen's rational approximation (absolute error below 5e-7).
enum VectorMath {
  typealias Vector = SIMD8<Float>

  @inline(__always)
  static func load(_ pointer: UnsafePointer<Float>) -> Vector {
    UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self)
  }

  @inline(__always)
  static func store(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: Vector.self)
  }

  /// Lane-wise clamp; the standard library's `clamped` is not inlined into the kernels.
  @inline(__always)
  static func clamp(_ x: Vector, _ lower: Float, _ upper: Float) -> Vector {
    let low = Vector(repeating: lower)
    let high = Vector(repeating: upper)
    return x.replacing(with: low, where: x .< low).replacing(with: high, where: x .> high)
  }

  /// e^x lane-wise; inputs are clamped to the finite float range.
  @inline(__always)
  static func exp(_ input: Vector) -> Vector {
    let x = clamp(input, -87.336_54, 88.722_83)
    // Adding 1.5·2^23 rounds x·log2(e) to the nearest integer and leaves it in the low mantissa bits.
    let magic = Vector(repeating: 12_582_912)
    let shifted = x * Vector(repeating: 1.442_695_04) + magic
    let n = shifted - magic
    let r = x - n * Vector(repeating: 0.693_359_375) + n * Vector(repeating: 2.121_944_4e-4)
    var p = Vector(repeating: 1.987_569_15e-4)
    p = p * r + Vector(repeating: 1.398_199_95e-3)
    p = p * r + Vector(repeating: 8.333_451_9e-3)
    p = p * r + Vector(repeating: 4.166_579_59e-2)
    p = p * r + Vector(repeating: 1.666_666_55e-1)
    p = p * r + Vector(repeating: 5.000_000_12e-1)
    let y = p * r * r + r + Vector(repeating: 1)
    let exponent =
      unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- unsafeBitCast(magic, to: SIMD8<Int32>.self)
    let scale = unsafeBitCast((exponent &+ 127) &<< 23, to: Vector.self)
    return y * scale
  }

  /// erf(x) lane-wise.
  @inline(__always)
  static func erf(_ input: Vector) -> Vector {
    let x = clamp(input, -4, 4)
    let x2 = x * x
    var p = Vector(repeating: -2.726_142_25e-10)
    p = p * x2 + Vector(repeating: 2.770_681_42e-08)
    p = p * x2 + Vector(repeating: -2.101_024_02e-06)
    p = p * x2 + Vector(repeating: -5.692_506_39e-05)
    p = p * x2 + Vector(repeating: -7.349_906_3e-04)
    p = p * x2 + Vector(repeating: -2.954_599_8e-03)
    p = p * x2 + Vector(repeating: -1.609_603_33e-02)
    p = p * x
    var q = Vector(repeating: -1.456_607_18e-05)
    q = q * x2 + Vector(repeating: -2.133_740_55e-04)
    q = q * x2 + Vector(repeating: -1.682_826_97e-03)
    q = q * x2 + Vector(repeating: -7.373_329_17e-03)
    q = q * x2 + Vector(repeating: -1.426_473_9e-02)
    return p / q
  }

  /// Scalar e^x with the same algorithm, for tails shorter than a vector.
  @inline(__always)
  static func exp(_ x: Float) -> Float { exp(Vector(repeating: x))[0] }

  /// Scalar erf with the same algorithm.
  @inline(__always)
  static func erf(_ x: Float) -> Float { erf(Vector(repeating: x))[0] }

  /// x ← 0.5·x·(1 + erf(x/√2)), the exact GELU of BERT.
  static func geluInPlace(_ values: UnsafeMutablePointer<Float>, count: Int) {
    let half = Vector(repeating: 0.5)
    let one = Vector(repeating: 1)
    let inverseRoot2 = Vector(repeating: 0.707_106_781_186_547_5)
    var index = 0
    while index + 8 <= count {
      let x = load(values + index)
      store(half * x * (one + erf(x * inverseRoot2)), values + index)
      index += 8
    }
    while index < count {
      let x = values[index]
      values[index] = 0.5 * x * (1 + erf(x * 0.707_106_781_186_547_5))
      index += 1
    }
  }

  /// Softmax of `count` values in place: subtract the maximum, exponentiate, divide by the sum.
  static func softmaxInPlace(_ values: UnsafeMutablePointer<Float>, count: Int) {
    var maximum = -Float.infinity
    for index in 0..<count { maximum = max(maximum, values[index]) }
    let shift = Vector(repeating: maximum)
    var sums = Vector.zero
    var index = 0
    while index + 8 <= count {
      let e = exp(load(values + index) - shift)
      sums += e
      store(e, values + index)
      index += 8
    }
    var sum = sums.sum()
    while index < count {
      let e = exp(values[index] - maximum)
      values[index] = e
      sum += e
      index += 1
    }
    let inverse = 1 / sum
    for index in 0..<count { values[index] *= inverse }
  }

  /// rows × width: `output[r] = LayerNorm(a[r] + b[r]) · gamma + beta`; `output` may alias `a` or `b`.
  static func addLayerNorm(
    _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>?, into output: UnsafeMutablePointer<Float>,
    rows: Int, width: Int, gamma: UnsafePointer<Float>, beta: UnsafePointer<Float>, epsilon: Float
  ) {
    let inverseWidth = 1 / Float(width)
    for row in 0..<rows {
      let x = output + row * width
      let left = a + row * width
      if let b {
        let right = b + row * width
        for index in 0..<width { x[index] = left[index] + right[index] }
      } else if UnsafePointer(x) != left {
        x.update(from: left, count: width)
      }
      var sum: Float = 0
      for index in 0..<width { sum += x[index] }
      let mean = sum * inverseWidth
      var squares: Float = 0
      for index in 0..<width {
        let d = x[index] - mean
        squares += d * d
      }
      let scale = 1 / (squares * inverseWidth + epsilon).squareRoot()
      for index in 0..<width { x[index] = (x[index] - mean) * scale * gamma[index] + beta[index] }
    }
  }
}
