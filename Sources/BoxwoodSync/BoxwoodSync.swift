import Boxwood

/// The state-sync layer (update pipeline, gap detection, getDifference) lives in this module.
public enum BoxwoodSyncLayer {
    /// The storage format version of the engine underneath.
    public static var storageFormatVersion: UInt32 { BoxwoodLayer.storageFormatVersion }
}
