import Engram
import Foundation

/// How commands show search hits, stats and dates (shared by `query`, `forget`, `demo`).
enum HitRendering {
  /// `2024-05-01 14:03` in the user's time zone: the zone `--since` and `--until` read
  /// dates in, so a day typed and a day shown are the same day.
  static func shortDate(_ date: Date, timeZone: TimeZone = .current) -> String {
    DateParser.display(date, timeZone: timeZone)
  }

  /// The kind column: `memory`, `summary`, or the speaker of a turn (`turn:Alice`).
  static func kindLabel(_ hit: SearchHit) -> String {
    switch hit.kind {
    case .message: return hit.speaker.map { "turn:\($0)" } ?? "turn"
    case .memory, .summary: return hit.kind.rawValue
    }
  }

  /// The hits as table lines fitted to `width`.
  static func table(_ hits: [SearchHit], width: Int, styled: Bool) -> [String] {
    var table = Table(columns: [
      .init("#", alignment: .right), .init("score", alignment: .right), .init("date"), .init("kind"),
      .init("id", alignment: .right), .init("text"),
    ])
    for (rank, hit) in hits.enumerated() {
      table.append([
        String(rank + 1), String(format: "%.3f", hit.score), shortDate(hit.timestamp), kindLabel(hit),
        String(hit.id), hit.text,
      ])
    }
    return table.render(width: width, styled: styled)
  }

  /// `12.3 MB`, `840 KB`, `512 B`.
  static func bytes(_ count: Int) -> String {
    let value = Double(count)
    if value >= 1_048_576 { return String(format: "%.1f MB", value / 1_048_576) }
    if value >= 1_024 { return String(format: "%.1f KB", value / 1_024) }
    return "\(count) B"
  }
}
