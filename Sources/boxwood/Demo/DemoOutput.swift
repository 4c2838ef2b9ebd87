import Boxwood
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic seconds.
enum DemoClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// SplitMix64 for the demo's own choices (what to send, when to read).
struct DemoRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed ^ 0xD1B5_4A32_D192_ED03 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < probability }

    mutating func element<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[Int(next() % UInt64(items.count))] }

    static let phrases = ["on my way", "sounds good", "see you at 7", "👍", "can you send the file?", "thanks!",
                          "running late, sorry", "let's sync tomorrow", "ok", "haha"]
}

/// Where the demo writes: a redrawn terminal screen (header, chat list, recent log lines) or plain lines.
final class DemoOutput: @unchecked Sendable {
    let tui: Bool
    private let lock = NSLockLike()
    private var phaseName = "starting"
    private var logLines: [String] = []
    private var chatLines: [String] = []
    private var status = ""
    private let started = DemoClock.now()
    private var lastPlainChatPrint = 0.0

    init(tui: Bool) { self.tui = tui }

    private var elapsed: String { fixed(DemoClock.now() - started, 1) + "s" }

    func phase(_ name: String) {
        lock.locked { phaseName = name }
        log("── \(name)")
    }

    func log(_ line: String) {
        lock.locked {
            if tui {
                logLines.append("[\(elapsed)] " + line)
                if logLines.count > 8 { logLines.removeFirst(logLines.count - 8) }
                redraw()
            } else {
                print("[\(elapsed)] " + line)
                flushStdout()
            }
        }
    }

    /// A new chat list from the live view.
    func chatList(_ lines: [String], summary: String) {
        lock.locked {
            chatLines = lines
            status = summary
            if tui {
                redraw()
            } else if DemoClock.now() - lastPlainChatPrint >= 2 {
                lastPlainChatPrint = DemoClock.now()
                print("[\(elapsed)] chat list: \(summary)")
                for line in lines.prefix(3) { print("   " + line.trimmingLeadingSpaces) }
                flushStdout()
            }
        }
    }

    func progress(done: Int, total: Int, label: String) {
        let width = 30
        let filled = min(width, max(0, done * width / max(1, total)))
        let bar = "▕" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "▏"
        lock.locked {
            if tui {
                status = bar + " " + label
                redraw()
            } else if done >= total || done % max(1, total / 4) == 0 {
                print("[\(elapsed)] catch-up \(bar) \(label)")
                flushStdout()
            }
        }
    }

    func endProgress() {}

    /// Leaves the screen as it is and moves below it.
    func finish() {
        lock.locked {
            if tui { redraw() }
        }
    }

    private func redraw() {
        var screen = "\u{1B}[H\u{1B}[2J"
        screen += "boxwood demo — \(phaseName) — \(elapsed)\n"
        screen += status + "\n\n"
        screen += "chats (live view of the client's database, refreshed on each of its commits)\n"
        for line in chatLines { screen += line + "\n" }
        screen += "\n"
        for line in logLines { screen += line + "\n" }
        writeAll(1, screen)
    }
}

extension String {
    var trimmingLeadingSpaces: String { String(drop(while: { $0 == " " })) }
}
