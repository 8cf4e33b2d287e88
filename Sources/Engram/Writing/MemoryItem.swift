import EngramStore

/// A memory as the engine returns it: the store's record (`memories`), used as it is.
public typealias MemoryItem = Memory
