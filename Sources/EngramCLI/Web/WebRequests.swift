import Engram
import EngramCore
import EngramHTTP
import EngramMCP

// The bodies and query parameters the web API takes (docs/web.md), one type each: every field
// declared once with its default and bounds, decoded through ``Arguments`` (never read by
// string key). A field of the wrong type is a 400 whose sentence names it.

/// `POST /api/chat/send {"text": ...}`.
struct ChatSendBody: Arguments {
  var text: String?

  enum CodingKeys: String, CodingKey { case text }
  static let text = ArgumentField<String?>(CodingKeys.text, "What the user says.")
  static let fields: [any ArgumentFieldDescribing] = [text]

  init(from decoder: any Decoder) throws {
    text = try decoder.container(keyedBy: CodingKeys.self).decode(Self.text)
  }
}

/// `POST /api/memories/ID {"text"?, "kind"?}`.
struct MemoryEditBody: Arguments {
  var text: String?
  var kind: MemoryKind?

  enum CodingKeys: String, CodingKey { case text, kind }
  static let text = ArgumentField<String?>(CodingKeys.text, "The new text (default: unchanged).")
  static let kind = ArgumentField<MemoryKind?>(CodingKeys.kind, "The new kind (default: unchanged).")
  static let fields: [any ArgumentFieldDescribing] = [text, kind]

  init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    text = try values.decode(Self.text)
    kind = try values.decode(Self.kind)
  }
}

/// `POST /api/forget {"id", "kind"?, "dry_run"?}`.
struct ForgetBody: Arguments {
  var id: Int?
  var kind: ItemKind
  var dryRun: Bool

  enum CodingKeys: String, CodingKey {
    case id, kind
    case dryRun = "dry_run"
  }
  static let id = ArgumentField<Int?>(CodingKeys.id, minimum: 1, expected: "a positive integer")
  static let kind = ArgumentField<ItemKind>(
    CodingKeys.kind, default: .memory, expected: "memory, message or summary")
  static let dryRun = ArgumentField<Bool>(CodingKeys.dryRun, "Only say what would go.", default: false)
  static let fields: [any ArgumentFieldDescribing] = [id, kind, dryRun]

  init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    id = try values.decode(Self.id)
    kind = try values.decode(Self.kind)
    dryRun = try values.decode(Self.dryRun)
  }
}

/// `POST /api/agenda/ID/move {"due"}`.
struct MoveBody: Arguments {
  var due: String?

  enum CodingKeys: String, CodingKey { case due }
  static let due = ArgumentField<String?>(
    CodingKeys.due, expected: "an ISO 8601 time (2025-06-17T09:00) or a date")
  static let fields: [any ArgumentFieldDescribing] = [due]

  init(from decoder: any Decoder) throws {
    due = try decoder.container(keyedBy: CodingKeys.self).decode(Self.due)
  }
}

/// `GET /api/search?q=&k=&mode=&kinds=&since=&until=&session=`.
struct SearchQuery: Arguments {
  var q: String?
  var k: Int
  var mode: SearchMode
  var kinds: [ItemKind]
  var since: String?
  var until: String?
  var session: String?

  enum CodingKeys: String, CodingKey { case q, k, mode, kinds, since, until, session }
  static let q = ArgumentField<String?>(CodingKeys.q, "What to look for.")
  static let k = ArgumentField<Int>(CodingKeys.k, default: 20, minimum: 1, maximum: 100, expected: "1 to 100")
  static let mode = ArgumentField<SearchMode>(
    CodingKeys.mode, default: .hybrid, expected: "hybrid, vector or keyword")
  static let kinds = ArgumentField<[ItemKind]>(
    CodingKeys.kinds, "Comma-separated (default all).", default: [],
    expected: "a list of message, memory or summary")
  static let since = ArgumentField<String?>(CodingKeys.since)
  static let until = ArgumentField<String?>(CodingKeys.until)
  static let session = ArgumentField<String?>(CodingKeys.session)
  static let fields: [any ArgumentFieldDescribing] = [q, k, mode, kinds, since, until, session]

  init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    q = try values.decode(Self.q)
    k = try values.decode(Self.k)
    mode = try values.decode(Self.mode)
    kinds = try values.decode(Self.kinds)
    since = try values.decode(Self.since)
    until = try values.decode(Self.until)
    session = try values.decode(Self.session)
  }
}

/// `GET /api/memories?kind=&limit=`.
struct MemoriesQuery: Arguments {
  var kind: MemoryKind?
  var limit: Int

  enum CodingKeys: String, CodingKey { case kind, limit }
  static let kind = ArgumentField<MemoryKind?>(CodingKeys.kind)
  static let limit = ArgumentField<Int>(CodingKeys.limit, "At most 500.", default: 50)
  static let fields: [any ArgumentFieldDescribing] = [kind, limit]

  init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    kind = try values.decode(Self.kind)
    limit = try values.decode(Self.limit)
  }
}

/// `GET /api/agenda?from=&to=`.
struct AgendaQuery: Arguments {
  var from: String?
  var to: String?

  enum CodingKeys: String, CodingKey { case from, to }
  static let from = ArgumentField<String?>(CodingKeys.from, "Default a day ago.")
  static let to = ArgumentField<String?>(CodingKeys.to, "Default 31 days after `from`.")
  static let fields: [any ArgumentFieldDescribing] = [from, to]

  init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    from = try values.decode(Self.from)
    to = try values.decode(Self.to)
  }
}

/// `GET /api/route?text=`.
struct RouteQuery: Arguments {
  var text: String?

  enum CodingKeys: String, CodingKey { case text }
  static let text = ArgumentField<String?>(CodingKeys.text, "A request to route.")
  static let fields: [any ArgumentFieldDescribing] = [text]

  init(from decoder: any Decoder) throws {
    text = try decoder.container(keyedBy: CodingKeys.self).decode(Self.text)
  }
}
