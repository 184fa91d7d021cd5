import Foundation

/// A parsed calibration file before its meaning is read: what OpenCV's `cv::FileStorage` (YAML or
/// XML) and ROS' `camera_info` YAML hold — mappings, sequences, scalars, and `!!opencv-matrix` tags.
public indirect enum StorageNode: Equatable, Sendable {
    /// A plain or quoted scalar, as text (quotes removed, escapes resolved).
    case scalar(String)
    case sequence([StorageNode])
    /// Keys in file order.
    case mapping([(String, StorageNode)])
    /// A node with a tag: `!!opencv-matrix` (YAML) or `type_id="opencv-matrix"` (XML) → "opencv-matrix".
    case tagged(String, StorageNode)

    public static func == (a: StorageNode, b: StorageNode) -> Bool {
        switch (a, b) {
        case let (.scalar(x), .scalar(y)): return x == y
        case let (.sequence(x), .sequence(y)): return x == y
        case let (.mapping(x), .mapping(y)): return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.tagged(t, x), .tagged(u, y)): return t == u && x == y
        default: return false
        }
    }

    /// The node without its tag.
    public var untagged: StorageNode { if case .tagged(_, let n) = self { return n.untagged }; return self }
    public var tag: String? { if case .tagged(let t, _) = self { return t }; return nil }

    /// The value of `key` in a mapping (nil for other nodes or a missing key).
    public subscript(key: String) -> StorageNode? {
        guard case .mapping(let pairs) = untagged else { return nil }
        return pairs.first { $0.0 == key }?.1
    }
}

/// A small YAML reader for calibration files: block mappings and sequences by indentation, flow
/// sequences and mappings (`[...]`, `{...}`, over several lines too), plain, single- and
/// double-quoted scalars, `#` comments, tags (`!!opencv-matrix`), the `%YAML:1.0` directive OpenCV
/// writes and `---` / `...` markers. Anything else YAML can say (anchors and aliases, block scalars
/// `|` `>`, complex keys, several documents, tabs for indentation) is refused with one line naming
/// the line — these files never use it.
public enum YAMLSubset {
    public struct Failure: Error, CustomStringConvertible {
        public let line: Int
        public let problem: String
        public var description: String { line > 0 ? "line \(line): \(problem)" : problem }
    }

    struct Line { var number: Int; var indent: Int; var text: String }
    /// Deepest nesting of collections read (block levels and flow brackets each); calibration files use 3.
    static let maxDepth = 64

    /// Parses `text` into its root node (a mapping for every calibration file).
    public static func parse(_ text: String) throws -> StorageNode {
        var lines = try logicalLines(text)
        guard !lines.isEmpty else { throw Failure(line: 0, problem: "empty document") }
        var i = 0
        let root = try parseBlock(&lines, &i, indent: lines[0].indent)
        if i < lines.count { throw Failure(line: lines[i].number, problem: "unexpected indentation") }
        return root
    }

    // MARK: Lines

    /// Lines without comments, blank lines and markers; a flow collection open at a line's end is
    /// joined with the following lines until it closes.
    static func logicalLines(_ text: String) throws -> [Line] {
        var out: [Line] = []
        var pending: Line?
        var depth = 0
        var documents = 0
        for (n, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let number = n + 1
            var s = String(raw)
            if s.hasSuffix("\r") { s.removeLast() }
            if n == 0, s.hasPrefix("\u{FEFF}") { s.removeFirst() }
            let stripped = try stripComment(s, line: number)
            if pending != nil {
                let t = stripped.trimmingCharacters(in: .whitespaces)
                if !t.isEmpty {
                    pending!.text += " " + t
                    depth += try flowDepthChange(t, line: number)
                }
                if depth <= 0 { out.append(pending!); pending = nil; depth = 0 }
                continue
            }
            let content = stripped.drop { $0 == " " }
            if content.isEmpty { continue }
            if content.first == "\t" || stripped.prefix(while: { $0 == " " || $0 == "\t" }).contains("\t") {
                throw Failure(line: number, problem: "tab in indentation (YAML indents with spaces)")
            }
            let text = String(content).trimmingCharacters(in: .whitespaces)
            if stripped.first == "%" { continue }  // %YAML:1.0 / %YAML 1.2 / %TAG
            if text == "---" || text.hasPrefix("--- ") {
                documents += 1
                if documents > 1 { throw Failure(line: number, problem: "several YAML documents in one file") }
                let rest = text.dropFirst(3).trimmingCharacters(in: .whitespaces)
                if rest.isEmpty { continue }
                throw Failure(line: number, problem: "content on the '---' line")
            }
            if text == "..." { break }
            let line = Line(number: number, indent: stripped.count - content.count, text: text)
            let d = try flowDepthChange(text, line: number)
            if d > 0 { pending = line; depth = d } else { out.append(line) }
        }
        if let p = pending { throw Failure(line: p.number, problem: "'[' or '{' is never closed") }
        return out
    }

