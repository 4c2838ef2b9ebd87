/// Why `LZ4Block.decompress` rejected a block. Every malformed input ends in one of these, never in a read or write
/// outside the buffers.
public enum LZ4BlockError: Error, Equatable, Sendable {
    /// The source ended inside a sequence: before a token, inside a length, inside the literals, or before or inside
    /// an offset. An empty source is truncated too.
    case truncatedInput
    /// The decompressed bytes do not fit in the destination (or a corrupt length claims more than it holds).
    case outputTooSmall
    /// A match refers to `offset` bytes before output `position`: 0, or before the start of the output.
    case offsetOutOfRange(offset: Int, position: Int)
}
