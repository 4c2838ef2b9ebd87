import BoxwoodStore
/// A parsed full-text query: a list of phrases that must all match.
///
/// The query language (see `docs/full-text-index.md`):
/// - Whitespace separates terms; a document must match **every** term (AND).
/// - A bare word is tokenized like document text (``FullTextTokenizer``). If it yields one token, the term
///   is that token; if it yields several (`hello,world`, `don't`, `東京`), the term is the phrase of those
///   tokens at consecutive positions. A word that yields no token (`-`, `*`) is ignored.
/// - A trailing `*` makes the word's last token a prefix: `ab*` matches `ab`, `abc`, `abend`.
/// - `"a b c"` is a phrase: the tokens at consecutive positions. A `*` at the end of the phrase (`"a b*"`)
///   or right after its closing quote (`"a b"*`) makes the last token a prefix. An unterminated quote runs
///   to the end of the query. A `*` elsewhere is a separator.
/// - A query without any token matches nothing.
struct FullTextQuery {
    /// One term: tokens that must occur at consecutive positions, the last one possibly as a prefix. A single
    /// token is a phrase of length one.
    struct Phrase: Equatable {
        var tokens: [[UInt8]]
        var lastIsPrefix: Bool
    }

    var phrases: [Phrase] = []

    /// True when the query has no token: it matches nothing.
    var isEmpty: Bool { phrases.isEmpty }

    init(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        func isSpace(_ s: Unicode.Scalar) -> Bool { s.properties.isWhitespace }
        while i < scalars.count {
            if isSpace(scalars[i]) { i += 1; continue }
            var content = String.UnicodeScalarView()
            var prefix = false
            if scalars[i] == "\"" {
                i += 1
                while i < scalars.count && scalars[i] != "\"" { content.append(scalars[i]); i += 1 }
                if i < scalars.count { i += 1 }  // the closing quote
                if i < scalars.count && scalars[i] == "*" {
                    prefix = true
                    while i < scalars.count && scalars[i] == "*" { i += 1 }
                }
                while let last = content.last, isSpace(last) { content.removeLast() }
            } else {
                while i < scalars.count && !isSpace(scalars[i]) && scalars[i] != "\"" { content.append(scalars[i]); i += 1 }
            }
            if content.last == "*" {
                prefix = true
                while content.last == "*" { content.removeLast() }
            }
            var tokens = TokenList()
            FullTextTokenizer.tokenize(String(content), into: &tokens)
            guard tokens.count > 0 else { continue }
            phrases.append(Phrase(tokens: (0..<tokens.count).map { tokens.token($0) }, lastIsPrefix: prefix))
        }
    }
}
