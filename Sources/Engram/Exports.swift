// What `import Engram` gives an application besides the engine: the shared vocabulary
// (kinds, timestamps and the date rule, JSON values) and the embedders with `EmbedderSpec`,
// which appear in the engine's API. The store stays behind the engine: its failures
// arrive wrapped in `EngramError`.
@_exported import EngramCore
@_exported import EngramEmbeddings

@_exported import struct EngramVectors.ApproximateConfiguration
@_exported import struct EngramVectors.ApproximateIndexStatus
@_exported import enum EngramStore.AgentItemKind
@_exported import struct EngramStore.ForgetReport
@_exported import enum EngramStore.PendingCallStatus
@_exported import struct EngramStore.SQLiteError
// The store's two error types (and the report of what forgetting removed) pass through the engine unchanged (they carry the SQLite
// result code, the path and what the store found wrong); nothing else of the store is
// visible to callers.
@_exported import enum EngramStore.StoreError
@_exported import enum EngramStore.TraceStatus
@_exported import enum EngramVectors.BuildPolicy
