import Engram
import EngramCore
import EngramHTTP

// The arguments of each MCP tool, one type per tool. Each field is declared once (its key,
// what it is for, its default, its bounds); the tool's input schema is built from those
// declarations and `init(from:)` reads each through them, so a default or a bound lives in
// exactly one place. The names are the contract (docs/mcp.md, CONTRACTS.md).

// The engine's enumerations as arguments, here once for the tools and the web API.
extension SearchMode: ArgumentEnum {}
extension ItemKind: ArgumentEnum {}
extension MemoryKind: ArgumentEnum {}

/// `memory_search {query, k?, mode?, filters?}`.
public struct SearchArguments: Arguments, Equatable {
  public var query: String
  public var k: Int
  public var mode: SearchMode
  public var filters: SearchFilterArguments?

  enum CodingKeys: String, CodingKey { case query, k, mode, filters }
  static let query = ArgumentField<String>(CodingKeys.query, "What to look for.", minLength: 1)
  static let k = ArgumentField<Int>(CodingKeys.k, "How many hits.", default: 10, minimum: 1, maximum: 100)
  static let mode = ArgumentField<SearchMode>(CodingKeys.mode, "Ranking.", default: .hybrid)
  static let filters = ArgumentField<SearchFilterArguments?>(CodingKeys.filters, "Which items to search.")
  public static let fields: [any ArgumentFieldDescribing] = [query, k, mode, filters]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    query = try values.decode(Self.query)
    k = try values.decode(Self.k)
    mode = try values.decode(Self.mode)
    filters = try values.decode(Self.filters)
  }
}

/// `memory_search`'s `filters`.
public struct SearchFilterArguments: Arguments, Equatable {
  public var kinds: [ItemKind]?
  public var session: String?
  public var since: String?
  public var until: String?

  enum CodingKeys: String, CodingKey { case kinds, session, since, until }
  static let kinds = ArgumentField<[ItemKind]?>(CodingKeys.kinds, "Which kinds of item (default all).")
  static let session = ArgumentField<String?>(CodingKeys.session, "A session name or id.")
  static let since = ArgumentField<String?>(CodingKeys.since, "YYYY-MM-DD or ISO 8601; items at or after it.")
  static let until = ArgumentField<String?>(
    CodingKeys.until, "YYYY-MM-DD (whole day) or ISO 8601; items up to it.")
  public static let fields: [any ArgumentFieldDescribing] = [kinds, session, since, until]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    kinds = try values.decode(Self.kinds)
    session = try values.decode(Self.session)
    since = try values.decode(Self.since)
    until = try values.decode(Self.until)
  }
}

/// The kinds of memory `memory_remember` stores (not `summary`: compaction writes those).
public enum RememberKind: String, ArgumentEnum {
  case fact, preference, note, event

  /// The stored kind.
  public var memoryKind: MemoryKind {
    switch self {
    case .fact: return .fact
    case .preference: return .preference
    case .note: return .note
    case .event: return .event
    }
  }
}

/// `memory_remember {content, kind?, importance?}`.
public struct RememberArguments: Arguments, Equatable {
  public var content: String
  public var kind: RememberKind
  public var importance: Double

  enum CodingKeys: String, CodingKey { case content, kind, importance }
  static let content = ArgumentField<String>(
    CodingKeys.content, "The memory, one self-contained sentence.", minLength: 1)
  static let kind = ArgumentField<RememberKind>(CodingKeys.kind, default: .fact)
  static let importance = ArgumentField<Double>(CodingKeys.importance, default: 0.5, minimum: 0, maximum: 1)
  public static let fields: [any ArgumentFieldDescribing] = [content, kind, importance]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    content = try values.decode(Self.content)
    kind = try values.decode(Self.kind)
    importance = try values.decode(Self.importance)
  }
}

/// `memory_forget {id}`.
public struct ForgetArguments: Arguments, Equatable {
  public var id: Int

  enum CodingKeys: String, CodingKey { case id }
  static let id = ArgumentField<Int>(CodingKeys.id, "The memory's id.", minimum: 1)
  public static let fields: [any ArgumentFieldDescribing] = [id]

  public init(from decoder: any Decoder) throws {
    id = try decoder.container(keyedBy: CodingKeys.self).decode(Self.id)
  }
}

