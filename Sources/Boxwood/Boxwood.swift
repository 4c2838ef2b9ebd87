import BoxwoodStore

/// The Postbox layer (tables, transactions, live views) lives in this module. It builds on `BoxwoodStore`.
public enum BoxwoodLayer {
    /// The storage format version of the engine underneath.
    public static var storageFormatVersion: UInt32 { ValueBox.formatVersion }
}
