// Fuzz target "admin": the admin socket's request head, without a server. Raw bytes go, in
// chunks, into an EmbeddedChannel with the production pipeline's first stages (AdminServer.bind):
// HeadLimitHandler (a copy of Sources/Admin/HeadLimitHandler.swift compiled into this module),
// NIO's HTTPRequestDecoder and HTTPResponseEncoder, then a recorder in place of AdminHTTPHandler
// that builds the AdminRequest it would build (path and query split, percent-decoding). The
// input as text is also parsed as a request target directly.
//
// Input: byte 0 picks the limits (bits 0-1: production 8 KiB line / 16 KiB head, or small ones so
// that short inputs reach them; bits 2-7 seed the chunking); the rest is the client's bytes.
//
// Properties: nothing traps; a rejection is a well-formed 414/431 JSON response after which
// nothing reaches the decoder; the first request head that gets through respects both limits
// (its request line and header lines, as parsed, are no longer than the limits allow); an
// AdminRequest's path is its target up to the first "?".

#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// GYROGATE_FUZZ_VERBOSE=1: print what each input did (for reproducing a finding).
private let verbose = getenv("GYROGATE_FUZZ_VERBOSE") != nil

private let limitChoices: [(line: Int, head: Int)] = [(8 * 1024, 16 * 1024), (64, 256), (24, 40), (200, 200)]

/// Stands where AdminHTTPHandler is: records what the decoder delivers.
private final class Recorder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

    var heads: [HTTPRequestHead] = []
    var partsAfterRejection = 0
    var errors: [any Error] = []
    var rejected: () -> Bool = { false }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if rejected() { partsAfterRejection += 1 }
        if case .head(let head) = unwrapInboundIn(data) {
            heads.append(head)
            exerciseRequest(method: head.method.rawValue, target: head.uri)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        errors.append(error)
    }
}

/// Collects what HeadLimitHandler writes back (it writes raw bytes, below the encoder).
private final class OutboundCollector: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var bytes: [UInt8] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        bytes += unwrapOutboundIn(data).readableBytesView
        context.write(data, promise: promise)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdmin(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let setup = input.byte()
    let limits = limitChoices[Int(setup & 3)]
    var seed = UInt64(setup >> 2) &* 0x9E37_79B9_7F4A_7C15 | 1
    let request = Array(input.rest())

    exerciseRequest(method: "GET", target: String(decoding: request, as: UTF8.self))

    let channel = EmbeddedChannel()
    let collector = OutboundCollector()
    let headLimit = HeadLimitHandler(maxRequestLine: limits.line, maxHead: limits.head)
    let recorder = Recorder()
    do {
        try channel.pipeline.syncOperations.addHandlers([
            collector,
            headLimit,
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
            HTTPResponseEncoder(),
            recorder,
        ])
        // Active, as an accepted connection is (EmbeddedChannel starts inactive).
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/run/gyrogate/admin.sock")).wait()
    } catch {
        fuzzCheck(false, "pipeline setup failed: \(error)")
    }
    recorder.rejected = { !collector.bytes.isEmpty }

    var position = 0
    while position < request.count, channel.isActive {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        let chunk = 1 + Int((seed >> 33) % UInt64(max(1, min(request.count, 300))))
        let end = min(request.count, position + chunk)
        do {
            try channel.writeInbound(channel.allocator.buffer(bytes: request[position..<end]))
        } catch {
            break  // the channel was closed (a rejection) or the decoder gave up
        }
        position = end
    }
    _ = try? channel.finish(acceptAlreadyClosed: true)

    if verbose {
        print("limits \(limits): heads \(recorder.heads.map { "\($0.method) \($0.uri) \($0.headers.count) headers" }), errors \(recorder.errors), response \(String(decoding: collector.bytes.prefix(40), as: UTF8.self).debugDescription)")
    }
    if !collector.bytes.isEmpty { checkRejection(collector.bytes, limits: limits) }
    fuzzCheck(recorder.partsAfterRejection == 0, "\(recorder.partsAfterRejection) request parts reached the decoder after a rejection")
    if let head = recorder.heads.first { checkHeadWithinLimits(head, limits: limits, request: request) }
    return 0
}

/// What AdminHTTPHandler does with a head: the router's view of it.
private func exerciseRequest(method: String, target: String) {
    let request = AdminRequest(method: method, target: target)
    if let mark = target.firstIndex(of: "?") {
        fuzzCheck(request.path == String(target[..<mark]), "path \(request.path) of target \(target)")
    } else {
        fuzzCheck(request.path == target && request.query.isEmpty, "path \(request.path) of target \(target)")
    }
    _ = request.isMutating
}

private func checkRejection(_ bytes: [UInt8], limits: (line: Int, head: Int)) {
    let text = String(decoding: bytes, as: UTF8.self)
    let statuses = ["HTTP/1.1 414 URI Too Long\r\n": "uri_too_long", "HTTP/1.1 431 Request Header Fields Too Large\r\n": "headers_too_large"]
    guard let (statusLine, code) = statuses.first(where: { text.hasPrefix($0.key) }) else {
        fuzzCheck(false, "unexpected response from the head limit: \(text.prefix(200))")
        return
    }
    _ = statusLine
    guard let split = text.firstRange(of: "\r\n\r\n") else {
        fuzzCheck(false, "response without an end of head: \(text.prefix(200))")
        return
    }
    let body = text[split.upperBound...]
    let lengthLine = text[..<split.lowerBound].split(separator: "\r\n").first { $0.hasPrefix("content-length: ") }
    fuzzCheck(lengthLine.flatMap { Int($0.dropFirst("content-length: ".count)) } == body.utf8.count,
              "content-length does not match the body: \(text.prefix(300))")
    fuzzCheck(body.contains("\"code\":\"\(code)\""), "error body without its code: \(body)")
}

/// The bytes a head needs at least, as parsed: llhttp drops optional whitespace and accepts bare
/// LF line ends, so the raw head was at least this long. HeadLimitHandler stops counting at the
/// LF that ends the head, so that one byte is not held against the limit. Empty lines before the
/// request line (which llhttp skips) count towards the limits too.

/// The fewest raw bytes `text` can have come from: NIO decodes each invalid UTF-8 byte as
/// U+FFFD, three bytes in `utf8`, so each U+FFFD counts as one.
private func rawLength(_ text: String) -> Int {
    text.utf8.count - 2 * text.unicodeScalars.reduce(0) { $0 + ($1 == "\u{FFFD}" ? 1 : 0) }
}

private func checkHeadWithinLimits(_ head: HTTPRequestHead, limits: (line: Int, head: Int), request: [UInt8]) {
    let requestLine = rawLength(head.method.rawValue) + 1 + rawLength(head.uri) + 1 + "HTTP/x.y".utf8.count
    let headerLines = head.headers.reduce(0) { $0 + rawLength($1.name) + 1 + rawLength($1.value) + 1 }
    let minimumHead = requestLine + 1 + headerLines
    let shown = String(decoding: request.prefix(160), as: UTF8.self).debugDescription
    fuzzCheck(requestLine <= limits.line, "a \(requestLine)-byte request line got past the \(limits.line)-byte limit: \(shown)")
    fuzzCheck(minimumHead <= limits.head, "a head of at least \(minimumHead) bytes got past the \(limits.head)-byte limit: \(shown)")
}
