import Foundation
import Testing

@testable import EngramEmbeddings

@Suite("VectorMath kernels")
struct VectorMathTests {
  @Test("vector exp is within 2 ulp-ish of libm over the softmax range")
  func exponential() {
    var worst: Float = 0
    for step in 0...20_000 {
      let x = -80 + Float(step) * 0.0045
      let relative = abs(VectorMath.exp(x) - Foundation.exp(x)) / Foundation.exp(x)
      worst = max(worst, relative)
    }
    #expect(worst < 4e-7)
  }

  @Test("vector erf is within 5e-7 of libm")
  func errorFunction() {
    var worst: Float = 0
    for step in 0...20_000 {
      let x = -6 + Float(step) * 0.0006
      worst = max(worst, abs(VectorMath.erf(x) - Foundation.erf(x)))
    }
    #expect(worst < 5e-7)
  }

  @Test("GELU and softmax over buffers with vector bodies and scalar tails")
  func buffers() {
    var values: [Float] = (0..<19).map { Float($0) * 0.37 - 3 }
    let expected = values.map { 0.5 * $0 * (1 + Foundation.erf($0 / Float(2).squareRoot())) }
    values.withUnsafeMutableBufferPointer { VectorMath.geluInPlace($0.baseAddress!, count: $0.count) }
    #expect(zip(values, expected).allSatisfy { abs($0 - $1) < 1e-6 })

    var scores: [Float] = (0..<11).map { Float($0 % 4) * 2.5 }
    let total = scores.map { Foundation.exp($0) }.reduce(0, +)
    let reference = scores.map { Foundation.exp($0) / total }
    scores.withUnsafeMutableBufferPointer { VectorMath.softmaxInPlace($0.baseAddress!, count: $0.count) }
    #expect(zip(scores, reference).allSatisfy { abs($0 - $1) < 1e-6 })
  }
}
