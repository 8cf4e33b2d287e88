/// A plain-text table: aligned columns, the last one trimmed with `…` to fit the terminal.
public struct Table: Sendable {
  /// How a column's cells line up.
  public enum Alignment: Sendable, Hashable {
    /// Text starts at the left edge (text, names).
    case left
    /// Text ends at the right edge (numbers).
    case right
  }

  /// One column: its header and alignment.
  public struct Column: Sendable, Hashable {
    /// The header text.
    public var title: String
    /// The alignment of the header and the cells.
    public var alignment: Alignment

    /// Creates a column.
    public init(_ title: String, alignment: Alignment = .left) {
      self.title = title
      self.alignment = alignment
    }
  }

  /// The columns, left to right.
  public var columns: [Column]
  /// The rows; missing cells are blank and extra cells are ignored.
  public var rows: [[String]]
  /// Spaces between columns.
  public var spacing = 2

  /// Creates a table.
  public init(columns: [Column], rows: [[String]] = []) {
    self.columns = columns
    self.rows = rows
  }

  /// Adds a row.
  public mutating func append(_ row: [String]) {
    rows.append(row)
  }

  /// The table as lines (without newlines), at most `width` columns wide where the earlier
  /// columns leave room; the header is bold when `styled`.
  ///
  /// Control characters in cells (newlines, tabs) become spaces so each row stays one line.
  /// - Complexity: O(cells × cell length).
  public func render(width: Int, showsHeader: Bool = true, styled: Bool = false) -> [String] {
    guard !columns.isEmpty else { return [] }
    let body = rows.map { row in
      columns.indices.map { index in index < row.count ? Self.sanitize(row[index]) : "" }
    }
    let header = columns.map { Self.sanitize($0.title) }
    let allRows = (showsHeader ? [header] : []) + body
    let last = columns.count - 1
    // The last column is cut to what is left of `width`: its cells are measured no further
    // (a long text costs what is shown, not its length).
    var widths = columns.indices.map { index in
      allRows.map {
        index == last ? TextWidth.width(of: $0[index], upTo: max(2, width)) : TextWidth.width(of: $0[index])
      }
      .max() ?? 0
    }
    let before = widths[..<last].reduce(0, +) + spacing * last
    // The last column gets what is left, but never less than one column plus the ellipsis.
    widths[last] = min(widths[last], max(2, width - before))
    let separator = String(repeating: " ", count: spacing)
    return allRows.enumerated().map { rowIndex, row in
      var cells: [String] = []
      for (index, cell) in row.enumerated() {
        let text = index == last ? TextWidth.truncate(cell, toWidth: widths[index]) : cell
        // The last left-aligned cell is not padded: no trailing spaces.
        let padded =
          index == last && columns[index].alignment == .left
          ? text : TextWidth.pad(text, toWidth: widths[index], alignRight: columns[index].alignment == .right)
        cells.append(padded)
      }
      let line = cells.joined(separator: separator)
      if styled && showsHeader && rowIndex == 0 { return TextStyle.bold.apply(to: line, enabled: true) }
      return line
    }
  }

  private static func sanitize(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isControl) else {
      return text
    }
    return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
  }

  /// Whether a scalar is a control character (general category Cc: U+0000–U+001F and
  /// U+007F–U+009F), told by its value (no property lookup per scalar of a long cell).
  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }
}
