/// How integers sit in Boxwood's bytes: little-endian in pages, WAL records, table values and the Postbox
/// encoding; big-endian in keys (so that keys sort as numbers under memcmp). Every fixed-width load and store of
/// the engine goes through these helpers, unchecked: the caller has checked the bounds (``ByteReader`` does so
/// for bytes that come from outside).

/// The little-endian `T` at `p + offset` (any alignment).
@inlinable @inline(__always)
func loadLittleEndian<T: FixedWidthInteger>(_ p: UnsafeRawPointer, _ offset: Int, as type: T.Type = T.self) -> T {
    T(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: T.self))
}

/// Stores `value` little-endian at `p + offset` (any alignment).
@inlinable @inline(__always)
func storeLittleEndian<T: FixedWidthInteger>(_ p: UnsafeMutableRawPointer, _ offset: Int, _ value: T) {
    p.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
}

/// The big-endian `T` at `p + offset` (any alignment).
@inlinable @inline(__always)
func loadBigEndian<T: FixedWidthInteger>(_ p: UnsafeRawPointer, _ offset: Int, as type: T.Type = T.self) -> T {
    T(bigEndian: p.loadUnaligned(fromByteOffset: offset, as: T.self))
}

/// Stores `value` big-endian at `p + offset` (any alignment).
@inlinable @inline(__always)
func storeBigEndian<T: FixedWidthInteger>(_ p: UnsafeMutableRawPointer, _ offset: Int, _ value: T) {
    p.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
}

// The page code's shorthands (16-bit fields are handled as Int there).
@inlinable @inline(__always)
func load16(_ p: UnsafeRawPointer, _ offset: Int) -> Int { Int(loadLittleEndian(p, offset, as: UInt16.self)) }
@inlinable @inline(__always)
func load32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 { loadLittleEndian(p, offset) }
@inlinable @inline(__always)
func load64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 { loadLittleEndian(p, offset) }
@inlinable @inline(__always)
func store16(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: Int) { storeLittleEndian(p, offset, UInt16(truncatingIfNeeded: v)) }
@inlinable @inline(__always)
func store32(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: UInt32) { storeLittleEndian(p, offset, v) }
@inlinable @inline(__always)
func store64(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: UInt64) { storeLittleEndian(p, offset, v) }
