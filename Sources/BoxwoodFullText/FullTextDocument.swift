import BoxwoodStore
/// The record of one indexed item, the value of `documents[docId]` (layout 3):
///
///     varint length, collectionId (UTF-8)
///     varint length, itemId (UTF-8)
///     byte form
///     form 0 (text; tags and contents are ASCII):
///         varint length, tags text
///         contents text (the rest of the record)
///     form 1 (tokens; any other text):
///         varint count, then per distinct tag token (ascending bytes): varint length, bytes
///         varint count, then per distinct content token (ascending bytes):
///             varint length, bytes, varint count, positions (first absolute, then deltas; ascending)
///
/// It is what removal needs (every list the document is in) and what a query checks a candidate against
/// (phrase positions, prefixes, the collection and the tags), so a query reads one record per candidate.
///
/// Invariant (kept by `encode` and `FullTextDocumentTerms.init`): the tokens a record yields are exactly the
/// tokens `fullTextSet` put into the lists. Form 0 keeps the text, which is shorter than its tokens with their
/// positions, and is re-tokenized when read: only for ASCII text, whose tokenization (byte rules, no Unicode
/// tables) can never change between versions of the tokenizer or of Unicode. Form 1 keeps the tokens
/// themselves, so that a later Unicode version (new letters, emoji) cannot change which lists a stored
/// document is in.
enum FullTextDocument {
    /// The form byte of a record holding ASCII text.
    static let textForm: UInt8 = 0
    /// The form byte of a record holding tokens.
    static let tokenForm: UInt8 = 1

    /// Appends a record in text form: `tags` and `contents` must be ASCII (`FullTextTokenizer.tokenize`
    /// returned true for both).
    static func encode(collection: [UInt8], item: [UInt8], asciiTags tags: String, asciiContents contents: String, into out: ByteBuffer) {
        var tags = tags, contents = contents
        tags.withUTF8 { tags in
            contents.withUTF8 { contents in
                appendTextForm(collection: collection, item: item, tags: UnsafeRawBufferPointer(tags),
                               contents: UnsafeRawBufferPointer(contents), into: out)
            }
        }
    }

    /// Appends a record in text form from the bytes of its ASCII `tags` and `contents`.
    private static func appendTextForm(collection: [UInt8], item: [UInt8], tags: UnsafeRawBufferPointer,
                                       contents: UnsafeRawBufferPointer, into out: ByteBuffer) {
        out.reserve(collection.count + item.count + tags.count + contents.count + 16)
        appendField(collection[...], to: out)
        appendField(item[...], to: out)
        out.appendVarint(UInt64(textForm))
        out.appendVarint(UInt64(tags.count))
        out.append(tags)
        out.append(contents)
    }

    /// Appends a record in token form.
    static func encode(collection: [UInt8], item: [UInt8],
                       tags: TokenList, distinctTags: [(token: Range<Int>, positions: [Int32])],
                       contents: TokenList, terms: [(token: Range<Int>, positions: [Int32])], into out: ByteBuffer) {
        out.reserve(collection.count + item.count + tags.bytes.count + contents.bytes.count * 2 + 16)
        appendField(collection[...], to: out)
        appendField(item[...], to: out)
        out.appendVarint(UInt64(tokenForm))
        out.appendVarint(UInt64(distinctTags.count))
        for tag in distinctTags { appendField(tags.bytes[tag.token], to: out) }
        out.appendVarint(UInt64(terms.count))
        for term in terms {
            appendField(contents.bytes[term.token], to: out)
            out.appendVarint(UInt64(term.positions.count))
            FullTextPositions.encode(term.positions, into: out)
        }
    }

