import EngramTestSupport
import Foundation

/// The shared loopback server, answering `(path, body) -> (status, body)`.
typealias LocalHTTPServer = LoopbackHTTPServer

extension LoopbackHTTPServer {
  convenience init(
    _ respond: @escaping @Sendable (_ path: String, _ body: Data) -> (status: Int, body: String)
  )
    throws
  {
    try self.init { request in
      let (status, body) = respond(request.path, request.body)
      return Response(status: status, body: body)
    }
  }
}
