import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ChatStreamingTests {
  // MARK: - What is written while a reply streams in

  @Test func piecesAddUpToTheReplyWrittenOnce() async {
    var printer = PartialReplyPrinter(folds: false)
    var written = ""
    for partial in ["", "Hel", "Hello", "Hello", "Hello, wor", "Hello, world"] {
      written += printer.update(partial) ?? ""
    }
    #expect(written == "Hello, world")
    written += printer.finish("Hello, world!\nBye.")
    #expect(written == "Hello, world!\nBye.\n")
    // The next reply starts from nothing.
    #expect(printer.finish("Next.") == "Next.\n")
  }

  @Test func foldedPiecesAddUpToTheFoldedReply() async {
    let reply = "First line.  \n\n  Second line\nthird 世界 🙂"
    var printer = PartialReplyPrinter(folds: true)
    var written = ""
    var prefix = ""
    for character in reply {
      prefix.append(character)
      written += printer.update(prefix) ?? ""
    }
    written += printer.finish(reply)
    #expect(written == ChatRendering.folded(reply) + "\n")
  }

  @Test func aWithdrawnOrRewrittenReplyGoesOnItsOwnLine() async {
    var printer = PartialReplyPrinter(folds: false)
    #expect(printer.update("draft answer") == "draft answer")
    // Withdrawn (the planner asks again), then a different text: nothing more is streamed.
    #expect(printer.update("") == nil)
    #expect(printer.update("clean") == nil)
    #expect(printer.update("clean answer") == nil)
    #expect(printer.finish("clean answer") == "\nclean answer\n")
  }

  @Test func aStoppedTurnsMessageFollowsThePartialLine() async {
    var printer = PartialReplyPrinter(folds: false)
    _ = printer.update("Half an ans")
    #expect(printer.finish("Stopped.") == "\nStopped.\n")
  }

  @Test func aQuestionEndsThePartialLine() async {
    var printer = PartialReplyPrinter(folds: false)
    #expect(printer.interrupt() == "")
    _ = printer.update("checking")
    #expect(printer.interrupt() == "\n")
    #expect(printer.update("checking more") == nil)
    #expect(printer.finish("checking done") == "checking done\n")
  }

  @Test func aCharacterBuiltFromTwoScalarsIsNotMistakenForARewrite() async {
    var printer = PartialReplyPrinter(folds: false)
    #expect(printer.update("cafe") == "cafe")
    // "e" + combining acute accent: one Character, but the scalars continue what was written.
    #expect(printer.update("cafe\u{301}!") == "\u{301}!")
    #expect(printer.finish("cafe\u{301}!") == "\n")
  }
}
