/// The output: one row per workload as soon as every engine ran it (ops/s per engine and Boxwood's ratio to each
/// peer), then the bytes on disk of the write workloads against their raw data, the commit latencies of the
/// `latency-*` rows, and the JSON file.
final class Report {
    private let engines: [EngineKind]
    /// Boxwood's peers, when Boxwood runs: the ratio columns.
    private let peers: [EngineKind]
    private var rows: [(name: String, results: [EngineKind: Measurement])] = []

    private static let nameWidth = 22
    private static let opsWidth = 11
    private static let engineWidth = 13
    private static let ratioWidth = 12

    init(engines: [EngineKind]) {
        self.engines = engines
        peers = engines.contains(.boxwood) ? engines.filter { $0 != .boxwood } : []
    }

    func printTableHeader() {
        print("ops/s per engine (n/a: the engine is not a database); box/X = boxwood ops/s ÷ X ops/s, above 1 = boxwood faster")
        var line = pad("workload", Report.nameWidth) + leftPad("ops", Report.opsWidth)
        for engine in engines { line += leftPad(engine.rawValue, Report.engineWidth) }
        for peer in peers { line += leftPad("box/" + peer.rawValue, Report.ratioWidth) }
        print(line)
        fflushStdout()
    }

    /// Adds one workload's measurements (every engine), checks that engines reading the same data agree, and prints
    /// the rows.
    func add(_ measurements: [Measurement]) throws(BenchError) {
        var names: [String] = []
        for measurement in measurements where !names.contains(measurement.row) { names.append(measurement.row) }
        for name in names {
            var results: [EngineKind: Measurement] = [:]
            for measurement in measurements where measurement.row == name { results[measurement.engine] = measurement }
            let checksums = engines.compactMap { engine in results[engine]?.checksum.map { (engine, $0) } }
            if let first = checksums.first, checksums.contains(where: { $0.1 != first.1 }) {
                let detail = checksums.map { "\($0.0.rawValue) \(String($0.1, radix: 16))" }.joined(separator: ", ")
                throw .mismatch(workload: name, detail: "read checksums differ: \(detail)")
            }
            rows.append((name, results))
            printRow(name, results)
        }
        fflushStdout()
    }

    private func printRow(_ name: String, _ results: [EngineKind: Measurement]) {
        let ops = engines.lazy.compactMap { results[$0]?.ops }.first ?? 0
        var line = pad(name, Report.nameWidth) + leftPad(grouped(ops), Report.opsWidth)
        for engine in engines {
            line += leftPad(results[engine].map { grouped(Int($0.opsPerSecond.rounded())) } ?? "n/a", Report.engineWidth)
        }
        for peer in peers {
            var ratio = "-"
            if let boxwood = results[.boxwood], let other = results[peer] {
                ratio = fixed(boxwood.opsPerSecond / other.opsPerSecond, 2) + "x"
            }
            line += leftPad(ratio, Report.ratioWidth)
        }
        print(line)
        let notes = engines.compactMap { engine in results[engine]?.note.map { "\(engine.rawValue) \($0)" } }
        if !notes.isEmpty { print(pad("", Report.nameWidth) + "  " + notes.joined(separator: "; ")) }
    }

    /// Bytes on disk after each write workload (allocated blocks after close) against the raw data.
    func printSizes() {
        let sized = rows.filter { row in row.results.values.contains { $0.bytesOnDisk != nil } }
        guard !sized.isEmpty else { return }
        print("")
        print("bytes on disk after the workload (allocated blocks, after close) and ratio to the raw data (key + value bytes held)")
        var header = pad("workload", Report.nameWidth) + leftPad("raw data", Report.opsWidth)
        for engine in engines { header += leftPad(engine.rawValue, 20) }
        print(header)
        for row in sized {
            let raw = engines.lazy.compactMap { row.results[$0]?.rawBytes }.first
            var line = pad(row.name, Report.nameWidth) + leftPad(raw.map(formatBytes) ?? "-", Report.opsWidth)
            for engine in engines {
                var cell = "n/a"
                if let bytes = row.results[engine]?.bytesOnDisk {
                    let ratio = row.results[engine]?.rawBytes.map { " " + fixed(Double(bytes) / Double(max($0, 1)), 2) + "x" } ?? ""
                    cell = formatBytes(bytes) + ratio
                }
                line += leftPad(cell, 20)
            }
            print(line)
        }
        fflushStdout()
    }

