import Foundation

/// The few things depth photos keep in XMP, read from the packet's text without an XML library:
/// a property of a namespace (by URI, whatever prefix the packet binds it to) written as an
/// attribute (`apdi:FloatMinValue="1.5"`), a simple element (`<apdi:FloatMinValue>1.5</…>`) or an
/// `rdf:Seq`/`rdf:Bag` of `rdf:li` values. The first occurrence in document order wins (a Dynamic
/// Depth file's first camera). Entities (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`, numeric) are decoded.
public struct XMPPacket: Sendable, Equatable {
    public let text: String
    private let utf8: [UInt8]

    public init(text: String) {
        self.text = text
        utf8 = Array(text.utf8)
    }

    public init(bytes: ArraySlice<UInt8>) { self.init(text: String(decoding: bytes, as: UTF8.self)) }

    /// Apple's and Google's namespaces depthlens reads.
    public enum NS {
        public static let apdi = "http://ns.apple.com/pixeldatainfo/1.0/"
        public static let depthData = "http://ns.apple.com/depthData/1.0/"
        public static let gdepth = "http://ns.google.com/photos/1.0/depthmap/"
        public static let gimage = "http://ns.google.com/photos/1.0/image/"
        public static let xmpNote = "http://ns.adobe.com/xmp/note/"
        public static let ddContainer = "http://ns.google.com/photos/dd/1.0/container/"
        public static let ddItem = "http://ns.google.com/photos/dd/1.0/item/"
        public static let ddDepthMap = "http://ns.google.com/photos/dd/1.0/depthmap/"
        public static let ddImagingModel = "http://ns.google.com/photos/dd/1.0/imagingmodel/"
        public static let ddDevice = "http://ns.google.com/photos/dd/1.0/device/"
    }

    /// The prefixes bound to `namespace` (`xmlns:P="URI"`), first binding first.
    public func prefixes(_ namespace: String) -> [String] {
        var out: [String] = []
        for (name, value) in attributes(in: utf8[...]) where name.hasPrefix("xmlns:") && value == namespace {
            let p = String(name.dropFirst(6))
            if !out.contains(p) { out.append(p) }
        }
        return out
    }

    /// The text of `namespace`'s property `name`: an attribute's value or a simple element's text.
    public func value(_ namespace: String, _ name: String) -> String? {
        values(namespace, name).first
    }

    /// Every occurrence of the property in document order (one per Dynamic Depth camera, item…).
    public func values(_ namespace: String, _ name: String) -> [String] {
        occurrences(namespace, name).map(\.value)
    }

    /// Every occurrence with its byte offset in the packet (to tell which list item holds it).
    public func occurrences(_ namespace: String, _ name: String) -> [(offset: Int, value: String)] {
        var found: [(Int, String)] = []
        for p in prefixes(namespace) {
            let qname = Array("\(p):\(name)".utf8)
            var i = 0
            while let at = find(qname, from: i) {
                i = at + qname.count
                guard at > 0, i < utf8.count else { continue }
                let before = utf8[at - 1], after = utf8[i]
                if before == UInt8(ascii: "<"), after == UInt8(ascii: ">") {
                    // <p:name>text</p:name>
                    let close = Array("</\(p):\(name)>".utf8)
                    guard let end = find(close, from: i + 1) else { continue }
                    let inner = utf8[(i + 1)..<end]
                    if !inner.contains(UInt8(ascii: "<")) {
                        found.append((at, Self.decodeEntities(String(decoding: inner, as: UTF8.self)).trimmingCharacters(in: .whitespacesAndNewlines)))
                    }
                } else if Self.isSpace(before) {
                    // p:name="value" (spaces around '=' allowed)
                    var j = i
                    while j < utf8.count, Self.isSpace(utf8[j]) { j += 1 }
                    guard j < utf8.count, utf8[j] == UInt8(ascii: "=") else { continue }
                    j += 1
                    while j < utf8.count, Self.isSpace(utf8[j]) { j += 1 }
                    guard j < utf8.count, utf8[j] == UInt8(ascii: "\"") || utf8[j] == UInt8(ascii: "'") else { continue }
                    let quote = utf8[j]
                    guard let end = utf8[(j + 1)...].firstIndex(of: quote) else { continue }
                    found.append((at, Self.decodeEntities(String(decoding: utf8[(j + 1)..<end], as: UTF8.self))))
                }
            }
        }
        return found.sorted { $0.0 < $1.0 }.map { (offset: $0.0, value: $0.1) }
    }