/// `memory_context {query, budget?}`.
public struct ContextArguments: Arguments, Equatable {
  public var query: String
  public var budget: Int

  enum CodingKeys: String, CodingKey { case query, budget }
  static let query = ArgumentField<String>(CodingKeys.query, "The user's message.", minLength: 1)
  static let budget = ArgumentField<Int>(
    CodingKeys.budget, "Token budget.", default: 1000, minimum: 50, maximum: 100_000)
  public static let fields: [any ArgumentFieldDescribing] = [query, budget]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    query = try values.decode(Self.query)
    budget = try values.decode(Self.budget)
  }
}

/// Who said a turn `conversation_append` records.
public enum TurnRole: String, ArgumentEnum {
  case user, assistant, system, tool
}

/// `conversation_append {role, content, session?}`.
public struct AppendArguments: Arguments, Equatable {
  public var role: TurnRole
  public var content: String
  public var session: String?

  enum CodingKeys: String, CodingKey { case role, content, session }
  static let role = ArgumentField<TurnRole>(CodingKeys.role)
  static let content = ArgumentField<String>(CodingKeys.content, minLength: 1)
  static let session = ArgumentField<String?>(
    CodingKeys.session, "A session name; created when new.", minLength: 1)
  public static let fields: [any ArgumentFieldDescribing] = [role, content, session]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    role = try values.decode(Self.role)
    content = try values.decode(Self.content)
    session = try values.decode(Self.session)
  }
}

/// The arguments of a tool that takes none (`memory_stats {}`, `routine_list {}`).
public struct NoArguments: Arguments, Equatable {
  public static let fields: [any ArgumentFieldDescribing] = []
  public init() {}
  public init(from decoder: any Decoder) throws {}
}

/// The kinds of item `memory_agenda` lists.
public enum AgendaKind: String, ArgumentEnum {
  case reminder, event

  /// The stored kind.
  public var itemKind: AgentItemKind { self == .reminder ? .reminder : .event }
}

/// `memory_agenda {from?, to?, kinds?, limit?}`.
public struct AgendaArguments: Arguments, Equatable {
  public var from: String?
  public var to: String?
  public var kinds: [AgendaKind]
  public var limit: Int

  enum CodingKeys: String, CodingKey { case from, to, kinds, limit }
  static let from = ArgumentField<String?>(
    CodingKeys.from, "YYYY-MM-DD or ISO 8601; items due at or after it (default now).")
  static let to = ArgumentField<String?>(
    CodingKeys.to, "YYYY-MM-DD (whole day) or ISO 8601; items due before its end.")
  static let kinds = ArgumentField<[AgendaKind]>(
    CodingKeys.kinds, "Which kinds.", default: AgendaKind.allCases)
  static let limit = ArgumentField<Int>(
    CodingKeys.limit, "At most this many.", default: 100, minimum: 1, maximum: 500)
  public static let fields: [any ArgumentFieldDescribing] = [from, to, kinds, limit]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    from = try values.decode(Self.from)
    to = try values.decode(Self.to)
    kinds = try values.decode(Self.kinds)
    limit = try values.decode(Self.limit)
  }
}

/// `reminders_deliver {limit?}`.
public struct DeliverArguments: Arguments, Equatable {
  public var limit: Int

  enum CodingKeys: String, CodingKey { case limit }
  static let limit = ArgumentField<Int>(
    CodingKeys.limit, "At most this many.", default: 100, minimum: 1, maximum: 1000)
  public static let fields: [any ArgumentFieldDescribing] = [limit]

  public init(from decoder: any Decoder) throws {
    limit = try decoder.container(keyedBy: CodingKeys.self).decode(Self.limit)
  }
}

/// `routine_run {name, confirm?}`.
public struct RoutineRunArguments: Arguments, Equatable {
  public var name: String
  public var confirm: String?

  enum CodingKeys: String, CodingKey { case name, confirm }
  static let name = ArgumentField<String>(
    CodingKeys.name, "The routine's name, as routine_list shows it.", minLength: 1)
  static let confirm = ArgumentField<String?>(
    CodingKeys.confirm,
    "The execution id a run waiting for confirmation returned: runs its steps that change something.")
  public static let fields: [any ArgumentFieldDescribing] = [name, confirm]

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    name = try values.decode(Self.name)
    confirm = try values.decode(Self.confirm)
  }
}
