/// File paths as plain strings, split and joined on `/` the way `NSString` did it, without
/// full Foundation. Nothing here touches the filesystem or resolves `..` and links.
public enum PathText {
    /// The folder part: `/run/gyrogate/admin.sock` → `/run/gyrogate`, `/x` → `/`, `/` → `/`,
    /// and `admin.sock` → `""` (a bare name has no folder part; callers read that as `.`).
    public static func parent(of path: String) -> String {
        let components = path.split(separator: "/")
        let root = path.hasPrefix("/") ? "/" : ""
        guard components.count > 1 else { return root }
        return root + components.dropLast().joined(separator: "/")
    }

    /// `name` inside `folder`, with exactly one `/` between them; `folder` may be empty.
    public static func appending(_ name: String, to folder: String) -> String {
        if folder.isEmpty { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
