/// Names and words the simulated world is made of (picked with the server's deterministic generator).
enum Vocabulary {
    static let firstNames = [
        "Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj",
        "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yuki",
    ]
    static let lastNames = [
        "Anders", "Brook", "Castro", "Dunn", "Evans", "Fischer", "Gallo", "Hart", "Ibarra", "Jensen", "Kato", "Lund",
        "Moreau", "Novak", "Okafor", "Petrov",
    ]
    static let words = [
        "hello", "meeting", "tomorrow", "coffee", "train", "late", "photo", "great", "thanks", "where", "box", "wood",
        "sync", "lunch", "weekend", "call", "later", "ok", "sure", "plan", "budget", "draft", "review", "ship", "today",
        "rain", "sun", "music", "book", "movie", "code", "bug", "fixed", "release", "party", "birthday", "maybe",
    ]
    static let titleWords = [
        "Hiking", "Family", "Work", "Chess", "Rust", "Swift", "News", "Travel", "Books", "Garden", "Cinema", "Jazz",
    ]

    /// A message text of 2–8 words.
    static func text(_ random: inout DeterministicRandom) -> String {
        let count = random.int(in: 2...8)
        return (0..<count).map { _ in random.element(of: words)! }.joined(separator: " ")
    }

    /// A group or channel title.
    static func title(_ random: inout DeterministicRandom, kind: String) -> String {
        "\(random.element(of: titleWords)!) \(kind) \(random.int(in: 1...99))"
    }

    /// A username derived from a first name (sometimes none).
    static func username(_ random: inout DeterministicRandom, firstName: String) -> String? {
        random.chance(0.25) ? nil : "\(firstName.lowercased())_\(random.int(in: 1...9999))"
    }
}
