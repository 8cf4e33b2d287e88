// What `import Engram` gives an application besides the engine, so that it imports nothing
// below it: the shared vocabulary (kinds, timestamps and the date rule, JSON values), the
// embedders with `EmbedderSpec`, the settings and status of the approximate vector tier,
// and the few store types the engine's API passes through unchanged: its two error types
// (SQLite result codes with the path; what the store found wrong), the report of what
// forgetting removed, the agent records (reminders, events and notes; traces; pending calls)
// with their kinds and statuses, routines, and where a memory lives
// (`StoreLocation`: a SQLite path or a PostgreSQL URI) and whose it is (`StoreUser`), and the
// connections many users' engines share (`StoreConnectionPool`: the EngramPostgres product's
// `PostgresConnectionPool`, which that product exports with the PostgreSQL store). Nothing else
// of the store or the vector index is visible to callers.
@_exported import EngramCore
@_exported import EngramEmbeddings

@_exported import struct EngramStore.AgentItem
@_exported import struct EngramStore.AgentItemConditionOutcome
@_exported import enum EngramStore.AgentItemKind
@_exported import struct EngramStore.ForgetReport
@_exported import struct EngramStore.Memory
@_exported import struct EngramStore.PendingCall
@_exported import enum EngramStore.PendingCallStatus
@_exported import struct EngramStore.Routine
@_exported import struct EngramStore.SQLiteError
@_exported import protocol EngramStore.StoreConnectionPool
@_exported import enum EngramStore.StoreError
@_exported import enum EngramStore.StoreLocation
@_exported import enum EngramStore.StoreUser
@_exported import struct EngramStore.Trace
@_exported import enum EngramStore.TraceStatus
@_exported import struct EngramStore.WeeklyActivity
@_exported import struct EngramVectors.ApproximateConfiguration
@_exported import struct EngramVectors.ApproximateIndexStatus
@_exported import enum EngramVectors.BuildPolicy
