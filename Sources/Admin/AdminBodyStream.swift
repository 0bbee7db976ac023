import Export
import Logging
import NIOCore
import NIOHTTP1

/// An HTTP response's body as an export's output, on the channel: each write is one chunk.
struct ChannelOutput: AdminBodyOutput {
    let channel: any Channel

    func write(_ bytes: [UInt8]) async throws(ExportError) {
        let part = HTTPServerResponsePart.body(.byteBuffer(channel.allocator.buffer(bytes: bytes)))
        do { try await channel.writeAndFlush(part).get() } catch {
            throw .output(path: "the HTTP response", reason: "the client went away (\(error))")
        }
    }

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
