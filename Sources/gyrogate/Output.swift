import Foundation
import ZoneInfo

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) { FileHandle.standardError.write(Data(string.utf8)) }
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
            cells.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}

func formatDuration(ms: Double) -> String {
    let seconds = Int(ms / 1000)
    return "\(seconds / 3600):" + zeroPadded(seconds / 60 % 60, width: 2) + ":" + zeroPadded(seconds % 60, width: 2)
}

func printJSON(_ object: Any) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}