    /// `s` without a trailing `# comment` (a `#` at the start or after a space, outside quotes).
    static func stripComment(_ s: String, line: Int) throws -> String {
        var quote: Character?
        var previous: Character = " "
        var index = s.startIndex
        while index < s.endIndex {
            let c = s[index]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "#" && (previous == " " || previous == "\t") {
                return String(s[..<index])
            }
            previous = c
            index = s.index(after: index)
        }
        return s
    }

    /// Opened minus closed flow brackets outside quotes.
    static func flowDepthChange(_ s: String, line: Int) throws -> Int {
        var depth = 0
        var quote: Character?
        var escaped = false
        for c in s {
            if let q = quote {
                if escaped { escaped = false } else if c == "\\" && q == "\"" { escaped = true } else if c == q { quote = nil }
                continue
            }
            switch c {
            case "\"", "'": quote = c
            case "[", "{": depth += 1
            case "]", "}": depth -= 1
            default: break
            }
        }
        return depth
    }

    // MARK: Block structure

    static func parseBlock(_ lines: inout [Line], _ i: inout Int, indent: Int, level: Int = 0) throws -> StorageNode {
        let first = lines[i]
        if level > maxDepth { throw Failure(line: first.number, problem: "nested deeper than \(maxDepth) levels") }
        if first.text == "-" || first.text.hasPrefix("- ") { return try parseSequence(&lines, &i, indent: indent, level: level) }
        if try splitKey(first.text, line: first.number) != nil { return try parseMapping(&lines, &i, indent: indent, level: level) }
        // A lone value on its own line (a mapping value written below its key).
        i += 1
        return try parseInline(first.text, line: first.number)
    }

    static func parseSequence(_ lines: inout [Line], _ i: inout Int, indent: Int, level: Int) throws -> StorageNode {
        var items: [StorageNode] = []
        while i < lines.count, lines[i].indent == indent, lines[i].text == "-" || lines[i].text.hasPrefix("- ") {
            let line = lines[i]
            let rest = line.text.dropFirst(1).drop { $0 == " " }
            if rest.isEmpty {
                i += 1
                guard i < lines.count, lines[i].indent > indent else { items.append(.scalar("")); continue }
                items.append(try parseBlock(&lines, &i, indent: lines[i].indent, level: level + 1))
            } else if try splitKey(String(rest), line: line.number) != nil {
                // "- key: value" starts a mapping indented at the key's column.
                lines[i] = Line(number: line.number, indent: line.indent + (line.text.count - rest.count), text: String(rest))
                items.append(try parseMapping(&lines, &i, indent: lines[i].indent, level: level + 1))
            } else {
                i += 1
                items.append(try parseInline(String(rest), line: line.number))
            }
        }
        if i < lines.count, lines[i].indent > indent { throw Failure(line: lines[i].number, problem: "unexpected indentation") }
        return .sequence(items)
    }

