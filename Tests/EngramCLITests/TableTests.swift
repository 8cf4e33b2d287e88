import EngramTestSupport
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct TableTests {
  let table = Table(
    columns: [Table.Column("ID", alignment: .right), Table.Column("KIND"), Table.Column("TEXT")],
    rows: [["7", "fact", "likes green tea"], ["123", "preference", "short"]])

  @Test func alignsColumnsWithoutTrailingSpaces() {
    #expect(
      table.render(width: 80) == [
        " ID  KIND        TEXT",
        "  7  fact        likes green tea",
        "123  preference  short",
      ])
  }

  @Test func trimsTheLastColumnToTheWidth() {
    let lines = table.render(width: 24)
    #expect(lines[1] == "  7  fact        likes …")
    #expect(lines.allSatisfy { TextWidth.width(of: $0) <= 24 })
    #expect(lines[2] == "123  preference  short")
  }

  @Test func keepsAtLeastOneCharacterAndTheEllipsisWhenTooNarrow() {
    let lines = table.render(width: 5, showsHeader: false)
    #expect(lines[0] == "  7  fact        l…")
  }

  @Test func measuresWideCharactersAsTwoColumns() {
    let wide = Table(
      columns: [Table.Column("K"), Table.Column("V")], rows: [["名前", "東京都に住んでいる"], ["ab", "x"]])
    let lines = wide.render(width: 14, showsHeader: false)
    // The ellipsis takes one column; a wide character that would overshoot is left out.
    #expect(lines[0] == "名前  東京都…")
    #expect(TextWidth.width(of: lines[0]) == 13)
    #expect(lines[1] == "ab    x")
  }

  @Test func controlCharactersInCellsBecomeSpaces() {
    let messy = Table(columns: [Table.Column("A"), Table.Column("B")], rows: [["x\ny", "a\tb\r\nc"]])
    #expect(messy.render(width: 80, showsHeader: false) == ["x y  a b  c"])
  }

  @Test func missingCellsAreBlankAndHeaderCanBeBold() {
    var sparse = Table(columns: [Table.Column("A"), Table.Column("B", alignment: .right)])
    sparse.append(["only"])
    let lines = sparse.render(width: 80, styled: true)
    #expect(lines[0] == "\u{1B}[1mA     B\u{1B}[0m")
    #expect(lines[1] == "only   ")
    #expect(Table(columns: []).render(width: 80).isEmpty)
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct TextWidthTests {
  @Test(arguments: [
    ("abc", 3), ("日本語", 6), ("한국어", 6), ("ｆｕｌｌ", 8), ("e\u{301}", 1), ("👍", 2), ("❤️", 2), ("", 0),
    ("a\u{200B}b", 2),
  ])
  func measuresDisplayWidth(text: String, width: Int) {
    #expect(TextWidth.width(of: text) == width)
  }

  @Test func truncatesOnCharacterBoundaries() {
    #expect(TextWidth.truncate("hello world", toWidth: 6) == "hello…")
    #expect(TextWidth.truncate("hello", toWidth: 5) == "hello")
    #expect(TextWidth.truncate("日本語テキスト", toWidth: 6) == "日本…")
    #expect(TextWidth.truncate("abc", toWidth: 1) == "…")
    #expect(TextWidth.truncate("abc", toWidth: 0) == "")
  }

  @Test func padsByDisplayWidth() {
    #expect(TextWidth.pad("日本", toWidth: 6) == "日本  ")
    #expect(TextWidth.pad("7", toWidth: 3, alignRight: true) == "  7")
    #expect(TextWidth.pad("toolong", toWidth: 3) == "toolong")
  }
}
