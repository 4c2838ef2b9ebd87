/// The contents of an entry of an ordered item list (recent stickers, saved GIFs…), implemented by the app
/// and stored through the coder. A `Codable` item can be stored as a ``CodableEntry`` instead.
public protocol OrderedItemListEntryContents: PostboxCoding, Sendable {
    /// Whether `other` is the same contents.
    func isEqual(to other: any OrderedItemListEntryContents) -> Bool
}

extension OrderedItemListEntryContents where Self: Equatable {
    public func isEqual(to other: any OrderedItemListEntryContents) -> Bool { (other as? Self) == self }
}

extension CodableEntry: OrderedItemListEntryContents {}
