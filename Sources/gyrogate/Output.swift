import FoundationEssentials
import Glibc
import JSON
import TextTools

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }  // nowhere to report that stderr is gone
            bytes = bytes.dropFirst(written)
        }
    }
}

enum Environment {
    static func value(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }
}

/// A plain text table: columns padded to their widest cell.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { cell in
                cell.offset < widths.count ? cell.element + String(repeating: " ", count: max(0, widths[cell.offset] - cell.element.count)) : cell.element
            }
            return padded.joined(separator: "  ").trimmed { $0.isWhitespace && !$0.isNewline }
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}

/// `h:mm:ss`; `?` for a duration no clock gives (the daemon's numbers are not trusted blindly).
func formatDuration(ms: Double) -> String {
    guard let seconds = Int(exactly: (ms / 1000).rounded(.towardZero)) else { return "?" }
    func twoDigits(_ value: Int) -> String { (0..<10).contains(value) ? "0\(value)" : "\(value)" }
    return "\(seconds / 3600):\(twoDigits(seconds / 60 % 60)):\(twoDigits(seconds % 60))"
}

func printJSON(_ value: JSONValue) {
    print(String(decoding: value.encoded([.prettyPrinted, .sortedKeys]), as: UTF8.self))
}
