import Foundation
import BoxwoodTestSupport
import Testing

/// The outcome of one `boxwood` run.
struct CLIResult {
    let status: Int32
    /// True when the process exited normally (not killed by a signal, e.g. a trap).
    let exitedNormally: Bool
    let stdout: Data
    let stderr: String

    var output: String { String(decoding: stdout, as: UTF8.self) }
}

/// Finds and runs the built `boxwood` executable. The tests cannot build it: run `swift build` (which builds
/// every product, `boxwood` included) before `swift test`. `BOXWOOD_BIN` overrides the location.
enum CLI {
    static let binary: URL? = locate()

    /// `BOXWOOD_BIN`, then the build directory (see `BuiltExecutable`).
    private static func locate() -> URL? {
        BuiltExecutable.locate("boxwood", override: "BOXWOOD_BIN").map { URL(fileURLWithPath: $0) }
    }

    /// Runs `boxwood args...` with `stdin` as standard input; stdout and stderr are captured via files.
    /// `executable` runs another program instead (with `args`); `stderr` replaces the stderr file (the result's
    /// `stderr` is then empty); `environment` adds variables; `whileRunning` is called every few milliseconds
    /// until the process exits.
    static func run(_ args: [String], stdin: Data = Data(), executable: URL? = nil, stderr: FileHandle? = nil,
                    environment: [String: String] = [:], whileRunning: (() -> Void)? = nil) throws -> CLIResult {
        guard let binary = executable ?? binary else {
            Issue.record("the boxwood executable was not found; run `swift build` before `swift test` (or set BOXWOOD_BIN)")
            throw CLIError.missingBinary
        }
        let scratch = try TempDir()
        let inURL = scratch.url.appendingPathComponent("stdin")
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        try stdin.write(to: inURL)
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let input = try FileHandle(forReadingFrom: inURL)
        let output = try FileHandle(forWritingTo: outURL)
        let errors = try stderr ?? FileHandle(forWritingTo: errURL)
        defer {
            try? input.close()
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        try process.run()
        if let whileRunning {
            while process.isRunning {
                whileRunning()
                usleep(5_000)
            }
        }
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus,
            exitedNormally: process.terminationReason == .exit,
            stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Runs with a text stdin.
    static func run(_ args: [String], input: String) throws -> CLIResult {
        try run(args, stdin: Data(input.utf8))
    }
}

enum CLIError: Error {
    case missingBinary
}

/// A fresh temporary directory, deleted when the value is released.
final class TempDir {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("boxwood-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory (not created).
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Builds dump text.
enum DumpBuilder {
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(bytes.count * 2)
        for b in bytes {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 0x0F)])
        }
        return s
    }

    /// A dump of three tables: a binary table (empty key, empty values, a 10 KB value, many entries), an
    /// int64 table with negative keys and extremes, and a table with no entries.
    static func sample() -> (text: String, entries: Int) {
        var generator = SystemRandomNumberGenerator()
        var binary: [String: String] = [:]
        binary[""] = "01"
        binary["00"] = ""
        binary["0000"] = "ff"
        binary["ff"] = hex((0..<10_240).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        binary[hex(Array(repeating: 0xAB, count: 1_280))] = "abcd"
        for _ in 0..<400 {
            let key = (0..<Int.random(in: 1...24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let value = (0..<Int.random(in: 0...120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            binary[hex(key)] = hex(value)
        }
        var ints: [Int64: String] = [Int64.min: "", -1_000_000: "aa", -5: "", -1: "0102", 0: "00", 1: "", 42: "2a", Int64.max: "ffff"]
        for _ in 0..<300 { ints[Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator)] = hex([UInt8.random(in: 0...255, using: &generator)]) }

        var text = "boxwood-dump 1\n"
        text += "table 0 int64\n"
        for key in ints.keys.sorted() { text += "\(key)\t\(ints[key]!)\n" }
        text += "table 1 binary\n"
        for key in binary.keys.sorted() { text += "\(key)\t\(binary[key]!)\n" }
        text += "table 3 binary\n"
        return (text, binary.count + ints.count)
    }
}