    /// The byte ranges of the `rdf:li` items of the property's list (a Dynamic Depth
    /// `Container:Directory`), for matching `occurrences` to items; nil when absent.
    public func itemRanges(_ namespace: String, _ name: String) -> [Range<Int>]? {
        for p in prefixes(namespace) {
            guard let at = find(Array("<\(p):\(name)>".utf8), from: 0),
                  let end = find(Array("</\(p):\(name)>".utf8), from: at) else { continue }
            var starts: [Int] = []
            var i = at
            while let li = find(Array("<rdf:li".utf8), from: i, before: end) {
                starts.append(li)
                i = li + 7
            }
            return starts.indices.map { k in starts[k]..<(k + 1 < starts.count ? starts[k + 1] : end) }
        }
        return nil
    }

    /// The `rdf:li` items of the property's `rdf:Seq` / `rdf:Bag` / `rdf:Alt` (nil when absent).
    public func sequence(_ namespace: String, _ name: String) -> [String]? {
        for p in prefixes(namespace) {
            guard let at = find(Array("<\(p):\(name)>".utf8), from: 0),
                  let end = find(Array("</\(p):\(name)>".utf8), from: at) else { continue }
            let body = utf8[at..<end]
            var items: [String] = []
            var i = body.startIndex
            while let li = find(Array("<rdf:li".utf8), from: i, before: end) {
                guard let gt = utf8[li..<end].firstIndex(of: UInt8(ascii: ">")),
                      let close = find(Array("</rdf:li>".utf8), from: gt, before: end) else { break }
                items.append(Self.decodeEntities(String(decoding: utf8[(gt + 1)..<close], as: UTF8.self))
                    .trimmingCharacters(in: .whitespacesAndNewlines))
                i = close
            }
            return items
        }
        return nil
    }

    public func double(_ namespace: String, _ name: String) -> Double? {
        value(namespace, name).flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    public func doubles(_ namespace: String, _ name: String) -> [Double]? {
        guard let s = sequence(namespace, name) else { return nil }
        let d = s.compactMap { Double($0) }
        return d.count == s.count ? d : nil
    }

    // MARK: - Scanning

    private func find(_ needle: [UInt8], from: Int, before limit: Int? = nil) -> Int? {
        let end = min(limit ?? utf8.count, utf8.count)
        guard !needle.isEmpty, end - needle.count >= from else { return nil }
        var i = max(from, 0)
        let first = needle[0]
        while i <= end - needle.count {
            if utf8[i] == first {
                var k = 1
                while k < needle.count, utf8[i + k] == needle[k] { k += 1 }
                if k == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// Every `name="value"` pair in the text (declarations included), in order.
    private func attributes(in s: ArraySlice<UInt8>) -> [(String, String)] {
        var out: [(String, String)] = []
        let xmlns = Array("xmlns:".utf8)
        var i = s.startIndex
        while let at = find(xmlns, from: i) {
            var j = at + xmlns.count
            let nameStart = at
            while j < utf8.count, !Self.isSpace(utf8[j]), utf8[j] != UInt8(ascii: "=") { j += 1 }
            let name = String(decoding: utf8[nameStart..<j], as: UTF8.self)
            while j < utf8.count, Self.isSpace(utf8[j]) { j += 1 }
            i = j
            guard j < utf8.count, utf8[j] == UInt8(ascii: "=") else { continue }
            j += 1
            while j < utf8.count, Self.isSpace(utf8[j]) { j += 1 }
            guard j < utf8.count, utf8[j] == UInt8(ascii: "\"") || utf8[j] == UInt8(ascii: "'") else { continue }
            let quote = utf8[j]
            guard let end = utf8[(j + 1)...].firstIndex(of: quote) else { break }
            out.append((name, String(decoding: utf8[(j + 1)..<end], as: UTF8.self)))
            i = end + 1
        }
        return out
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d }

    static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = "", i = s.startIndex
        while i < s.endIndex {
            if s[i] == "&", let semi = s[i...].firstIndex(of: ";"), s.distance(from: i, to: semi) <= 10 {
                let entity = s[s.index(after: i)..<semi]
                var replacement: String?
                switch entity {
                case "amp": replacement = "&"
                case "lt": replacement = "<"
                case "gt": replacement = ">"
                case "quot": replacement = "\""
                case "apos": replacement = "'"
                default:
                    if entity.hasPrefix("#x"), let v = UInt32(entity.dropFirst(2), radix: 16), let u = Unicode.Scalar(v) {
                        replacement = String(Character(u))
                    } else if entity.hasPrefix("#"), let v = UInt32(entity.dropFirst()), let u = Unicode.Scalar(v) {
                        replacement = String(Character(u))
                    }
                }
                if let replacement {
                    out += replacement
                    i = s.index(after: semi)
                    continue
                }
            }
            out.append(s[i])
            i = s.index(after: i)
        }
        return out
    }
}