    static func parseMapping(_ lines: inout [Line], _ i: inout Int, indent: Int, level: Int) throws -> StorageNode {
        if level > maxDepth { throw Failure(line: lines[i].number, problem: "nested deeper than \(maxDepth) levels") }
        var pairs: [(String, StorageNode)] = []
        while i < lines.count, lines[i].indent == indent {
            let line = lines[i]
            guard let (key, rest) = try splitKey(line.text, line: line.number) else {
                throw Failure(line: line.number, problem: "expected 'key: value'")
            }
            if pairs.contains(where: { $0.0 == key }) { throw Failure(line: line.number, problem: "key '\(key)' appears twice") }
            var value = rest
            var tag: String?
            if value.hasPrefix("!") {
                let t = value.prefix { $0 != " " }
                tag = String(t.drop { $0 == "!" })
                value = String(value.dropFirst(t.count)).trimmingCharacters(in: .whitespaces)
            }
            i += 1
            var node: StorageNode
            if value.isEmpty {
                if i < lines.count, lines[i].indent > indent {
                    node = try parseBlock(&lines, &i, indent: lines[i].indent, level: level + 1)
                } else if i < lines.count, lines[i].indent == indent, lines[i].text == "-" || lines[i].text.hasPrefix("- ") {
                    node = try parseSequence(&lines, &i, indent: indent, level: level + 1)  // a sequence at its key's indentation
                } else {
                    node = .scalar("")
                }
            } else {
                node = try parseInline(value, line: line.number)
            }
            pairs.append((key, tag.map { .tagged($0, node) } ?? node))
        }
        if i < lines.count, lines[i].indent > indent { throw Failure(line: lines[i].number, problem: "unexpected indentation") }
        return .mapping(pairs)
    }

    /// "key: rest" → (key, rest) when the line is a mapping entry; nil otherwise.
    static func splitKey(_ s: String, line: Int) throws -> (String, String)? {
        if s.hasPrefix("? ") { throw Failure(line: line, problem: "complex mapping keys ('? ') are not supported") }
        if s.first == "[" || s.first == "{" { return nil }
        let chars = Array(s)
        var quote: Character?
        var k = 0
        while k < chars.count {
            let c = chars[k]
            if let q = quote {
                if c == q { quote = nil }
            } else if (c == "\"" || c == "'") && k == 0 {
                quote = c
            } else if c == ":" && (k + 1 == chars.count || chars[k + 1] == " ") {
                var key = String(chars[..<k]).trimmingCharacters(in: .whitespaces)
                if key.first == "\"" || key.first == "'" { key = try unquote(key, line: line) }
                return (key, String(chars[(k + 1)...]).trimmingCharacters(in: .whitespaces))
            }
            k += 1
        }
        return nil
    }

    // MARK: Values on one (logical) line

    static func parseInline(_ s: String, line: Int) throws -> StorageNode {
        var p = FlowParser(chars: Array(s), line: line)
        let node = try p.value(inFlow: false)
        p.skipSpaces()
        if p.k < p.chars.count { throw Failure(line: line, problem: "unexpected '\(String(p.chars[p.k...]))'") }
        return node
    }

    static func unquote(_ s: String, line: Int) throws -> String {
        var p = FlowParser(chars: Array(s), line: line)
        guard case .scalar(let v) = try p.value(inFlow: false), p.k == p.chars.count else {
            throw Failure(line: line, problem: "bad quoted string \(s)")
        }
        return v
    }

    struct FlowParser {
        var chars: [Character]
        var line: Int
        var k = 0
        /// Flow collections open around `k`: deeper than `maxDepth` is refused (no file nests so).
        var depth = 0

        mutating func skipSpaces() { while k < chars.count, chars[k] == " " { k += 1 } }

        mutating func value(inFlow: Bool) throws -> StorageNode {
            skipSpaces()
            guard k < chars.count else { return .scalar("") }
            switch chars[k] {
            case "[": return try sequence()
            case "{": return try mapping()
            case "\"", "'": return .scalar(try quoted())
            case "&", "*": throw Failure(line: line, problem: "anchors and aliases ('\(chars[k])') are not supported")
            case "|", ">": throw Failure(line: line, problem: "block scalars ('\(chars[k])') are not supported")
            case "!":
                let start = k
                while k < chars.count, chars[k] != " " { k += 1 }
                let tag = String(chars[start..<k]).drop { $0 == "!" }
                skipSpaces()
                if k < chars.count, chars[k] == "!" { throw Failure(line: line, problem: "two tags on one value") }
                return .tagged(String(tag), try value(inFlow: inFlow))
            default: return .scalar(plain(inFlow: inFlow))
            }
        }

        mutating func plain(inFlow: Bool) -> String {
            let start = k
            while k < chars.count {
                let c = chars[k]
                if inFlow && (c == "," || c == "]" || c == "}") { break }
                if inFlow && c == ":" && (k + 1 == chars.count || chars[k + 1] == " ") { break }
                k += 1
            }
            return String(chars[start..<k]).trimmingCharacters(in: .whitespaces)
        }

