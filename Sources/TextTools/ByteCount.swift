/// `bytes` in binary units with one decimal ("4.0 MiB"), as people read sizes and volumes.
public func formatBytes(_ bytes: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes), unit = 0
    while value >= 1024, unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    guard unit > 0 else { return "\(bytes) B" }
    // One decimal as printf's "%.1f" gives it (ties to even); value is below 1024 here.
    let tenths = Int((value * 10).rounded(.toNearestOrEven))
    return "\(tenths / 10).\(tenths % 10) " + units[unit]
}
