import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// `StoreSession.embeddingVectors(owners:)`: what a vector index of int8 codes re-ranks with,
/// read by owner in the session's transaction, in order, one user's rows only, the same
/// vectors `embedding(ownerKind:ownerID:)` decodes (float32 and int8 rows alike)
/// (`StoreChecks`; PostgreSQL's in EngramPostgresTests).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct EmbeddingVectorsTests {
  @Test func sqlite() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("m.sqlite")
    let mine = try StoreUserScopeTests.open(path, user: "alice")
    let theirs = try StoreUserScopeTests.open(path, user: "bob")
    try StoreChecks.embeddingVectorsPerUser(mine, theirs)
  }
}