        mutating func quoted() throws -> String {
            let q = chars[k]
            k += 1
            var out = ""
            while k < chars.count {
                let c = chars[k]
                k += 1
                if q == "'" {
                    if c == "'" {
                        if k < chars.count, chars[k] == "'" { out.append("'"); k += 1; continue }
                        return out
                    }
                    out.append(c)
                } else {
                    if c == "\"" { return out }
                    if c == "\\" {
                        guard k < chars.count else { break }
                        let e = chars[k]
                        k += 1
                        switch e {
                        case "n": out.append("\n")
                        case "t": out.append("\t")
                        case "\\", "\"", "/": out.append(e)
                        default: out.append("\\"); out.append(e)
                        }
                    } else {
                        out.append(c)
                    }
                }
            }
            throw Failure(line: line, problem: "a quoted string is never closed")
        }

        mutating func enter() throws {
            depth += 1
            if depth > YAMLSubset.maxDepth { throw Failure(line: line, problem: "nested deeper than \(YAMLSubset.maxDepth) levels") }
        }

        mutating func sequence() throws -> StorageNode {
            try enter()
            defer { depth -= 1 }
            k += 1
            var items: [StorageNode] = []
            skipSpaces()
            if k < chars.count, chars[k] == "]" { k += 1; return .sequence(items) }
            while true {
                items.append(try value(inFlow: true))
                skipSpaces()
                guard k < chars.count else { throw Failure(line: line, problem: "'[' is never closed") }
                if chars[k] == "," {
                    k += 1
                    skipSpaces()
                    if k < chars.count, chars[k] == "]" { k += 1; return .sequence(items) }  // trailing comma
                    continue
                }
                if chars[k] == "]" { k += 1; return .sequence(items) }
                throw Failure(line: line, problem: "expected ',' or ']' in a flow sequence, found '\(chars[k])'")
            }
        }

        mutating func mapping() throws -> StorageNode {
            try enter()
            defer { depth -= 1 }
            k += 1
            var pairs: [(String, StorageNode)] = []
            skipSpaces()
            if k < chars.count, chars[k] == "}" { k += 1; return .mapping(pairs) }
            while true {
                skipSpaces()
                let keyNode = try value(inFlow: true)
                guard case .scalar(let key) = keyNode else { throw Failure(line: line, problem: "a flow mapping key must be a scalar") }
                skipSpaces()
                guard k < chars.count, chars[k] == ":" else { throw Failure(line: line, problem: "expected ':' after '\(key)' in a flow mapping") }
                k += 1
                pairs.append((key, try value(inFlow: true)))
                skipSpaces()
                guard k < chars.count else { throw Failure(line: line, problem: "'{' is never closed") }
                if chars[k] == "," { k += 1; continue }
                if chars[k] == "}" { k += 1; return .mapping(pairs) }
                throw Failure(line: line, problem: "expected ',' or '}' in a flow mapping, found '\(chars[k])'")
            }
        }
    }
}

/// OpenCV's XML storage (`<?xml …?><opencv_storage>…</opencv_storage>`, as `cv::FileStorage`
/// writes it): elements with child elements are mappings (children named `_` are sequence items),
/// elements with text are scalars, `type_id="opencv-matrix"` is a tag; comments, the XML
/// declaration and the five predefined entities are understood. Anything else is refused.
public enum OpenCVXML {
    public struct Failure: Error, CustomStringConvertible {
        public let problem: String
        public var description: String { problem }
    }

    public static func parse(_ text: String) throws -> StorageNode {
        var p = Parser(chars: Array(text))
        p.skipMisc()
        guard p.peek("<opencv_storage") else { throw Failure(problem: "no <opencv_storage> root element") }
        let (name, node) = try p.element()
        guard name == "opencv_storage" else { throw Failure(problem: "no <opencv_storage> root element") }
        p.skipMisc()
        guard p.k == p.chars.count else { throw Failure(problem: "content after </opencv_storage>") }
        return node
    }

    struct Parser {
        var chars: [Character]
        var k = 0
        var depth = 0

        func peek(_ s: String) -> Bool {
            var j = k
            for c in s { guard j < chars.count, chars[j] == c else { return false }; j += 1 }
            return true
        }

        mutating func skipSpace() { while k < chars.count, chars[k].isWhitespace { k += 1 } }

