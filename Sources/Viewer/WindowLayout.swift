/// The window's one layout: the docked panel, the picture's area and the status line all take
/// their rectangles from here, so none runs under another. (Issue 34: the status line was drawn
/// from x 8 across the whole window, under the panel, cut at the window's edge, and covered the
/// panel's last rows.) The status line spans the width left of the panel, in at most
/// `statusRows` rows at the bottom; text longer than that is shortened at a word (`StatusLine`),
/// and the whole text shows while the pointer is on it (its parts are in the panel's Status section).
struct WindowLayout: Equatable {
    struct Rect: Equatable {
        var x: Float, y: Float, width: Float, height: Float
        var maxX: Float { x + width }
        var maxY: Float { y + height }

        func intersects(_ o: Rect) -> Bool { x < o.maxX && o.x < maxX && y < o.maxY && o.y < maxY }
    }

    /// Overlay text's distance from the window's (or the panel's) edge, and one overlay row's height.
    static let margin: Float = 8
    static let rowHeight: Float = 22
    /// The status line wraps into at most this many rows; the rest is shortened (`StatusLine`).
    static let maxStatusRows = 2
    /// A window lower than this keeps the status line to one row, leaving the picture room.
    static let twoStatusRowsFromHeight: Float = 600

    let windowWidth: Float, windowHeight: Float
    /// The docked panel: at the right edge, full height; nil when hidden (F1).
    let panel: Rect?
    /// Where the picture is letterboxed (2D: left of the panel; 3D: the whole window, the panel over it).
    let picture: Rect

    init(windowWidth: Float, windowHeight: Float, showPanel: Bool, twoD: Bool) {
        self.windowWidth = windowWidth
        self.windowHeight = windowHeight
        let pw = Self.panelWidth(windowWidth: windowWidth)
        panel = showPanel ? Rect(x: windowWidth - pw, y: 0, width: pw, height: windowHeight) : nil
        picture = Rect(x: 0, y: 0, width: showPanel && twoD ? windowWidth - pw : windowWidth, height: windowHeight)
    }

    /// The docked panel's width in a window `windowWidth` wide: 360 px, at most half the window.
    static func panelWidth(windowWidth: Float) -> Float { min(360, max(0, windowWidth / 2).rounded(.down)) }

    /// The width the status line's text may take: from the left margin to a margin short of the panel
    /// (or of the window's right edge).
    var statusWidth: Float { max(0, (panel?.x ?? windowWidth) - 2 * Self.margin) }

    /// How many rows the status line may take here: two in a window 600 px high or more, else one.
    var statusRows: Int { windowHeight >= Self.twoStatusRowsFromHeight ? Self.maxStatusRows : 1 }

    /// The status line's rectangle for `rows` rows of text, at the bottom (the first row's text at
    /// `y`, one `rowHeight` apart; `overlay`'s dark box reaches 4 px around the text, inside it).
    func status(rows: Int) -> Rect {
        let n = Float(max(rows, 1))
        return Rect(x: Self.margin, y: windowHeight - n * Self.rowHeight, width: statusWidth, height: n * Self.rowHeight)
    }

    /// Where the lowest notice goes, above a status line of `rows` rows.
    func noticesBottom(statusRows rows: Int) -> Float { status(rows: rows).y - 26 }
}

/// The status line fitted to its width: rows broken where its parts meet (two spaces), at most
/// `WindowLayout.statusRows`; the last row shortened at a word with "..." when the text is
/// longer. Refitted only when the text (once a second) or the width changes, never per frame.
struct StatusLine {
    /// The whole text (shown on hover), the width it was fitted to, and the rows drawn.
    private(set) var text = ""
    private(set) var width: Float = -1
    private(set) var rows: [String] = []
    /// Each row's width in pixels as measured when fitted (`--log-ui` prints them).
    private(set) var rowWidths: [Float] = []
    /// The rows do not hold the whole text (the hover text and the panel do).
    private(set) var shortened = false

    private(set) var maxRows = 0

    /// Refits when `text`, `width` or `maxRows` changed; true when it did.
    mutating func fit(_ text: String, width: Float, maxRows: Int, measure: (String) -> Float) -> Bool {
        guard text != self.text || width != self.width || maxRows != self.maxRows else { return false }
        self.text = text
        self.width = width
        self.maxRows = maxRows
        (rows, shortened) = Self.wrap(text, width: width, maxRows: maxRows, measure: measure)
        rowWidths = rows.map(measure)
        return true
    }

    static let ellipsis = "..."

    /// `text` in at most `maxRows` rows no wider than `width` (as `measure` says): each row ends
    /// where two parts meet when one does within the width, else at a space, else at a character;
    /// when the text does not fit, the last row ends at a word followed by "..." (true).
    static func wrap(_ text: String, width: Float, maxRows: Int, measure: (String) -> Float) -> (rows: [String], shortened: Bool) {
        var rows: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty && rows.count < maxRows {
            rest = rest.drop { $0 == " " }
            // A row after the first does not start with the parts' "|" separator.
            if !rows.isEmpty, rest.hasPrefix("| ") { rest = rest.dropFirst(2) }
            if rest.isEmpty { break }
            let last = rows.count == maxRows - 1
            if measure(String(rest)) <= width { rows.append(String(rest)); rest = ""; break }
            if last {
                // The last row: as much as fits with "..." after it, ending at a word.
                let head = longestPrefix(of: rest, width: width, suffix: " " + ellipsis, measure: measure)
                if !head.isEmpty { rows.append(String(head) + " " + ellipsis) } else if measure(ellipsis) <= width { rows.append(ellipsis) }
                return (rows, true)
            }
            let head = longestPrefix(of: rest, width: width, suffix: "", measure: measure)
            if head.isEmpty { break }
            rows.append(String(head))
            rest = rest[head.endIndex...]
        }
        return (rows, !rest.drop { $0 == " " }.isEmpty)
    }

    /// The longest start of `s` that, with `suffix`, measures at most `width`: ending before two
    /// spaces (between parts) if one does, else before a space (between words), else anywhere.
    private static func longestPrefix(of s: Substring, width: Float, suffix: String, measure: (String) -> Float) -> Substring {
        func fits(_ end: String.Index) -> Bool { measure(String(s[..<end]) + suffix) <= width }
        var partEnds: [String.Index] = [], wordEnds: [String.Index] = []
        var i = s.startIndex
        while i < s.endIndex {
            let next = s.index(after: i)
            if s[i] == " ", i > s.startIndex, s[s.index(before: i)] != " " {
                wordEnds.append(i)
                if next < s.endIndex, s[next] == " " { partEnds.append(i) }
            }
            i = next
        }
        if let end = partEnds.last(where: fits) { return s[..<end] }
        if let end = wordEnds.last(where: fits) { return s[..<end] }
        var end = s.startIndex
        while end < s.endIndex, fits(s.index(after: end)) { end = s.index(after: end) }
        return s[..<end]
    }
}
