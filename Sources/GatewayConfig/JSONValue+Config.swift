import JSON

/// The configuration reads documents as `JSONValue`; the name is kept here so that a file of
/// this module that does not import JSON (the loader) still sees it.
typealias JSONValue = JSON.JSONValue
