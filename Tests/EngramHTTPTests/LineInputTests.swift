import EngramTestSupport
import Foundation
import Testing

@testable import EngramHTTP

@Suite(.timeLimit(.minutes(5)), .watchdog) struct LineInputTests {
  func lines(of bytes: [UInt8], maximumLength: Int = LineInput.maximumLineLength) async throws -> [String] {
    let pipe = Pipe()
    pipe.fileHandleForWriting.write(Data(bytes))
    try pipe.fileHandleForWriting.close()
    var result: [String] = []
    for try await line in LineInput.lines(
      fileDescriptor: pipe.fileHandleForReading.fileDescriptor, maximumLength: maximumLength)
    {
      result.append(String(decoding: line, as: UTF8.self))
    }
    return result
  }

  @Test func splitsOnNewlinesAndStripsCarriageReturns() async throws {
    let result = try await lines(of: Array("one\r\ntwo\n\nthree".utf8))
    #expect(result == ["one", "two", "", "three"])
  }

  @Test func endsWithoutLinesOnEmptyInput() async throws {
    #expect(try await lines(of: []).isEmpty)
  }

  @Test func rejectsOverlongLines() async throws {
    await #expect(throws: TransportError.lineTooLong(limit: 8)) {
      _ = try await lines(of: Array(repeating: UInt8(ascii: "x"), count: 100), maximumLength: 8)
    }
  }

  @Test func sinkWritesOneLinePerMessage() throws {
    let pipe = Pipe()
    let sink = FileDescriptorSink(fileDescriptor: pipe.fileHandleForWriting.fileDescriptor)
    try sink.send(Data(#"{"a":1}"#.utf8))
    try sink.send(Data("{}".utf8))
    try pipe.fileHandleForWriting.close()
    let written = pipe.fileHandleForReading.readDataToEndOfFile()
    #expect(String(decoding: written, as: UTF8.self) == "{\"a\":1}\n{}\n")
  }
}