    /// Appends record `view` with its tags replaced by `tags` (tokenized into `tagTokens`, `distinctTags` ascending)
    /// and its contents kept: a text-form record stays in text form when `tags` is ASCII (`asciiTags`), and
    /// becomes a token-form record otherwise (its ASCII contents tokenized); a token-form record keeps its
    /// content section byte for byte. False when the record is malformed.
    static func encode(replacingTagsOf view: FullTextDocumentView, tags: String, asciiTags: Bool, tagTokens: TokenList,
                       distinctTags: [(token: Range<Int>, positions: [Int32])], into out: ByteBuffer) -> Bool {
        let collection = [UInt8](view.collection), item = [UInt8](view.item)
        do throws(ByteReadError) {
            var reader = ByteReader(view.rest)
            let form = try reader.varint()
            switch form {
            case UInt64(textForm):
                _ = try FullTextDocumentView.field(&reader)
                let contents = try reader.bytes(reader.remaining)
                if asciiTags {
                    var tags = tags
                    tags.withUTF8 { tags in
                        appendTextForm(collection: collection, item: item, tags: UnsafeRawBufferPointer(tags), contents: contents, into: out)
                    }
                    return true
                }
                var contentTokens = TokenList()
                guard FullTextTokenizer.tokenizeASCII(contents, into: &contentTokens) else { return false }
                encode(collection: collection, item: item, tags: tagTokens, distinctTags: distinctTags,
                       contents: contentTokens, terms: contentTokens.distinctTokens(), into: out)
                return true
            case UInt64(tokenForm):
                let tagCount = try reader.varint()
                guard tagCount <= UInt64(reader.remaining) else { return false }
                for _ in 0..<tagCount { _ = try FullTextDocumentView.field(&reader) }
                let contentSection = try reader.bytes(reader.remaining)
                out.reserve(collection.count + item.count + tagTokens.bytes.count + contentSection.count + 16)
                appendField(collection[...], to: out)
                appendField(item[...], to: out)
                out.appendVarint(UInt64(tokenForm))
                out.appendVarint(UInt64(distinctTags.count))
                for tag in distinctTags { appendField(tagTokens.bytes[tag.token], to: out) }
                out.append(contentSection)
                return true
            default:
                return false
            }
        } catch {
            return false
        }
    }

    /// Appends a varint length, then the bytes.
    private static func appendField(_ bytes: ArraySlice<UInt8>, to out: ByteBuffer) {
        out.appendVarint(UInt64(bytes.count))
        bytes.withUnsafeBytes { out.append($0) }
    }
}

/// A parsed view of a document record's ids (no copies): valid while the bytes are.
struct FullTextDocumentView {
    let collection: UnsafeRawBufferPointer
    let item: UnsafeRawBufferPointer
    /// The rest of the record (its form and tokens), for `FullTextDocumentTerms.parse`.
    let rest: UnsafeRawBufferPointer

    /// Parses a record's ids; nil when they are malformed.
    init?(_ bytes: UnsafeRawBufferPointer) {
        do throws(ByteReadError) {
            var reader = ByteReader(bytes)
            collection = try Self.field(&reader)
            item = try Self.field(&reader)
            rest = try reader.bytes(reader.remaining)
        } catch {
            return nil
        }
    }

    /// A varint length, then that many bytes.
    static func field(_ reader: inout ByteReader) throws(ByteReadError) -> UnsafeRawBufferPointer {
        let length = try reader.varint()
        guard length <= UInt64(reader.remaining) else { throw .truncated(offset: reader.offset, needed: Int(clamping: length), available: reader.remaining) }
        return try reader.bytes(Int(length))
    }
}

/// The tag and content tokens of a document record, parsed into reusable buffers (a query checks many records
/// with one value). A text-form record is tokenized into its token sequence, which the checks scan (a chat
/// message has few tokens; no sorting); a token-form record gives its distinct tokens with their positions.
struct FullTextDocumentTerms {
    /// True when the record was in text form: `contents` and `tagTokens` hold token sequences.
    private var isSequence = false
    /// Text form: the tokens in text order (token `i` at position `i`). Token form: the distinct content
    /// tokens, ascending (positions in `positions`).
    private var contents = TokenList()
    /// The tag tokens (in text order, or distinct and ascending).
    private var tagTokens = TokenList()
    /// Token form: the positions of each distinct content token, back to back, and where each one's end.
    private var positionValues: [Int32] = []
    private var positionEnds: [Int] = []

    init() {}

