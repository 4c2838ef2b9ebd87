import Testing
@testable import BoxwoodStore
@testable import BoxwoodFullText

/// Fixed expectations for ``FullTextTokenizer`` and the query parser.
@Suite struct FullTextTokenizerTests {
    private func tokens(_ text: String) -> [String] { FullTextTokenizer.tokens(in: text) }

    @Test func latinDiacriticsAreFolded() {
        #expect(tokens("Crème Brûlée") == ["creme", "brulee"])
        #expect(tokens("naïve café, Ångström; Łódź") == ["naive", "cafe", "angstrom", "łodz"])
        #expect(tokens("ÜBER straße") == ["uber", "straße"])
        // Decomposed input folds like precomposed input.
        #expect(tokens("Cre\u{300}me") == ["creme"])
    }

    @Test func cyrillicIsCaseFolded() {
        #expect(tokens("ПРИВЕТ, Мир!") == ["привет", "мир"])
        #expect(tokens("Ёлка и йогурт") == ["елка", "и", "иогурт"])
        #expect(tokens("Київ") == ["киів"])
    }

    /// The ASCII + Cyrillic fast path gives the tokens of the general path (NFKD, graphemes): for every scalar
    /// of U+0400–U+045F and every ASCII scalar, alone and between letters, and for random mixes (seed printed).
    @Test func cyrillicFastPathMatchesTheGeneralPath() {
        func both(_ text: String) -> (fast: [String], general: [String])? {
            var fast = TokenList(), general = TokenList()
            guard FullTextTokenizer.tokenizeCyrillic(text, into: &fast) else { return nil }
            FullTextTokenizer.tokenizeUnicode(text, into: &general)
            return ((0..<fast.count).map { fast.string($0) }, (0..<general.count).map { general.string($0) })
        }
        let scalars = (0..<0x80).map { Unicode.Scalar(UInt32($0))! } + (0x400...0x45F).map { Unicode.Scalar(UInt32($0))! }
        for scalar in scalars {
            for text in ["\(scalar)", "а\(scalar)b", "Z\(scalar)\(scalar)я "] {
                let result = both(text)
                #expect(result != nil && result!.fast == result!.general, "\(text.debugDescription)")
            }
        }
        let seed = UInt64.random(in: 0...UInt64.max)
        print("cyrillicFastPathMatchesTheGeneralPath seed: \(seed)")
        var rng = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<rng.below(40) { text.append(scalars[rng.below(scalars.count)]) }
            let result = both(String(text))
            #expect(result != nil && result!.fast == result!.general, "seed \(seed): \(String(text).debugDescription)")
        }
        // Any other scalar leaves the text to the general path.
        var list = TokenList()
        for text in ["привет é", "мир 🎉", "е\u{308}", "ѐ\u{460}", "Ωмега"] {
            #expect(!FullTextTokenizer.tokenizeCyrillic(text, into: &list) && list.count == 0, "\(text.debugDescription)")
        }
    }

    @Test func greekFoldsCaseAccentsAndFinalSigma() {
        #expect(tokens("ΟΔΟΣ οδός Σοφία") == ["οδοσ", "οδοσ", "σοφια"])
    }

    @Test func arabicAndHebrewLoseVowelMarks() {
        #expect(tokens("مَرْحَبًا بالعالم") == ["مرحبا", "بالعالم"])
        #expect(tokens("שָׁלוֹם עולם") == ["שלום", "עולם"])
    }

    @Test func indicMarksStay() {
        #expect(tokens("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"])
    }

    @Test func scriptsWithoutSpacesGiveOneTokenPerCharacter() {
        #expect(tokens("東京タワーへ行く") == ["東", "京", "タ", "ワ", "ー", "へ", "行", "く"])
        #expect(tokens("日本語abc中文") == ["日", "本", "語", "abc", "中", "文"])
        #expect(tokens("สวัสดี") == ["ส", "วั", "ส", "ดี"])
        // Voicing marks stay with their kana; half-width kana become full-width.
        #expect(tokens("がｶﾞ") == ["が", "ガ"])
    }

    @Test func emojiAreTokens() {
        #expect(tokens("party🎉time") == ["party", "🎉", "time"])
        #expect(tokens("👍🏽 ❤️ ❤") == ["👍", "❤", "❤"])
        #expect(tokens("🇩🇪🇫🇷") == ["🇩🇪", "🇫🇷"])
        #expect(tokens("👨‍👩‍👧 ok") == ["👨‍👩‍👧", "ok"])
        #expect(tokens("1️⃣ #1") == ["1\u{20E3}", "1"])
    }

    @Test func digitsAndPunctuation() {
        #expect(tokens("Room 101, pi=3.14; call +1-555-0100") == ["room", "101", "pi", "3", "14", "call", "1", "555", "0100"])
        #expect(tokens("Don't stop—it's fine!") == ["don", "t", "stop", "it", "s", "fine"])
        #expect(tokens("snake_case e-mail @user #tag") == ["snake", "case", "e", "mail", "user", "tag"])
        #expect(tokens("ＡＢＣ ﬁne ①") == ["abc", "fine", "1"])
    }

    @Test func formatCharactersAreIgnored() {
        #expect(tokens("co\u{AD}operate") == ["cooperate"])
        #expect(tokens("a\u{200B}b") == ["ab"])
    }

    @Test func emptyAndSeparatorOnlyTextHasNoTokens() {
        #expect(tokens("") == [])
        #expect(tokens("  ,,, -- !! \n\t") == [])
    }

    @Test func longTokensAreCut() {
        #expect(tokens(String(repeating: "a", count: 300)) == [String(repeating: "a", count: FullTextTokenizer.maxTokenBytes)])
        // Cut at a scalar boundary: 2-byte scalars, 64 of them fit.
        #expect(tokens(String(repeating: "ж", count: 100)) == [String(repeating: "ж", count: 64)])
        #expect(tokens(String(repeating: "a", count: 127) + "ж" + "b") == [String(repeating: "a", count: 127)])
    }

    @Test func tokensTokenizeToThemselves() {
        let text = "Crème ПРИВЕТ οδός 東京 สวัสดี 👍🏽 1️⃣ مَرْحَبًا"
        for token in tokens(text) { #expect(tokens(token) == [token]) }
    }

    // MARK: Query parsing

    private func phrases(_ query: String) -> [([String], Bool)] {
        FullTextQuery(query).phrases.map { ($0.tokens.map { String(decoding: $0, as: UTF8.self) }, $0.lastIsPrefix) }
    }

    @Test func queryTermsPrefixesAndPhrases() {
        #expect(phrases("Hello  world*").elementsEqual([(["hello"], false), (["world"], true)], by: ==))
        #expect(phrases("\"a b c*\" d").elementsEqual([(["a", "b", "c"], true), (["d"], false)], by: ==))
        #expect(phrases("\"a b\"* \"c").elementsEqual([(["a", "b"], true), (["c"], false)], by: ==))
        #expect(phrases("don't 東京*").elementsEqual([(["don", "t"], false), (["東", "京"], true)], by: ==))
        #expect(phrases("hello,  world*").elementsEqual([(["hello"], false), (["world"], true)], by: ==))
        #expect(phrases("a*b").elementsEqual([(["a", "b"], false)], by: ==))
        #expect(phrases("* - , \"\" ** \"!\"").isEmpty)
        #expect(phrases("").isEmpty)
    }
}