    /// Commit latency of the `latency-*` rows: p50, p99, p99.9 and max per engine, and Boxwood's ratio to SQLite
    /// for p99.9 and max.
    func printLatency() {
        let timed = rows.filter { row in row.results.values.contains { $0.latency != nil } }
        guard !timed.isEmpty else { return }
        print("")
        print("commit latency: every transaction timed from begin to the return of commit (CLOCK_MONOTONIC) into an HdrHistogram (3 significant digits; max exact), in µs")
        print("box/sqlite = boxwood latency ÷ sqlite latency, below 1 = boxwood's tail shorter; checkpoints: boxwood's during the timed commits")
        let header = pad("workload", 23) + pad("engine", 12) + leftPad("commits", 9) + leftPad("p50", 11) + leftPad("p99", 11)
            + leftPad("p99.9", 11) + leftPad("max", 12) + leftPad("checkpoints", 13)
        print(header)
        for row in timed {
            var name = row.name
            for engine in engines {
                guard let latency = row.results[engine]?.latency else { continue }
                print(pad(name, 23) + pad(engine.rawValue, 12) + leftPad(grouped(latency.commits), 9)
                    + leftPad(microseconds(latency.p50), 11) + leftPad(microseconds(latency.p99), 11)
                    + leftPad(microseconds(latency.p999), 11) + leftPad(microseconds(latency.max), 12)
                    + leftPad(latency.checkpoints.map { grouped(Int($0.count)) } ?? "-", 13))
                name = ""
            }
            for engine in engines {
                guard let checkpoints = row.results[engine]?.latency?.checkpoints else { continue }
                print(pad("", 23) + engine.rawValue + ": " + checkpointText(checkpoints))
            }
            if let boxwood = row.results[.boxwood]?.latency, let sqlite = row.results[.sqlite]?.latency {
                print(pad("", 23) + pad("box/sqlite", 12) + leftPad("", 9) + leftPad("", 11) + leftPad("", 11)
                    + leftPad(latencyRatio(boxwood.p999, sqlite.p999), 11) + leftPad(latencyRatio(boxwood.max, sqlite.max), 12))
            }
        }
        fflushStdout()
    }

    private func microseconds(_ nanoseconds: UInt64) -> String { fixed(Double(nanoseconds) / 1_000, 1) }

    private func checkpointText(_ checkpoints: CheckpointCommits) -> String {
        let without = "the slowest commit without one \(microseconds(checkpoints.slowestWithout)) µs"
        let waits = "; \(grouped(Int(checkpoints.waits))) commits waited for the checkpointer, \(fixed(Double(checkpoints.waitNanoseconds) / 1e6, 1)) ms in all"
        guard checkpoints.count > 0 else { return "no commit ran a checkpoint; " + without + waits }
        return "commits that ran a checkpoint \(microseconds(checkpoints.fastest))–\(microseconds(checkpoints.slowest)) µs; " + without + waits
    }

    private func latencyRatio(_ boxwood: UInt64, _ other: UInt64) -> String {
        let ratio = Double(boxwood) / Double(max(other, 1))
        return fixed(ratio, ratio < 0.1 ? 3 : 2) + "x"
    }

    /// `[{"workload", "engine", "ops_per_sec", "bytes_on_disk", "ops", "seconds"}]`, one object per measurement; the
    /// `latency-*` rows add `"latency_us": {"p50", "p99", "p99_9", "max"}` and `"checkpoints"` (null but for Boxwood),
    /// and Boxwood's `"checkpoint_commits_us": {"fastest", "slowest", "slowest_without"}` (the commits that ran a
    /// checkpoint, and the slowest that ran none).
    func json() -> String {
        var objects: [String] = []
        for row in rows {
            for engine in engines {
                guard let m = row.results[engine] else { continue }
                let bytes = m.bytesOnDisk.map(String.init) ?? "null"
                var latency = ""
                if let l = m.latency {
                    latency = ", \"latency_us\": {\"p50\": \(microseconds(l.p50)), \"p99\": \(microseconds(l.p99)), "
                        + "\"p99_9\": \(microseconds(l.p999)), \"max\": \(microseconds(l.max))}, "
                        + "\"checkpoints\": \(l.checkpoints.map { String($0.count) } ?? "null")"
                    if let c = l.checkpoints {
                        latency += ", \"checkpoint_commits_us\": {\"fastest\": \(c.count > 0 ? microseconds(c.fastest) : "null"), "
                            + "\"slowest\": \(c.count > 0 ? microseconds(c.slowest) : "null"), \"slowest_without\": \(microseconds(c.slowestWithout))}"
                    }
                }
                objects.append("  {\"workload\": \"\(row.name)\", \"engine\": \"\(engine.rawValue)\", \"ops_per_sec\": \(fixed(m.opsPerSecond, 2)), "
                    + "\"bytes_on_disk\": \(bytes), \"ops\": \(m.ops), \"seconds\": \(fixed(m.seconds, 6))\(latency)}")
            }
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }
}

// MARK: Formatting

/// `text` padded with spaces on the right to `width`.
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

/// `text` padded with spaces on the left to `width`.
func leftPad(_ text: String, _ width: Int) -> String {
    text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
}

/// An integer with thousands separators.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (i, digit) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return value < 0 ? "-" + result : result
}

/// A number with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : "inf" }
    var scale = 1
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value.magnitude * Double(scale)).rounded())
    let whole = String(scaled / scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard digits > 0 else { return sign + whole }
    let fraction = String(scaled % scale)
    return sign + whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
}

/// A byte count in B, KiB, MiB or GiB.
func formatBytes(_ bytes: Int) -> String {
    let value = Double(bytes)
    if bytes < 1 << 10 { return "\(bytes) B" }
    if bytes < 1 << 20 { return fixed(value / 1024, 1) + " KiB" }
    if bytes < 1 << 30 { return fixed(value / 1_048_576, 1) + " MiB" }
    return fixed(value / 1_073_741_824, 2) + " GiB"
}
