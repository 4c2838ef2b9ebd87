/// The on-disk format versions this build of the engine reads and writes, for tools that report them (such as
/// `boxwood --version` and `boxwood stat`).
///
/// A database whose files carry a newer version refuses to open with
/// ``BoxwoodError/unsupportedFormatVersion(path:found:supported:)``, naming the version it found and the one
/// this build supports.
public enum BoxwoodFormat {
    /// The version of the data file (`data`) format, stored in both meta pages. Opening accepts exactly this
    /// version.
    public static let dataVersion: UInt32 = MetaPage.formatVersion
    /// The version of the write-ahead log (`wal`) format that this build writes. It also replays the records of
    /// some older versions (a log is rewritten in the current version when it is next reset).
    public static let walVersion: UInt32 = WriteAheadLog.version
}
