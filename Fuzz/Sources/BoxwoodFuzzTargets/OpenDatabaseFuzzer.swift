@_spi(Fuzzing) import BoxwoodStore

/// `open-database`: the input is a whole database directory (``DatabaseImage``: meta pages, catalog and tree
/// pages, freelist, WAL, shared header). Checksums and WAL whitening are recomputed after mutation unless the
/// input's flags say otherwise, then ``DatabaseExerciser`` opens, checks, reads, writes and closes it.
enum OpenDatabaseFuzzer {
    static let target = FuzzTarget(
        name: "open-database",
        summary: "a forged database directory (pages, WAL, shared header, checksums fixed up) opened, checked, read, written, closed",
        run: { fuzzOne($0) },
        seeds: { try seeds() },
        libFuzzerOptions: ["-max_len=65536", "-dict=Dictionaries/binary-formats.dict", "-use_value_profile=1"]
    )

    static func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
        let image = DatabaseImage(parsing: bytes)
        let files = image.files()
        let path = ScratchFiles.databaseDirectory()
        ScratchFiles.install(path, data: files.data, wal: files.wal, header: files.header)
        let flags = image.flags
        DatabaseExerciser.run(path, steps: DatabaseExerciser.Steps(
            readOnly: flags & DatabaseImage.Flag.skipReadOnly == 0,
            write: flags & DatabaseImage.Flag.write != 0,
            compact: flags & DatabaseImage.Flag.compact != 0))
    }

    /// Small databases made by the engine, captured as images: empty; tables with inline, compressed and
    /// overflow values and uncheckpointed commits in the WAL; a freelist; branch pages.
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        var result: [(String, [UInt8])] = []
        for (name, build) in SeedDatabases.all {
            var image = try SeedDatabases.capture(build)
            result.append(("seed-\(name)", image.serialized()))
            if name == "tables-and-wal" {
                image.flags = DatabaseImage.Flag.write | DatabaseImage.Flag.compact
                result.append(("seed-\(name)-write-compact", image.serialized()))
            }
        }
        return result
    }
}
