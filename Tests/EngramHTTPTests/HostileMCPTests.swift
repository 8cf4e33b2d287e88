import EngramTestSupport
import Foundation
import Testing

@testable import EngramHTTP

/// An oversized message is skipped whole and answered; the stream stays in step.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileMCPTests {
  func messages(of bytes: [UInt8], maximumLength: Int) async throws -> [LineInput.Message] {
    let pipe = Pipe()
    // More than a pipe buffer: write from another thread while the reader reads.
    let writer = pipe.fileHandleForWriting
    let thread = Thread {
      writer.write(Data(bytes))
      try? writer.close()
    }
    thread.start()
    var result: [LineInput.Message] = []
    for try await message in LineInput.messages(
      fileDescriptor: pipe.fileHandleForReading.fileDescriptor, maximumLength: maximumLength)
    {
      result.append(message)
    }
    return result
  }

  @Test func anOverlongLineIsSkippedAndTheNextLineStillArrives() async throws {
    let long = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
    let input = Array("ok\n".utf8) + long + Array("\r\nnext\n".utf8) + long
    let result = try await messages(of: input, maximumLength: 1000)
    #expect(
      result == [
        .line(Data("ok".utf8)), .tooLong(bytes: 200_001), .line(Data("next".utf8)), .tooLong(bytes: 200_000),
      ])
    // Within one read as well.
    let short = try await messages(of: Array("abcdefghij\nab\n".utf8), maximumLength: 8)
    #expect(short == [.tooLong(bytes: 10), .line(Data("ab".utf8))])
  }

  @Test func transportErrorsReadAsSentences() {
    #expect(
      String(describing: TransportError.lineTooLong(limit: 32 << 20))
        == "a message longer than 32 MiB arrived")
  }
}
