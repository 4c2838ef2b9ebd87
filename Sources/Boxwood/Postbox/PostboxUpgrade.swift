/// One step of a schema upgrade: run on a database at user version `from`, inside one transaction that also
/// records `to` as the new user version (all or nothing).
public struct PostboxUpgrade: Sendable {
    public let from: Int32
    public let to: Int32
    public let run: @Sendable (Transaction) throws -> Void

    public init(from: Int32, to: Int32, run: @escaping @Sendable (Transaction) throws -> Void) {
        self.from = from
        self.to = to
        self.run = run
    }
}
