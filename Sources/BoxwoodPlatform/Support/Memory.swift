#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Raw memory calls for the layers above, inlined into their callers (they sit in hot paths: key comparisons,
// value buffers), so that going through the platform layer costs nothing.

/// Three-way comparison of `count` bytes (memcmp): negative, zero or positive.
@inlinable @inline(__always)
public func compareBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Int32 {
    memcmp(a, b, count)
}

/// Whether `count` bytes at `a` and `b` are equal (0 bytes are always equal).
@inlinable @inline(__always)
public func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
    count == 0 || memcmp(a, b, count) == 0
}

/// `malloc`: memory that ``freeBytes(_:)`` (or C's `free`) releases, so that buffers can change hands with C code.
/// Nil when the allocation fails.
@inlinable @inline(__always)
public func allocateBytes(_ count: Int) -> UnsafeMutableRawPointer? {
    malloc(count)
}

/// `realloc` of memory from ``allocateBytes(_:)``; nil when it fails (the old block is then still valid).
@inlinable @inline(__always)
public func reallocateBytes(_ pointer: UnsafeMutableRawPointer?, _ count: Int) -> UnsafeMutableRawPointer? {
    realloc(pointer, count)
}

/// `free` for memory from ``allocateBytes(_:)``.
@inlinable @inline(__always)
public func freeBytes(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}

/// Reserves `length` bytes of private, zero-filled address space whose pages are committed only when touched (a
/// simulated file's cache); nil when the address space cannot be had.
public func reserveAddressSpace(_ length: Int) -> UnsafeMutableRawPointer? {
    #if os(Linux)
    let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
    #else
    let flags = MAP_PRIVATE | MAP_ANON
    #endif
    guard let address = mmap(nil, length, PROT_READ | PROT_WRITE, flags, -1, 0), address != MAP_FAILED else { return nil }
    return address
}

/// Gives back address space from ``reserveAddressSpace(_:)``.
public func releaseAddressSpace(_ address: UnsafeMutableRawPointer, length: Int) {
    munmap(address, length)
}
