import Testing

@testable import EngramStore

@Suite struct FTSTextTests {
  @Test func expandsCJKRunsIntoUnigramsAndBigrams() {
    #expect(
      FTSText.indexText("我周末去攀岩了")
        == "我周末去攀岩了 我 周 末 去 攀 岩 了 我周 周末 末去 去攀 攀岩 岩了")
  }

  @Test func findsALeadByteAtEveryPositionAndAlignment() {
    // The scan reads eight bytes at a time: place one byte at every offset of texts of
    // lengths around the word size, plus non-CJK high bytes (é is C3 A9) that must not count.
    for length in 0...20 {
      for position in 0..<max(1, length) {
        for (byte, expected) in [
          (UInt8(0xE1), true), (UInt8(0xFF), true), (UInt8(0xE0), false), (UInt8(0xC3), false),
        ] {
          var bytes = [UInt8](repeating: 0x61, count: length)
          if length > 0 { bytes[position] = byte }
          let found = bytes.withUnsafeBufferPointer { FTSText.hasCJKLeadByte($0) }
          #expect(found == (length > 0 && expected), "length \(length) position \(position) byte \(byte)")
        }
      }
    }
    #expect(FTSText.indexText(String(repeating: "café ", count: 9)) == String(repeating: "café ", count: 9))
    let mixed = String(repeating: "ab", count: 7) + "我们"
    #expect(FTSText.indexText(mixed) == mixed + " 我 们 我们")
  }

  @Test func leavesOtherTextUnchanged() {
    #expect(FTSText.indexText("Plain English, café 123.") == "Plain English, café 123.")
    #expect(FTSText.indexText("") == "")
  }

  @Test func handlesEachRunSeparately() {
    #expect(FTSText.indexText("我 loves 攀岩。好") == "我 loves 攀岩。好 我 攀 岩 攀岩 好")
  }

  @Test func coversKanaAndHangul() {
    #expect(FTSText.indexText("カタ") == "カタ カ タ カタ")
    #expect(FTSText.indexText("ひら") == "ひら ひ ら ひら")
    #expect(FTSText.indexText("한국") == "한국 한 국 한국")
  }

  @Test func survivesInvalidUTF8() {
    let bytes: [UInt8] = [0xE4, 0xBD, 0xA0, 0xFF, 0xE5, 0xA5, 0xBD, 0xE5, 0xA5]
    var output: [UInt8] = []
    let expanded = bytes.withUnsafeBufferPointer { FTSText.expand($0, into: &output) }
    #expect(expanded)
    #expect(Array(output.prefix(bytes.count)) == bytes)
    // 你 and 好 are separate runs (the 0xFF byte splits them); the truncated tail is skipped.
    #expect(Array(output.dropFirst(bytes.count)) == Array(" 你 好".utf8))
  }

  @Test func sqlFunctionMatchesSwift() throws {
    let connection = try Connection(path: ":memory:")
    let text = "明天下午三点开会 at 3pm"
    let viaSQL = try connection.scalarString("SELECT engram_fts_text(?1)", [.text(text)])
    #expect(viaSQL == FTSText.indexText(text))
    #expect(try connection.scalarString("SELECT engram_fts_text('plain')") == "plain")
    #expect(try connection.scalarString("SELECT engram_fts_text(NULL)") == nil)
  }
}
