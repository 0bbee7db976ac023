import Export
import Logging
import NIOCore
import NIOHTTP1

/// A response body written in parts as it is made: an export of a 4-hour session is hundreds of
/// megabytes, which the response must not hold. `produce` writes to the output it is given;
/// each part is sent (and flushed) before the next is made, so a slow client slows the export
/// instead of filling memory.
public struct AdminBodyStream: Sendable, Equatable {
    /// Names the stream in logs and comparisons (`export demo-user___1718625600 csv`).
    public let label: String
    public let produce: @Sendable (any ExportOutput) async throws -> Void

    public init(label: String, produce: @escaping @Sendable (any ExportOutput) async throws -> Void) {
        self.label = label
        self.produce = produce
    }

    public static func == (lhs: AdminBodyStream, rhs: AdminBodyStream) -> Bool { lhs.label == rhs.label }
}

/// An HTTP response's body as an export's output, on the channel: each write is one chunk.
struct ChannelOutput: ExportOutput {
    let channel: any Channel

    func begin(file name: String) async throws(ExportError) {}

    func write(_ bytes: [UInt8]) async throws(ExportError) {
        let part = HTTPServerResponsePart.body(.byteBuffer(channel.allocator.buffer(bytes: bytes)))
        do { try await channel.writeAndFlush(part).get() } catch {
            throw .output(path: "the HTTP response", reason: "the client went away (\(error))")
        }
    }

    func end() async throws(ExportError) {}
}

extension AdminBodyStream {
    /// Sends `head` (without a length: HTTP/1.1 chunked), the parts `produce` writes, the end,
    /// and closes the connection. A failure after the head was sent can only cut the response
    /// short: the connection is closed without the last chunk, which clients report as an
    /// incomplete body, and the failure is logged.
    public func send(head: HTTPResponseHead, on channel: any Channel, logger: Logger) {
        let output = ChannelOutput(channel: channel)
        let produce = self.produce, label = self.label
        Task {
            do {
                try await channel.writeAndFlush(HTTPServerResponsePart.head(head)).get()
                try await produce(output)
                try await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
            } catch {
                logger.warning("a streamed response was cut short", metadata: ["subsystem": "admin", "stream": "\(label)", "error": "\(error)"])
            }
            try? await channel.close()
        }
    }
}
