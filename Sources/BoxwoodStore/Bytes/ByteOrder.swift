/// How integers sit in Boxwood's bytes: little-endian in pages, WAL records, table values and the Postbox
/// encoding; big-endian in keys (so that keys sort as numbers under memcmp). These are the engine's load and
/// store helpers for both orders (``ByteBuffer``, ``ByteReader``, pages and ``ValueBoxKey`` use them). They do not
/// check bounds: the caller has (``ByteReader`` does so for bytes that come from outside).

/// The byte order of a stored integer.
@usableFromInline
enum ByteOrder {
    case littleEndian
    case bigEndian
}

/// The `T` stored in `order` at `p + offset` (any alignment). `order` is a constant at every call, so the
/// inlined load has no branch.
@inlinable @inline(__always)
func loadInteger<T: FixedWidthInteger>(_ p: UnsafeRawPointer, _ offset: Int, _ order: ByteOrder = .littleEndian, as type: T.Type = T.self) -> T {
    let raw = p.loadUnaligned(fromByteOffset: offset, as: T.self)
    return order == .littleEndian ? T(littleEndian: raw) : T(bigEndian: raw)
}

/// Stores `value` in `order` at `p + offset` (any alignment).
@inlinable @inline(__always)
func storeInteger<T: FixedWidthInteger>(_ p: UnsafeMutableRawPointer, _ offset: Int, _ value: T, _ order: ByteOrder = .littleEndian) {
    p.storeBytes(of: order == .littleEndian ? value.littleEndian : value.bigEndian, toByteOffset: offset, as: T.self)
}

// The page code's shorthands (16-bit fields are handled as Int there).
@inlinable @inline(__always)
func load16(_ p: UnsafeRawPointer, _ offset: Int) -> Int { Int(loadInteger(p, offset, as: UInt16.self)) }
@inlinable @inline(__always)
func load32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 { loadInteger(p, offset) }
@inlinable @inline(__always)
func load64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 { loadInteger(p, offset) }
@inlinable @inline(__always)
func store16(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: Int) { storeInteger(p, offset, UInt16(truncatingIfNeeded: v)) }
@inlinable @inline(__always)
func store32(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: UInt32) { storeInteger(p, offset, v) }
@inlinable @inline(__always)
func store64(_ p: UnsafeMutableRawPointer, _ offset: Int, _ v: UInt64) { storeInteger(p, offset, v) }
