#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``ProgressBar`` counts.
enum ProgressUnit {
    case entries, pages, bytes

    func format(_ n: Int) -> String {
        switch self {
        case .entries: return "\(n) entries"
        case .pages: return "\(n) pages"
        case .bytes: return formatBytes(UInt64(max(0, n)))
        }
    }

    func format(_ done: Int, of total: Int) -> String {
        switch self {
        case .entries: return "\(done)/\(total) entries"
        case .pages: return "\(done)/\(total) pages"
        case .bytes: return "\(formatBytes(UInt64(max(0, done))))/\(formatBytes(UInt64(max(0, total))))"
        }
    }
}

/// A one-line progress display redrawn in place on stderr: a bar with a percentage when the total is known,
/// a running count otherwise. It appears only once the work has run for ``delay`` (a quick run prints
/// nothing) and redraws at most every 100 ms or on a new percentage.
final class ProgressBar {
    let unit: ProgressUnit
    /// Seconds of work before the first draw.
    let delay: Double
    private let start = ContinuousClock.now
    private var lastDraw: ContinuousClock.Instant?
    private var lastPercent = -1
    private var drawn = false
    private var lastTotal: Int?
    /// The bar on screen now: ``writeStderr(_:)`` erases it before writing a message.
    nonisolated(unsafe) private(set) static weak var active: ProgressBar?

    /// `delay` defaults to 0.3 s, or to the seconds in the environment variable `BOXWOOD_PROGRESS_DELAY`.
    init(unit: ProgressUnit, delay: Double? = nil) {
        self.unit = unit
        self.delay = delay ?? getenv("BOXWOOD_PROGRESS_DELAY").flatMap { Double(String(cString: $0)) } ?? 0.3
    }

    /// A bar when stderr is a terminal (and, with `unlessStdoutIsTerminal`, stdout is not: output that scrolls
    /// on the same terminal is progress enough), else nil.
    static func onTerminal(unit: ProgressUnit, unlessStdoutIsTerminal: Bool = false, quiet: Bool = false) -> ProgressBar? {
        guard !quiet, isatty(2) != 0 else { return nil }
        if unlessStdoutIsTerminal && isatty(1) != 0 { return nil }
        return ProgressBar(unit: unit)
    }

    /// Shows `done` of `total` (nil: unknown) followed by `detail`.
    func show(done: Int, total: Int?, detail: @autoclosure () -> String = "") {
        let now = ContinuousClock.now
        guard now - start >= .seconds(delay) else { return }
        let percent = total.map { $0 > 0 ? min(100, max(0, done) * 100 / $0) : 100 } ?? -1
        if drawn, percent == lastPercent, let lastDraw, now - lastDraw < .milliseconds(100) { return }
        lastPercent = percent
        lastDraw = now
        lastTotal = total
        let extra = detail()
        var line: String
        if let total {
            let width = 30
            let filled = percent * width / 100
            line = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                + "\(percent)% " + unit.format(done, of: total)
        } else {
            line = unit.format(done)
        }
        if !extra.isEmpty { line += ", " + extra }
        writeAll(2, "\r\u{1B}[K" + line)
        drawn = true
        ProgressBar.active = self
    }

    /// Erases the line (before other output goes to the terminal); the next `show` draws it again.
    func clear() {
        guard drawn else { return }
        writeAll(2, "\r\u{1B}[K")
        drawn = false
        lastDraw = nil
    }

    /// Ends the display after the work completed: a bar that was shown is drawn full (the last callbacks may
    /// come before the end) and left on its own line.
    func finish() {
        guard drawn else { return }
        if let lastTotal {
            lastDraw = nil
            lastPercent = -1
            show(done: lastTotal, total: lastTotal)
        }
        writeAll(2, "\n")
        drawn = false
        if ProgressBar.active === self { ProgressBar.active = nil }
    }
}
