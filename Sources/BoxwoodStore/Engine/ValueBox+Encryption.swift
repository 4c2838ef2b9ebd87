import Foundation

/// Encryption at rest: which layout a data file has (plain, or encrypted under the caller's key), decided from its
/// first bytes before anything else is read; rekeying; see `DataFileLayout`, `EncryptionHeader` and
/// docs/encryption.md.
extension ValueBox {
    /// True when the database's data file (and so its WAL) is encrypted.
    public var isEncrypted: Bool { pager?.layout.isEncrypted ?? false }

    /// The key and salt the database is encrypted under now (nil when it is plain): `options.encryption` until a
    /// ``rekey(to:)``.
    public var encryption: ValueBoxEncryptionParameters? { isEncrypted ? encryptionParameters : nil }

    /// Re-encrypts the database under `parameters` — or, with nil, stores it in the clear — crash-safely: the
    /// contents are written into a new data file (a compaction, `compact()`), which a rename swaps in. A kill at
    /// any point leaves either the old file, complete and under the old key, or the new one, complete and under
    /// the new key: open with both keys to find out after a crash. Every other process must reopen with the new
    /// parameters (with the old ones they get ``BoxwoodError/wrongKey(path:)`` from their next read).
    /// Not allowed inside a transaction or read snapshot, or on a read-only value box.
    public func rekey(to parameters: ValueBoxEncryptionParameters?) throws(BoxwoodError) {
        try withFileMaintenanceLock { () throws(BoxwoodError) in
            let target = parameters.map { DataFileLayout.newEncrypted(parameters: $0) } ?? DataFileLayout()
            _ = try compactLocked(progress: nil, target: target, parameters: parameters)
        }
    }

    /// Encrypts a plain database in place when the caller asked for it (`forceEncryptionIfNoSet`), after an open.
    func encryptInPlaceIfAsked() throws(BoxwoodError) {
        guard let parameters = options.encryption, parameters.forceEncryptionIfNoSet, !options.readOnly, !isEncrypted else { return }
        try rekey(to: parameters)
    }

    /// The layout of `file` (`size` bytes): encrypted when it starts with an encryption header — whose key check
    /// must match `options.encryption` — plain otherwise. An empty file, or an encryption header cut short by a
    /// creation that did not finish, gets the layout a new database would have (`newDataFileLayout`); the open
    /// then decides whether the file is an interrupted creation.
    func dataFileLayout(of file: StorageFile, size: UInt64) throws(BoxwoodError) -> DataFileLayout {
        guard size > 0 else { return newDataFileLayout() }
        let (block, read) = try EncryptionHeader.readBlock(of: file)
        guard EncryptionHeader.looksLikeHeader(block, count: read) else { return DataFileLayout() }
        switch EncryptionHeader.decode(block) {
        case let .success(header):
            guard let parameters = encryptionParameters else { throw .encryptionKeyRequired(path: file.path) }
            guard Array(parameters.salt.data) == header.salt else { throw .wrongKey(path: file.path) }
            let keys = DatabaseKeys(parameters: parameters, fileId: header.fileId)
            guard keys.keyCheck == header.keyCheck else { throw .wrongKey(path: file.path) }
            return DataFileLayout(header: header, keys: keys)
        case .failure(.notAHeader):
            return DataFileLayout()
        case let .failure(.unsupportedScheme(scheme)):
            throw .corrupted(file: file.path, page: nil, reason: "unknown encryption scheme \(scheme) (this build knows scheme \(EncryptionHeader.scheme))")
        case let .failure(.damaged(reason)):
            if size < UInt64(EncryptionHeader.size + 2 * PageCipher.slotSize) { return newDataFileLayout() }
            throw .corrupted(file: file.path, page: nil, reason: "the encryption header is damaged (\(reason))")
        }
    }

    /// Frees decrypted pages beyond `options.decryptedPageCacheBytes` (an encrypted file only). Called only
    /// between operations — at the end of a transaction, at the start of a read call or snapshot that is not
    /// nested in another — where no cursor holds a page pointer, and never while a read callback holds lent
    /// bytes (`lendingDepth`).
    @inline(__always)
    func trimDecryptedPagesIfNeeded() {
        guard lendingDepth == 0, let pager, pager.decryptedPageCount > options.decryptedPageCacheBytes / PageLayout.pageSize else { return }
        pager.trimDecryptedPages(budget: options.decryptedPageCacheBytes)
    }

    /// The layout of a database created now: encrypted under `encryptionParameters` (with a new file id), or plain.
    func newDataFileLayout() -> DataFileLayout {
        guard let parameters = encryptionParameters else { return DataFileLayout() }
        return DataFileLayout.newEncrypted(parameters: parameters)
    }

    /// The layout of a new file holding the current data file's contents (compaction): encrypted under the same
    /// key (a new file id) when the current file is encrypted, plain otherwise.
    func sameKindDataFileLayout() throws(BoxwoodError) -> DataFileLayout {
        guard pager.layout.isEncrypted else { return DataFileLayout() }
        guard let parameters = encryptionParameters else { throw .encryptionKeyRequired(path: dataFile.path) }
        return DataFileLayout.newEncrypted(parameters: parameters)
    }
}

extension DataFileLayout {
    /// The layout of a new encrypted file: a random file id and the header that records it.
    static func newEncrypted(parameters: ValueBoxEncryptionParameters) -> DataFileLayout {
        let fileId = DatabaseKeys.randomFileId()
        let keys = DatabaseKeys(parameters: parameters, fileId: fileId)
        let header = EncryptionHeader(salt: Array(parameters.salt.data), fileId: fileId, keyCheck: keys.keyCheck)
        return DataFileLayout(header: header, keys: keys)
    }

    /// Writes the encryption header at the start of `file` (nothing for a plain layout).
    func writeHeader(to file: StorageFile) throws(BoxwoodError) {
        guard let header else { return }
        let block = UnsafeMutableRawPointer.allocate(byteCount: EncryptionHeader.size, alignment: 16)
        defer { block.deallocate() }
        header.encode(into: block)
        try file.write(block, count: EncryptionHeader.size, offset: 0)
    }
}

extension ValueBox {
    /// Deletes the database files at `path` — `data`, `wal`, `header` and a leftover `data.compact` — so that the
    /// next open creates an empty database there (Postbox's `removeDatabaseOnError`, for a database whose key is
    /// lost). The directory stays. Only for a database no value box has open: one that has it open keeps its
    /// descriptors and mappings to the deleted files.
    public static func removeDatabaseFiles(at path: String, fileSystem: StorageFileSystem = PosixFileSystem.shared) throws(BoxwoodError) {
        for name in [headerFileName, walFileName, compactionFileName, dataFileName] {
            let file = path + "/" + name
            if fileSystem.kind(of: file) == .regular { try fileSystem.removeFile(file) }
        }
        try fileSystem.syncDirectory(path)
    }
}
