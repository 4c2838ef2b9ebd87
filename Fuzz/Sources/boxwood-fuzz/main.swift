// boxwood-fuzz: Boxwood's fuzz targets (see Fuzz/README.md).
//
// Built with `-sanitize=fuzzer,address -DBOXWOOD_LIBFUZZER` (scripts/fuzz.sh), `boxwood-fuzz <target> [options]`
// hands the target to libFuzzer's driver with the remaining arguments (libFuzzer options and corpus directories).
// Built normally (`swift build`), `boxwood-fuzz <target> <files or directories>...` replays each input once: the
// regression mode for corpora and crash reproducers.
import BoxwoodFuzzTargets
import Foundation

func usage() -> Never {
    let names = FuzzTargets.all.map(\.name).joined(separator: ", ")
    FileHandle.standardError.write(Data("""
        usage: boxwood-fuzz --list
               boxwood-fuzz <target> --options              the target's libFuzzer options (relative to Fuzz/)
               boxwood-fuzz <target> --write-seeds <dir>    write the target's seed inputs
               boxwood-fuzz <target> [args...]              fuzz build: libFuzzer options and corpus directories
                                                            normal build: replay files and directories
        targets: \(names)

        """.utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { usage() }
if arguments[1] == "--list" {
    for target in FuzzTargets.all { print("\(target.name)\t\(target.summary)") }
    exit(0)
}
// The target is the first argument; libFuzzer re-runs this program for fork mode and crash minimization with only
// its own options, so the target also comes from BOXWOOD_FUZZ_TARGET (set below before the driver starts).
let target: FuzzTarget
let rest: [String]
if let named = FuzzTargets.named(arguments[1]) {
    target = named
    rest = Array(arguments.dropFirst(2))
} else if let name = ProcessInfo.processInfo.environment["BOXWOOD_FUZZ_TARGET"], let named = FuzzTargets.named(name) {
    target = named
    rest = Array(arguments.dropFirst(1))
} else {
    usage()
}
if rest.first == "--options" {
    print(target.libFuzzerOptions.joined(separator: " "))
    exit(0)
}
if rest.first == "--write-seeds" {
    guard rest.count == 2 else { usage() }
    do {
        for path in try CorpusReplay.writeSeeds(target, to: rest[1]) { print(path) }
    } catch {
        FileHandle.standardError.write(Data("boxwood-fuzz: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

#if BOXWOOD_LIBFUZZER
/// The target libFuzzer's callback runs (set once, before the driver starts).
nonisolated(unsafe) var selectedTarget: FuzzTarget?

/// libFuzzer's entry point, also for a build that links libFuzzer's own `main` (then the target comes from the
/// `BOXWOOD_FUZZ_TARGET` environment variable).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if selectedTarget == nil, let name = ProcessInfo.processInfo.environment["BOXWOOD_FUZZ_TARGET"] {
        selectedTarget = FuzzTargets.named(name)
    }
    selectedTarget?.fuzzOne(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

selectedTarget = target
setenv("BOXWOOD_FUZZ_TARGET", target.name, 1)
// libFuzzer sees the program name and everything after the target name.
var driverArguments: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + rest).map { strdup($0) } + [nil]
var driverCount = CInt(rest.count + 1)
let status = driverArguments.withUnsafeMutableBufferPointer { buffer -> CInt in
    var argv = buffer.baseAddress!
    return LLVMFuzzerRunDriver(&driverCount, &argv, fuzzerTestOneInput)
}
exit(status)
#else
guard !rest.isEmpty else { usage() }
do {
    // Each input is named before it runs, so a crash names its reproducer.
    let count = try CorpusReplay.replay(target, paths: rest, before: { FileHandle.standardError.write(Data("replaying \($0)\n".utf8)) })
    print("boxwood-fuzz: replayed \(count) inputs through \(target.name) without a crash")
} catch {
    FileHandle.standardError.write(Data("boxwood-fuzz: \(error)\n".utf8))
    exit(1)
}
#endif
