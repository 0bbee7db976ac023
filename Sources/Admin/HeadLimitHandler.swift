import NIOCore

/// Guards the request head before the HTTP parser sees it: the request line may be at most
/// `maxRequestLine` bytes (else `414 URI Too Long`) and the whole head at most `maxHead` (else
/// `431 Request Header Fields Too Large`); either way the connection is then closed.
///
/// llhttp accepts up to 80 KiB of head by default; this cap is ours and much smaller, because
/// the admin API's requests are tiny. The server answers one request per connection, so once a
/// head has been seen, the rest of the stream (the body) passes through unexamined; the body's
/// own limit is enforced after parsing.
public final class HeadLimitHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer

    let maxRequestLine: Int
    let maxHead: Int
    private var headBytes = 0
    private var inRequestLine = true
    /// Whether a byte other than CR or LF has been seen: HTTP parsers skip empty lines before the
    /// request line, so only a newline after content ends the request line or the head. The
    /// skipped bytes still count towards both limits.
    private var sawContent = false
    private var consecutiveNewlines = 0
    private var headDone = false
    private var rejected = false

    public init(maxRequestLine: Int, maxHead: Int) {
        self.maxRequestLine = maxRequestLine
        self.maxHead = maxHead
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if rejected { return }
        let buffer = unwrapInboundIn(data)
        if headDone {
            context.fireChannelRead(data)
            return
        }
        for byte in buffer.readableBytesView {
            headBytes += 1
            if byte == UInt8(ascii: "\n") {
                if sawContent {
                    consecutiveNewlines += 1
                    inRequestLine = false
                    if consecutiveNewlines == 2 { headDone = true; break }
                }
            } else if byte != UInt8(ascii: "\r") {
                sawContent = true
                consecutiveNewlines = 0
            }
            if inRequestLine && headBytes > maxRequestLine {
                return reject(context, status: 414, reason: "URI Too Long", code: "uri_too_long", "the request line is longer than \(maxRequestLine) bytes")
            }
            if headBytes > maxHead {
                return reject(context, status: 431, reason: "Request Header Fields Too Large", code: "headers_too_large", "the request head is longer than \(maxHead) bytes")
            }
        }
        context.fireChannelRead(data)
    }

    private func reject(_ context: ChannelHandlerContext, status: Int, reason: String, code: String, _ message: String) {
        rejected = true
        let response = AdminResponse.error(status, code, message)
        var out = context.channel.allocator.buffer(capacity: 256 + response.body.count)
        out.writeString("HTTP/1.1 \(status) \(reason)\r\ncontent-type: application/json\r\ncontent-length: \(response.body.count)\r\nconnection: close\r\n\r\n")
        out.writeBytes(response.body)
        let channel = context.channel
        context.writeAndFlush(NIOAny(out)).whenComplete { _ in channel.close(promise: nil) }
    }
}