    /// Parses the rest of a record (`FullTextDocumentView.rest`); false when it is malformed.
    mutating func parse(_ rest: UnsafeRawBufferPointer) -> Bool {
        contents.removeAll()
        tagTokens.removeAll()
        positionValues.removeAll(keepingCapacity: true)
        positionEnds.removeAll(keepingCapacity: true)
        do throws(ByteReadError) {
            var reader = ByteReader(rest)
            let form = try reader.varint()
            switch form {
            case UInt64(FullTextDocument.textForm):
                isSequence = true
                let tagText = try FullTextDocumentView.field(&reader)
                let contentText = try reader.bytes(reader.remaining)
                return FullTextTokenizer.tokenizeASCII(tagText, into: &tagTokens)
                    && FullTextTokenizer.tokenizeASCII(contentText, into: &contents)
            case UInt64(FullTextDocument.tokenForm):
                isSequence = false
                let tagCount = try Self.count(&reader)
                for _ in 0..<tagCount {
                    let tag = try FullTextDocumentView.field(&reader)
                    if tag.isEmpty { return false }  // tokens are never empty
                    tagTokens.append(token: tag)
                }
                let termCount = try Self.count(&reader)
                for _ in 0..<termCount {
                    let token = try FullTextDocumentView.field(&reader)
                    if token.isEmpty { return false }
                    contents.append(token: token)
                    let count = try Self.count(&reader)
                    var position: Int64 = 0
                    for i in 0..<count {
                        let delta = try reader.varint()
                        position = i == 0 ? Int64(truncatingIfNeeded: delta) : position &+ Int64(truncatingIfNeeded: delta)
                        positionValues.append(Int32(truncatingIfNeeded: position))
                    }
                    positionEnds.append(positionValues.count)
                }
                return true
            default:
                return false
            }
        } catch {
            return false
        }
    }

    /// A varint count of items that take at least a byte each (so never more than the record's length).
    private static func count(_ reader: inout ByteReader) throws(ByteReadError) -> Int {
        let count = try reader.varint()
        guard count <= UInt64(reader.buffer.count) else { throw .truncated(offset: reader.offset, needed: Int(clamping: count), available: reader.buffer.count) }
        return Int(count)
    }

    /// The distinct content tokens and the distinct tag tokens, each ascending (what removal needs: the lists
    /// the document is in).
    func distinctTokens() -> (terms: [[UInt8]], tags: [[UInt8]]) {
        func distinct(_ list: TokenList) -> [[UInt8]] {
            if !isSequence { return (0..<list.count).map { list.token($0) } }
            return list.distinctTokens().map { Array(list.bytes[$0.token]) }
        }
        return (distinct(contents), distinct(tagTokens))
    }

    /// True when content token `i` equals `token` or, when `prefix`, starts with it.
    @inline(__always)
    private func term(_ i: Int, _ all: UnsafeRawBufferPointer, matches token: UnsafeRawBufferPointer, prefix: Bool) -> Bool {
        let term = UnsafeRawBufferPointer(rebasing: all[contents.range(i)])
        return prefix ? hasBytePrefix(term, token) : compareBytes(term, token) == 0
    }

    /// Token form: the index of the first distinct term not below `token`.
    private func firstTerm(notBelow token: UnsafeRawBufferPointer, in all: UnsafeRawBufferPointer) -> Int {
        var low = 0, high = contents.count
        while low < high {
            let mid = (low + high) / 2
            if compareBytes(UnsafeRawBufferPointer(rebasing: all[contents.range(mid)]), token) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Token form: the positions of distinct term `i`.
    private func positions(ofTerm i: Int) -> ArraySlice<Int32> {
        positionValues[(i == 0 ? 0 : positionEnds[i - 1])..<positionEnds[i]]
    }

    /// The positions of the terms equal to `token` or, when `prefix`, starting with it; ascending.
    func positions(of token: UnsafeRawBufferPointer, prefix: Bool) -> [Int32] {
        contents.bytes.withUnsafeBytes { all in
            var result: [Int32] = []
            if isSequence {
                for i in 0..<contents.count where term(i, all, matches: token, prefix: prefix) { result.append(Int32(i)) }
                return result
            }
            var index = firstTerm(notBelow: token, in: all)
            var runs = 0
            while index < contents.count && term(index, all, matches: token, prefix: prefix) {
                result += positions(ofTerm: index)
                runs += 1
                index += 1
                if !prefix { break }
            }
            if runs > 1 { result.sort() }
            return result
        }
    }

    /// True when some term equals `token` or, when `prefix`, starts with it.
    func contains(_ token: UnsafeRawBufferPointer, prefix: Bool) -> Bool {
        contents.bytes.withUnsafeBytes { all in
            if isSequence {
                for i in 0..<contents.count where term(i, all, matches: token, prefix: prefix) { return true }
                return false
            }
            let index = firstTerm(notBelow: token, in: all)
            return index < contents.count && term(index, all, matches: token, prefix: prefix)
        }
    }

    /// True when the tags include `tag`.
    func hasTag(_ tag: UnsafeRawBufferPointer) -> Bool {
        tagTokens.bytes.withUnsafeBytes { all in
            (0..<tagTokens.count).contains { compareBytes(UnsafeRawBufferPointer(rebasing: all[tagTokens.range($0)]), tag) == 0 }
        }
    }
}
