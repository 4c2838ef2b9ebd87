import BoxwoodStore

/// The synthetic chat messages of the `full-text` workload: deterministic for a seed, with word frequencies
/// following a Zipf law over a vocabulary of 3,000 Latin-script words (250 common English chat words first,
/// then pronounceable made-up words), 10% of the messages in Russian-looking Cyrillic words (300 of them, no
/// `й`/`ё`, whose diacritic folding SQLite's tokenizer may treat differently), 5% ending with an emoji (after
/// the last word, so phrase positions are the same for both tokenizers). Messages are spread over chats by a
/// Zipf law too, so some chats are busy.
final class FullTextCorpus {
    struct Message {
        let chat: Int
        let collectionId: String
        let itemId: String
        let contents: String
        let tags: String
    }

    static let chatCount = 1_000
    let messages: [Message]
    /// The Latin-script vocabulary, most frequent first.
    let vocabulary: [String]
    /// Message indices per chat.
    let messagesOfChat: [[Int]]

    init(count: Int, seed: UInt64) {
        var rng = SplitMix64(seed: SplitMix64.mix(seed ^ 0x4654_5343_4F52_5055))
        let vocabulary = FullTextCorpus.makeVocabulary(FullTextCorpus.english, syllables: FullTextCorpus.latinSyllables, count: 3_000, &rng)
        let cyrillic = FullTextCorpus.makeVocabulary([], syllables: FullTextCorpus.cyrillicSyllables, count: 300, &rng)
        let words = ZipfSampler(count: vocabulary.count)
        let cyrillicWords = ZipfSampler(count: cyrillic.count)
        let chats = ZipfSampler(count: FullTextCorpus.chatCount)
        var nextId = [Int](repeating: 0, count: FullTextCorpus.chatCount)
        var messagesOfChat = [[Int]](repeating: [], count: FullTextCorpus.chatCount)
        var messages: [Message] = []
        messages.reserveCapacity(count)
        for n in 0..<count {
            let chat = chats.sample(&rng)
            nextId[chat] += 1
            let russian = rng.chance(0.1)
            let length = 3 + rng.below(18)
            var text = ""
            for i in 0..<length {
                var word = russian ? cyrillic[cyrillicWords.sample(&rng)] : vocabulary[words.sample(&rng)]
                if i == 0 && !russian { word = word.prefix(1).uppercased() + word.dropFirst() }
                text += word
                if i == length - 1 {
                    text += [".", "!", "?", ""][rng.below(4)]
                } else {
                    text += rng.below(8) == 0 ? ", " : " "
                }
            }
            if rng.chance(0.05) { text += " " + FullTextCorpus.emoji[rng.below(FullTextCorpus.emoji.count)] }
            let peer = 1_000_000 + chat
            let tags = rng.chance(0.3) ? "t\(1 << rng.below(8))" : ""
            messages.append(Message(chat: chat, collectionId: "p\(peer)", itemId: "p\(peer)a0b\(nextId[chat])", contents: text, tags: tags))
            messagesOfChat[chat].append(n)
        }
        self.messages = messages
        self.vocabulary = vocabulary
        self.messagesOfChat = messagesOfChat
    }

    /// `base`, then distinct made-up words of 2 to 4 syllables, up to `count` words.
    private static func makeVocabulary(_ base: [String], syllables: [String], count: Int, _ rng: inout SplitMix64) -> [String] {
        var words = base
        var seen = Set(base)
        while words.count < count {
            var word = ""
            for _ in 0..<(2 + rng.below(3)) { word += syllables[rng.below(syllables.count)] }
            if seen.insert(word).inserted { words.append(word) }
        }
        return words
    }

    private static let english = """
        i you the to a and is it that of in for me my we on have be this not are do was with your so but just what \
        at can all if get like no will know im up its out about one now how go good there they he then yes see when \
        time ok okay think well got want would need did from as today tomorrow tonight morning night later soon \
        here where who why lol thanks thank love great sure sorry please call meet meeting home work office back let \
        come going make really right still some something maybe also more much very too because an or him her them \
        us our their his she were been has had could should said say tell told ask coffee dinner lunch food train \
        bus car ticket flight hotel trip weekend friday saturday sunday monday party birthday photo video picture \
        link file send sent message phone number address price money pay paid buy bought shop store order game \
        play watch movie music song happy fun nice cool awesome beautiful new old big little first last next week \
        month year day hour minute early late ready done wait check look find found lost open close start stop \
        help problem question answer idea plan project team boss client deadline email report document update \
        news weather rain sunny cold hot snow beach city street park school class exam study book read write \
        doctor hospital sick better feel tired sleep wake walk run drive ride fly stay leave arrive visit family \
        mom dad brother sister friend friends kids baby dog cat house room kitchen door key window
        """.split(separator: " ").map(String.init)

    private static let latinSyllables = ["ka", "lo", "mi", "ne", "ra", "to", "su", "vi", "be", "do", "fa", "gu", "ha", "je",
                                         "po", "ri", "sa", "te", "ul", "an", "er", "in", "on", "ar", "es", "or", "zu", "ke",
                                         "ma", "ni", "sho", "tra", "bel", "mon", "dor", "vin"]
    private static let cyrillicSyllables = ["ка", "ло", "ми", "не", "ра", "то", "су", "ви", "бе", "до", "за", "гу", "ха",
                                            "же", "по", "ри", "са", "те", "ул", "ан", "ер", "ин", "он", "ар", "ес", "ор",
                                            "мо", "ны", "пра", "сто", "гра", "ль"]
    static let emoji = ["🎉", "👍", "❤️", "😂", "🙏", "🔥", "😊", "👍🏽"]
}

/// Draws ranks 0..<count with probability proportional to 1 / (rank + 1).
struct ZipfSampler {
    private let cumulative: [Double]

    init(count: Int) {
        var total = 0.0
        cumulative = (0..<count).map { rank in
            total += 1 / Double(rank + 1)
            return total
        }
    }

    func sample(_ rng: inout SplitMix64) -> Int {
        let u = Double(rng.next() >> 11) / Double(1 << 53) * cumulative[cumulative.count - 1]
        var low = 0, high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] < u { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
