import Engram
import EngramCore
import Foundation
import Synchronization

@testable import EngramAgent

/// An in-memory `AgentMemory` recording every call.
final class FakeMemory: AgentMemory {
  struct Stored: Equatable {
    var kind: String
    var title: String
    var date: Date?
    var body: String?
    var condition: StepCondition? = nil
  }

  private struct State {
    var nextID: Int64 = 1
    var memories: [SearchHit] = []
    var stored: [Int64: Stored] = [:]
    var preferences: [String: String] = [:]
    var forgotten: [Int64] = []
    var searches: [String] = []
  }

  private let state = Mutex(State())

  init(memories: [SearchHit] = []) {
    state.withLock {
      $0.memories = memories
      $0.nextID = (memories.map(\.id).max() ?? 0) + 1
    }
  }

  var stored: [Int64: Stored] { state.withLock { $0.stored } }
  var forgotten: [Int64] { state.withLock { $0.forgotten } }
  var memories: [SearchHit] { state.withLock { $0.memories } }
  var searches: [String] { state.withLock { $0.searches } }

  func search(query: String, k: Int) async throws -> [SearchHit] {
    state.withLock { state in
      state.searches.append(query)
      let words = Set(Tokenizer.routing.terms(query))
      return state.memories.filter { !words.isDisjoint(with: Tokenizer.routing.terms($0.text)) }.prefix(k).map
      { $0 }
    }
  }

  func remember(content: String, kind: MemoryKind) async throws -> Int64 {
    state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      state.memories.append(testHit(id: id, text: content, memoryKind: kind))
      return id
    }
  }

  func forget(id: Int64) async throws {
    state.withLock { state in
      state.forgotten.append(id)
      state.memories.removeAll { $0.id == id }
    }
  }

  private func store(
    _ kind: String, _ title: String, _ date: Date?, _ body: String?, condition: StepCondition? = nil
  ) -> Int64 {
    state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      state.stored[id] = Stored(kind: kind, title: title, date: date, body: body, condition: condition)
      return id
    }
  }

  func storeReminder(title: String, date: Date, body: String?, condition: StepCondition?) async throws
    -> Int64
  {
    store("reminder", title, date, body, condition: condition)
  }

  func storeEvent(title: String, date: Date, body: String?) async throws -> Int64 {
    store("event", title, date, body)
  }

  func storeNote(title: String, date: Date?, body: String) async throws -> Int64 {
    store("note", title, date, body)
  }

  func agenda(kind: AgentItemKind, from: Date?, to: Date?) async throws -> [AgentItem] {
    state.withLock { state in
      state.stored.compactMap { id, item -> AgentItem? in
        guard item.kind == kind.rawValue, let date = item.date, from.map({ date >= $0 }) ?? true,
          to.map({ date < $0 }) ?? true
        else { return nil }
        return AgentItem(
          id: id, kind: kind, title: item.title, body: item.body, dueAt: date,
          createdAt: Date(timeIntervalSince1970: 0))
      }.sorted { ($0.dueAt!, $0.id!) < ($1.dueAt!, $1.id!) }
    }
  }

  func updateItem(id: Int64, title: String?, date: Date?) async throws -> AgentItem {
    try state.withLock { state in
      guard var item = state.stored[id], let kind = AgentItemKind(rawValue: item.kind) else {
        throw AgentRecordError.notFound(table: "agent_items", id: id)
      }
      if let title { item.title = title }
      if let date { item.date = date }
      state.stored[id] = item
      return AgentItem(
        id: id, kind: kind, title: item.title, body: item.body, dueAt: item.date,
        createdAt: Date(timeIntervalSince1970: 0))
    }
  }

  func deleteItem(id: Int64) async throws {
    try state.withLock { state in
      guard state.stored.removeValue(forKey: id) != nil else {
        throw AgentRecordError.notFound(table: "agent_items", id: id)
      }
    }
  }

  func preference(key: String) async throws -> String? { state.withLock { $0.preferences[key] } }

  func setPreference(key: String, value: String) async throws {
    state.withLock { $0.preferences[key] = value }
  }
}

enum Zones {
  static let shanghai = TimeZone(identifier: "Asia/Shanghai")!
  static let newYork = TimeZone(identifier: "America/New_York")!
}

/// The instant of a wall-clock time in `zone`.
func wallClock(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, in zone: TimeZone)
  -> Date
{
  var calendar = Calendar(identifier: .gregorian)
  calendar.timeZone = zone
  return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
}

/// A retrieved item as the engine returns one: a memory (a fact unless `memoryKind` says
/// otherwise) said at the fixed clock's instant, 10:00 on 11 June 2025 in Shanghai, by default.
func testHit(
  id: Int64, text: String, kind: ItemKind = .memory, memoryKind: MemoryKind? = nil,
  date: Date = wallClock(2025, 6, 11, 10, in: Zones.shanghai), speaker: String? = nil, cosine: Double? = nil
) -> SearchHit {
  SearchHit(
    kind: kind, id: id, text: text, speaker: speaker, timestamp: date, cosine: cosine,
    memoryKind: kind == .memory ? memoryKind ?? .fact : nil)
}

func context(_ text: String, memory: FakeMemory = FakeMemory(), clock: AgentClock? = nil) -> SkillContext {
  SkillContext(
    userText: text,
    clock: clock ?? .fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai),
    memory: memory)
}
