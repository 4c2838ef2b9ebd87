/// Builds one JSON object for the `--json` outputs, field by field, in the order added.
struct JSONObject {
    private var fields: [String] = []

    init() {}

    mutating func add(_ key: String, _ value: String?) {
        fields.append(jsonString(key) + ": " + (value.map(jsonString) ?? "null"))
    }

    mutating func add<N: BinaryInteger>(_ key: String, _ value: N?) {
        fields.append(jsonString(key) + ": " + (value.map { "\($0)" } ?? "null"))
    }

    mutating func add(_ key: String, _ value: Bool) {
        fields.append(jsonString(key) + ": " + (value ? "true" : "false"))
    }

    mutating func add(_ key: String, _ value: Bool?) {
        fields.append(jsonString(key) + ": " + (value.map { $0 ? "true" : "false" } ?? "null"))
    }

    mutating func add(_ key: String, _ values: [JSONObject]?) {
        fields.append(jsonString(key) + ": " + (values.map { "[" + $0.map(\.text).joined(separator: ", ") + "]" } ?? "null"))
    }

    mutating func add(_ key: String, _ value: JSONObject) {
        fields.append(jsonString(key) + ": " + value.text)
    }

    mutating func add(_ key: String, _ values: [JSONObject]) {
        fields.append(jsonString(key) + ": [" + values.map(\.text).joined(separator: ", ") + "]")
    }

    mutating func add<N: BinaryInteger>(_ key: String, _ values: [N]) {
        fields.append(jsonString(key) + ": [" + values.map { "\($0)" }.joined(separator: ", ") + "]")
    }

    mutating func add(_ key: String, _ values: [String]) {
        fields.append(jsonString(key) + ": [" + values.map(jsonString).joined(separator: ", ") + "]")
    }

    /// The object as one line of JSON.
    var text: String { "{" + fields.joined(separator: ", ") + "}" }
}
