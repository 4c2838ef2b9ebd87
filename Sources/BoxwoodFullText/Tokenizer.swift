import BoxwoodStore
import Foundation

/// Splits text into the tokens the full-text index stores, and that queries look up (documents, queries and
/// tags all go through the same rules, so whatever a document's text yields, the same text in a query finds).
///
/// The rules, in the spirit of SQLite FTS5's `unicode61 remove_diacritics 2`, with choices for chat messages:
/// 1. The text is normalised to NFKD (compatibility decomposition): full-width `ＡＢＣ` becomes `ABC`, the
///    ligature `ﬁ` becomes `fi`, `①` becomes `1`, half-width katakana become full-width ones, Hangul
///    syllables become their jamo.
/// 2. A token is a run of letters, numbers and combining marks (general categories L\*, N\*, M\*). Every other
///    character — spaces, punctuation (apostrophes and hyphens too: `don't` is `don` and `t`), symbols,
///    controls — separates tokens.
/// 3. Letters are lowercased (`Σ`→`σ`, and the final sigma `ς`→`σ`; `ß` stays `ß`).
/// 4. Diacritics are dropped: the combining marks of the Combining Diacritical Marks blocks (U+0300–036F,
///    U+1AB0–1AFF, U+1DC0–1DFF, U+20D0–20FF, U+FE20–FE2F), Hebrew points (U+0591–05C7) and Arabic harakat
///    (U+0610–061A, U+064B–065F, U+0670, U+06D6–06ED). So `Crème Brûlée` yields `creme brulee`, and Cyrillic
///    `ё`/`й` fold to `е`/`и`. Other marks (Devanagari vowel signs, Thai vowels, the Japanese voicing marks)
///    stay: they are part of the letter.
/// 5. Format characters (ZWJ, ZWNJ, soft hyphen, bidi marks; category Cf) and variation selectors are
///    ignored: they neither join nor split tokens, so `a\u{AD}b` is `ab`.
/// 6. Scripts written without spaces — Han ideographs, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar — give
///    one token per character (grapheme: a Thai consonant with its vowel marks is one token). A query for a
///    run of such characters is a phrase of consecutive tokens, so it finds the run anywhere in a text.
/// 7. Each emoji grapheme (a character whose first scalar has the Unicode Emoji property and is neither ASCII
///    nor a letter or number after NFKD; keycaps like `1️⃣` too) is one token, including ZWJ sequences and
///    flags; variation selectors and skin-tone modifiers are dropped from it, so `👍🏽` finds `👍`.
/// 8. A token longer than ``maxTokenBytes`` UTF-8 bytes is cut to its longest prefix of whole scalars that
///    fits: tokens equal in that prefix are the same token.
///
/// Each token has a position: its index in the text's token sequence (phrases match consecutive positions).
public enum FullTextTokenizer {
    /// The longest token kept, in UTF-8 bytes (longer tokens are cut, see rule 8).
    public static let maxTokenBytes = 128

    /// The tokens of `text`, in order (a token's index is its position).
    public static func tokens(in text: String) -> [String] {
        var list = TokenList()
        tokenize(text, into: &list)
        return (0..<list.count).map { list.string($0) }
    }

    /// Appends the tokens of `text` to `list`; returns true when `text` is ASCII (its tokens then follow from
    /// byte rules alone, see `FullTextDocument`).
    @discardableResult
    static func tokenize(_ text: String, into list: inout TokenList) -> Bool {
        var text = text
        let isASCII = text.withUTF8 { utf8 -> Bool in
            for byte in utf8 where byte >= 0x80 { return false }
            tokenizeASCIIBytes(UnsafeRawBufferPointer(utf8), into: &list)
            return true
        }
        if !isASCII && !tokenizeCyrillic(text, into: &list) { tokenizeUnicode(text, into: &list) }
        return isASCII
    }

