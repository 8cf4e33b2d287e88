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
    var widths = columns.indices.map { index in
      allRows.map { TextWidth.width(of: $0[index]) }.max() ?? 0
    }
    let last = columns.count - 1
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
    guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      return text
    }
    return String(
      String.UnicodeScalarView(
        text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
  }
}
