/// Where a byte offset lies for a person looking at the text in an editor: 1-based line and
/// column. Columns count Unicode scalars, not bytes, so that "é" or "✓" earlier on the line does
/// not push the column past the mistake (a tab counts as one). A line ends at LF, CRLF or a lone
/// CR. Computed only when an error is reported, by counting from the start.
struct TextPosition: CustomStringConvertible, Equatable {
    var line: Int
    var column: Int

    init(offset: Int, in bytes: [UInt8]) {
        line = 1
        column = 1
        let end = min(offset, bytes.count)
        // A byte order mark is invisible in editors: it takes no column.
        var current = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? min(3, end) : 0
        while current < end {
            let byte = bytes[current]
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte == UInt8(ascii: "\r") {
                // CRLF breaks the line at its LF.
                if current + 1 >= bytes.count || bytes[current + 1] != UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                }
            } else if byte & 0xC0 != 0x80 {
                // Continuation bytes belong to the scalar their lead byte counted.
                column += 1
            }
            current += 1
        }
    }

    var description: String { "line \(line), column \(column)" }
}