    /// The fast path for text of ASCII and basic Cyrillic (U+0400–U+045F) only: each scalar is its own
    /// character there, and NFKD only splits the 16 precomposed letters below into a base letter and a
    /// diacritic that rule 4 drops, so the text needs no normalisation and no grapheme breaking. Returns false,
    /// appending nothing, when another scalar occurs (`tokenizeUnicode` then does the work). The tokenizer tests
    /// check it against `tokenizeUnicode` for every scalar of the range.
    static func tokenizeCyrillic(_ text: String, into list: inout TokenList) -> Bool {
        for scalar in text.unicodeScalars where scalar.value >= 0x80 && !(0x400...0x45F).contains(scalar.value) { return false }
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x80 {
                appendASCII(UInt8(v), to: &list)
            } else {
                // U+0400…U+045F, and their base letters: valid scalars.
                appendWordScalar(Unicode.Scalar(cyrillicBase(v))!, to: &list)
            }
        }
        list.finishToken()
        return true
    }

    /// The base letter of a precomposed letter of U+0400–U+045F (its canonical decomposition without the
    /// diacritic), or the letter itself.
    @inline(__always)
    private static func cyrillicBase(_ v: UInt32) -> UInt32 {
        switch v {
        case 0x400, 0x401: return 0x415   // Ѐ Ё → Е
        case 0x403: return 0x413          // Ѓ → Г
        case 0x407: return 0x406          // Ї → І
        case 0x40C: return 0x41A          // Ќ → К
        case 0x40D, 0x419: return 0x418   // Ѝ Й → И
        case 0x40E: return 0x423          // Ў → У
        case 0x450, 0x451: return 0x435   // ѐ ё → е
        case 0x453: return 0x433          // ѓ → г
        case 0x457: return 0x456          // ї → і
        case 0x45C: return 0x43A          // ќ → к
        case 0x45D, 0x439: return 0x438   // ѝ й → и
        case 0x45E: return 0x443          // ў → у
        default: return v
        }
    }

    /// Appends the tokens of ASCII text given as bytes to `list` (the same tokens as `tokenize` of that text);
    /// returns false, appending nothing, when a byte is not ASCII.
    static func tokenizeASCII(_ bytes: UnsafeRawBufferPointer, into list: inout TokenList) -> Bool {
        for byte in bytes where byte >= 0x80 { return false }
        tokenizeASCIIBytes(bytes, into: &list)
        return true
    }

    /// The fast path for ASCII text: runs of `[A-Za-z0-9]`, lowercased.
    private static func tokenizeASCIIBytes(_ utf8: UnsafeRawBufferPointer, into list: inout TokenList) {
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                list.append(ascii: byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                list.append(ascii: byte | 0x20)
            default:
                list.finishToken()
            }
        }
        list.finishToken()
    }

    /// The general path: NFKD, then rules 2–8 per character.
    static func tokenizeUnicode(_ text: String, into list: inout TokenList) {
        let decomposed = text.decomposedStringWithCompatibilityMapping
        for character in decomposed {
            if character.isASCII {
                for byte in character.utf8 { appendASCII(byte, to: &list) }
                continue
            }
            let scalars = character.unicodeScalars
            let first = scalars.first!  // a Character holds at least one scalar
            if isEmoji(first, scalars) {
                list.finishToken()
                for scalar in scalars where !isEmojiDecoration(scalar) { list.append(scalar) }
                list.finishToken()
            } else if isWrittenWithoutSpaces(first) {
                list.finishToken()
                for scalar in scalars where isTokenScalar(scalar) { appendFolded(scalar, to: &list) }
                list.finishToken()
            } else {
                for scalar in scalars { appendWordScalar(scalar, to: &list) }
            }
        }
        list.finishToken()
    }

    @inline(__always)
    private static func appendASCII(_ byte: UInt8, to list: inout TokenList) {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): list.append(ascii: byte)
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): list.append(ascii: byte | 0x20)
        default: list.finishToken()
        }
    }

    /// Rules 2–5 for one scalar outside emoji and scripts without spaces: appends it folded, skips it, or ends
    /// the current token. Cyrillic letters are folded without Unicode table lookups.
    @inline(__always)
    private static func appendWordScalar(_ scalar: Unicode.Scalar, to list: inout TokenList) {
        let v = scalar.value
        if v < 0x80 { appendASCII(UInt8(v), to: &list); return }
        if v >= 0x400 && v < 0x460 {
            // Cyrillic (U+0400..U+045F) maps into U+0430..U+045F: valid scalars, never surrogates.
            list.append(Unicode.Scalar(v < 0x410 ? v + 0x50 : v < 0x430 ? v + 0x20 : v)!)
            return
        }
        if isDiacritic(v) || (0xFE00...0xFE0F).contains(v) || (0xE0100...0xE01EF).contains(v) { return }
        switch scalar.properties.generalCategory {
        case .format:
            return
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber,
             .nonspacingMark, .spacingMark, .enclosingMark:
            appendFolded(scalar, to: &list)
        default:
            list.finishToken()
        }
    }

    /// Lowercases a token scalar and appends it, dropping diacritics the lowercase mapping may produce.
    @inline(__always)
    private static func appendFolded(_ scalar: Unicode.Scalar, to list: inout TokenList) {
        let v = scalar.value
        if v < 0x80 { appendASCII(UInt8(v), to: &list); return }
        if isDiacritic(v) { return }
        let sigma: Unicode.Scalar = "\u{3C3}"
        if v == 0x3C2 { list.append(sigma); return }  // final sigma
        let properties = scalar.properties
        if properties.changesWhenLowercased {
            for lower in properties.lowercaseMapping.unicodeScalars where !isDiacritic(lower.value) {
                list.append(lower.value == 0x3C2 ? sigma : lower)
            }
        } else {
            list.append(scalar)
        }
    }

    /// Letters, numbers and marks (rule 2).
    @inline(__always)
    static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber,
             .nonspacingMark, .spacingMark, .enclosingMark:
            return !isIgnored(scalar)
        default:
            return false
        }
    }

    /// Format characters and variation selectors (rule 5) and diacritics (rule 4): skipped inside a token.
    @inline(__always)
    static func isIgnored(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if isDiacritic(v) || (0xFE00...0xFE0F).contains(v) || (0xE0100...0xE01EF).contains(v) { return true }
        return scalar.properties.generalCategory == .format
    }

    /// The combining marks rule 4 removes.
    @inline(__always)
    static func isDiacritic(_ v: UInt32) -> Bool {
        if v < 0x300 { return false }
        return (0x300...0x36F).contains(v)
            || (0x591...0x5C7).contains(v) && v != 0x5BE && v != 0x5C0 && v != 0x5C3 && v != 0x5C6
            || (0x610...0x61A).contains(v) || (0x64B...0x65F).contains(v) || v == 0x670 || (0x6D6...0x6ED).contains(v) && v != 0x6DD && v != 0x6DE && v != 0x6E5 && v != 0x6E6 && v != 0x6E9
            || (0x1AB0...0x1AFF).contains(v) || (0x1DC0...0x1DFF).contains(v)
            || (0x20D0...0x20FF).contains(v) || (0xFE20...0xFE2F).contains(v)
    }

    /// Rule 6: scripts whose characters are each a token.
    @inline(__always)
    static func isWrittenWithoutSpaces(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0xE00 { return false }
        return (0xE00...0xEFF).contains(v)        // Thai, Lao
            || (0x1000...0x109F).contains(v)      // Myanmar
            || (0x1780...0x17FF).contains(v)      // Khmer
            || (0x19E0...0x19FF).contains(v)      // Khmer symbols
            || (0x3005...0x3007).contains(v)      // 々 〆 〇
            || (0x3040...0x30FF).contains(v)      // Hiragana, Katakana
            || (0x31F0...0x31FF).contains(v)      // Katakana phonetic extensions
            || (0xAA60...0xAA7F).contains(v) || (0xA9E0...0xA9FF).contains(v)  // Myanmar extensions
            || (0xFF66...0xFF9F).contains(v)      // half-width Katakana
            || scalar.properties.isIdeographic
    }

    /// Rule 7: the grapheme starting with `first` is an emoji.
    @inline(__always)
    static func isEmoji(_ first: Unicode.Scalar, _ scalars: Character.UnicodeScalarView) -> Bool {
        if first.value < 0x80 { return scalars.contains { $0.value == 0x20E3 } }  // keycaps: 1️⃣ #️⃣
        let properties = first.properties
        guard properties.isEmoji else { return false }
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber:
            return false
        default:
            return true
        }
    }

    /// Scalars dropped from an emoji token: variation selectors and skin-tone modifiers.
    @inline(__always)
    static func isEmojiDecoration(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v == 0xFE0E || v == 0xFE0F || (0x1F3FB...0x1F3FF).contains(v)
    }
}