        /// Whitespace, comments, the XML declaration, a byte order mark.
        mutating func skipMisc() {
            while true {
                skipSpace()
                if k < chars.count, chars[k] == "\u{FEFF}" { k += 1; continue }
                if peek("<!--") { skipPast("-->"); continue }
                if peek("<?") { skipPast("?>"); continue }
                return
            }
        }

        mutating func skipPast(_ s: String) {
            while k < chars.count, !peek(s) { k += 1 }
            k = min(chars.count, k + s.count)
        }

        mutating func name() throws -> String {
            let start = k
            while k < chars.count, chars[k].isLetter || chars[k].isNumber || "_-.:".contains(chars[k]) { k += 1 }
            guard k > start else { throw Failure(problem: "expected an element name") }
            return String(chars[start..<k])
        }

        /// `<name attr="…">…</name>` or `<name/>`, at `k` on the `<`.
        mutating func element() throws -> (String, StorageNode) {
            depth += 1
            defer { depth -= 1 }
            if depth > YAMLSubset.maxDepth { throw Failure(problem: "elements nested deeper than \(YAMLSubset.maxDepth) levels") }
            k += 1
            let tagName = try name()
            var typeID: String?
            while true {
                skipSpace()
                guard k < chars.count else { throw Failure(problem: "<\(tagName)> is never closed") }
                if chars[k] == "/" {
                    guard peek("/>") else { throw Failure(problem: "bad '/' in <\(tagName)>") }
                    k += 2
                    return (tagName, wrap(.scalar(""), typeID))
                }
                if chars[k] == ">" { k += 1; break }
                let attr = try name()
                skipSpace()
                guard k < chars.count, chars[k] == "=" else { throw Failure(problem: "attribute \(attr) of <\(tagName)> has no value") }
                k += 1
                skipSpace()
                guard k < chars.count, chars[k] == "\"" || chars[k] == "'" else { throw Failure(problem: "attribute \(attr) of <\(tagName)> is not quoted") }
                let q = chars[k]
                k += 1
                let start = k
                while k < chars.count, chars[k] != q { k += 1 }
                guard k < chars.count else { throw Failure(problem: "attribute \(attr) of <\(tagName)> is never closed") }
                let value = String(chars[start..<k])
                k += 1
                if attr == "type_id" { typeID = value }
            }
            var text = ""
            var children: [(String, StorageNode)] = []
            while true {
                guard k < chars.count else { throw Failure(problem: "<\(tagName)> is never closed") }
                if peek("<!--") { skipPast("-->"); continue }
                if peek("</") {
                    k += 2
                    let closing = try name()
                    skipSpace()
                    guard closing == tagName, k < chars.count, chars[k] == ">" else {
                        throw Failure(problem: "<\(tagName)> closed by </\(closing)>")
                    }
                    k += 1
                    break
                }
                if chars[k] == "<" {
                    if peek("<![CDATA[") || peek("<!") { throw Failure(problem: "CDATA and declarations inside <\(tagName)> are not supported") }
                    children.append(try element())
                    continue
                }
                text.append(try character())
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if children.isEmpty { return (tagName, wrap(.scalar(unquoted(trimmed)), typeID)) }
            guard trimmed.isEmpty else { throw Failure(problem: "<\(tagName)> mixes text and elements") }
            if children.allSatisfy({ $0.0 == "_" }) { return (tagName, wrap(.sequence(children.map(\.1)), typeID)) }
            return (tagName, wrap(.mapping(children), typeID))
        }

        func wrap(_ n: StorageNode, _ typeID: String?) -> StorageNode { typeID.map { .tagged($0, n) } ?? n }

        /// OpenCV writes strings in double quotes inside the element.
        func unquoted(_ s: String) -> String {
            s.count >= 2 && s.first == "\"" && s.last == "\"" ? String(s.dropFirst().dropLast()) : s
        }

        mutating func character() throws -> Character {
            let c = chars[k]
            k += 1
            guard c == "&" else { return c }
            let start = k
            while k < chars.count, chars[k] != ";", k - start < 10 { k += 1 }
            guard k < chars.count, chars[k] == ";" else { throw Failure(problem: "bad '&' entity") }
            let entity = String(chars[start..<k])
            k += 1
            switch entity {
            case "lt": return "<"
            case "gt": return ">"
            case "amp": return "&"
            case "quot": return "\""
            case "apos": return "'"
            default: throw Failure(problem: "unknown entity &\(entity);")
            }
        }
    }
}
